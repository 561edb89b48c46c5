package secret

// Where each credential shape comes from (facts read from the providers'
// documentation; the patterns in scrub.go are devctl's own):
//
//   - Basic credentials: RFC 7617 section 2, "Authorization: Basic
//     QWxhZGRpbjpvcGVuIHNlc2FtZQ==" for user-id "Aladdin" and password
//     "open sesame" (https://www.rfc-editor.org/rfc/rfc7617#section-2;
//     the same example is in the HTTP/1.0 draft, section 10).
//   - Stripe: secret keys start sk_live_ / sk_test_ and restricted keys
//     rk_live_ / rk_test_ (https://docs.stripe.com/keys); Stripe's security
//     team gave GitLab the live pattern (sk|rk)_live_ followed by 10 to 128
//     letters and digits (https://gitlab.com/gitlab-org/gitlab/-/issues/458019).
//   - GitLab: the "Token prefixes" table of
//     https://docs.gitlab.com/ee/security/tokens/ lists glpat- (personal,
//     impersonation, project and group access tokens), gloas- (OAuth
//     application secret), gldt- (deploy), glrt- and glrtr- (runner
//     authentication, with a routable form whose payload has '.'-separated
//     parts), glcbt- (CI/CD job), glptt- (trigger), glft- (feed), glimt-
//     (incoming mail), glagent- (agent for Kubernetes), glwt- (workspace),
//     glsoat- (SCIM) and glffct- (feature flags client); runner tokens got
//     glrt- in https://gitlab.com/gitlab-org/gitlab/-/merge_requests/110275.
//   - Slack incoming webhooks: the URL is the credential,
//     https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX
//     in Slack's documentation (https://api.slack.com/messaging/webhooks);
//     bot and user tokens start xoxb-/xoxp-.
//   - Azure shared access signatures carry their signature in sig=: the
//     example https://myaccount.blob.core.windows.net/?restype=service&...&sig=...
//     of https://learn.microsoft.com/en-us/training/modules/configure-storage-security/4-identify-uri-sas-parameters
