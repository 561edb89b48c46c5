package hfhub

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/devctl/devctl/internal/secret"
)

// endpoint is HF_ENDPOINT parsed once: every URL devctl asks the Hub is
// built from it (file), and every message names it by display, which
// holds no credential.
type endpoint struct {
	base *url.URL
	// display is scheme://host[:port]/path: no userinfo, no query.
	display string
	// origin is the scheme, host and port the token may be sent to.
	origin string
}

// parseEndpoint reads HF_ENDPOINT: an http or https base URL with a host,
// and no query or fragment (a token belongs in HF_TOKEN, not in the URL
// devctl would have to put in the middle of every request path). Its
// userinfo, if any, is kept for the requests (a private mirror behind
// basic authentication) and never shown.
func parseEndpoint(raw string) (*endpoint, error) {
	want := "want a base URL such as " + DefaultEndpoint
	u, err := url.Parse(raw)
	if err != nil {
		// url's own error quotes the whole value, userinfo and all.
		return nil, failf(ErrBadEndpoint, "HF_ENDPOINT is not a URL: %s", want)
	}
	shown := displayURL(u)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, failf(ErrBadEndpoint, "HF_ENDPOINT %s: %s (http or https)", shown, want)
	case u.Host == "" || u.Opaque != "":
		return nil, failf(ErrBadEndpoint, "HF_ENDPOINT %s: %s (with a host)", shown, want)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, failf(ErrBadEndpoint, "HF_ENDPOINT %s has a query or fragment: %s; put a token in HF_TOKEN", shown, want)
	}
	base := *u
	base.Path = strings.TrimRight(u.Path, "/")
	base.RawPath = strings.TrimRight(u.EscapedPath(), "/")
	if base.RawPath == base.Path {
		base.RawPath = ""
	}
	return &endpoint{base: &base, display: displayURL(&base), origin: origin(&base)}, nil
}

// displayURL is u without userinfo, query or fragment.
func displayURL(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return strings.TrimRight(v.String(), "/")
}

// origin is scheme://host:port with the scheme's default port spelled out,
// so https://h and https://h:443 are one origin and https://h:8443 another.
func origin(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(host), port)
}

// file is the one URL builder for the Hub: BASE/ORG/NAME/resolve/REVISION/FILE,
// each part one path segment, escaped (a revision such as refs/pr/1 is
// one segment, refs%2Fpr%2F1, as huggingface_hub sends it).
func (e *endpoint) file(id, revision, file string) *url.URL {
	org, name, _ := strings.Cut(id, "/")
	segs := []string{org, name, "resolve", revision, file}
	u := *e.base
	raw := make([]string, len(segs))
	for i, s := range segs {
		raw[i] = url.PathEscape(s)
	}
	u.Path = e.base.Path + "/" + strings.Join(segs, "/")
	u.RawPath = e.base.EscapedPath() + "/" + strings.Join(raw, "/")
	return &u
}

// shownFile is file's URL as messages and Files.From show it.
func (e *endpoint) shownFile(id, revision, file string) string {
	return displayURL(e.file(id, revision, file))
}

// client is c (or a default client) whose requests carry the token only
// to the endpoint's origin: the Authorization header is added per request
// by the transport, so a redirect to another host, port or scheme (where
// net/http would still forward a header set on the first request to the
// same host on another port) goes without it.
func (e *endpoint) client(c *http.Client, token string) *http.Client {
	if c == nil {
		c = &http.Client{}
	}
	if token == "" {
		return c
	}
	cc := *c
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cc.Transport = &bearer{base: base, token: token, origin: e.origin}
	return &cc
}

type bearer struct {
	base   http.RoundTripper
	token  string
	origin string
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	if origin(req.URL) != b.origin {
		return b.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// redact withholds from err's message every credential Fetch was given
// (the token, the endpoint's userinfo and query), literally, then by
// shape (secret.Scrub), whatever produced the message.
func redact(err error, o Options) error {
	msg := err.Error()
	var lits []string
	if o.Token != "" {
		lits = append(lits, o.Token)
	}
	if u, perr := url.Parse(o.Endpoint); perr == nil {
		if u.User != nil {
			lits = append(lits, u.User.String(), u.User.Username())
			if p, ok := u.User.Password(); ok {
				lits = append(lits, p)
			}
		}
		if u.RawQuery != "" {
			lits = append(lits, u.RawQuery)
		}
	}
	clean := msg
	for _, l := range lits {
		if len(l) >= 6 { // a shorter one cannot be told from ordinary words; Scrub still sees its shape
			clean = strings.ReplaceAll(clean, l, secret.Withheld)
		}
	}
	clean = secret.Scrub(clean)
	if clean == msg {
		return err
	}
	var he *hubError
	if errors.As(err, &he) {
		return &hubError{kind: he.kind, msg: clean}
	}
	return errors.New(clean)
}
