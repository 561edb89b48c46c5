package secret

import "strings"

// secretWords are name segments that mark a secret wherever they stand.
var secretWords = map[string]bool{
	"TOKEN": true, "TOKENS": true, "SECRET": true, "SECRETS": true,
	"PASSWORD": true, "PASSWORDS": true, "PASSWD": true, "PASS": true, "PASSPHRASE": true,
	"KEY": true, "KEYS": true, "APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true, "CREDS": true,
	"AUTH": true, "COOKIE": true, "COOKIES": true, "SESSION": true, "PRIVATE": true,
	"SIGNATURE": true, "CERT": true, "JWT": true, "BEARER": true,
}

// secretSuffixes mark a segment glued to a secret word at its end
// ("GHTOKEN", "APIKEY", "DBPASSWORD"); secretPrefixes at its start
// ("AUTHORIZATION", "SECRETS", "PASSWORDFILE").
var (
	secretSuffixes = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "CREDENTIALS", "COOKIE", "SESSION"}
	secretPrefixes = []string{"AUTH", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "SESSION", "COOKIE"}
)

// Name reports whether a variable's, option's or key's name looks like it
// holds a secret. Names are split into segments at '_', '-' and '.'; a
// segment is secret when it is one of the secret words, or ends with
// TOKEN/SECRET/PASSWORD/KEY/..., or starts with AUTH/SECRET/PASSWORD/....
// So HF_TOKEN, AWS_SECRET_ACCESS_KEY, OPENAI_API_KEY, GHTOKEN, DB_PASS,
// access_key, SSH_AUTH_SOCK and AUTHORIZATION are secret, while
// KEYBOARD_LAYOUT and TOKENIZERS_PARALLELISM are not. The rule errs towards
// withholding: a withheld value still shows as set.
func Name(name string) bool {
	up := strings.ToUpper(name)
	for _, seg := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if secretWords[seg] {
			return true
		}
		for _, s := range secretSuffixes {
			if strings.HasSuffix(seg, s) {
				return true
			}
		}
		for _, p := range secretPrefixes {
			if strings.HasPrefix(seg, p) {
				return true
			}
		}
	}
	return false
}
