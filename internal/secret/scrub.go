// Package secret finds secrets in what devctl is about to store or show
// (snapshots, history and other state files, the run report) by name and
// by the structure of the value, and replaces them with Withheld.
//
// By name: a variable, option or key whose name looks secret (Name). By
// value structure (Scrub), wherever the value stands:
//   - HTTP authentication: an Authorization, Proxy-Authorization or Cookie
//     header (or any "X-Api-Key: ..."-style header whose name looks
//     secret), "Bearer <token>", and "Basic <base64>" whose payload decodes
//     to user:password (RFC 7617);
//   - URLs: userinfo (https://user:pass@host), query parameters that carry
//     credentials (token=, access_token=, sig=, X-Amz-Signature=),
//     and webhook URLs whose path is the credential (hooks.slack.com);
//   - tokens with a well-known prefix: GitHub, Hugging Face, OpenAI and
//     Anthropic sk-, Stripe sk_/rk_ live and test keys, Slack xox?-, AWS
//     key ids, GitLab (glpat-, glrt-, gldt-, ... every prefix GitLab
//     documents), npm, PyPI, Google; JSON Web Tokens; PEM private keys;
//   - key=value, --key value, "key": "value" and key: value whose key
//     looks secret (kernel command lines, mount options, flags);
//   - and, whatever its surroundings, a high-entropy word: 24 or more
//     letters and digits mixing upper case, lower case and digits the way
//     generated tokens do (Random).
//
// The rules err towards withholding: a masked path or flag costs a bug
// report a detail, a kept token costs the user their account. Sources for
// every shape are listed in shapes.go.
package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// Withheld replaces every secret value.
const Withheld = "[withheld]"

// tokenPattern matches values whose shape alone marks them as secrets;
// tokenTriggers are substrings one of which every match contains, checked
// first because most text holds none and a regexp costs far more than a
// substring search.
var tokenPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:` +
		`gh[pousr]_[A-Za-z0-9]{16,}` +
		`|github_pat_[A-Za-z0-9_]{16,}` +
		`|hf_[A-Za-z0-9]{16,}` +
		`|sk-[A-Za-z0-9_-]{16,}` +
		`|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}` +
		`|xox[abposr]-[A-Za-z0-9-]{10,}` +
		`|(?:AKIA|ASIA)[A-Z0-9]{16}` +
		`|gl(?:pat|oas|dt|rtr|rt|cbt|ptt|ft|imt|agent|wt|soat|ffct)-[A-Za-z0-9_-]{16,}(?:\.[A-Za-z0-9_-]+)*` +
		`|npm_[A-Za-z0-9]{30,}` +
		`|pypi-[A-Za-z0-9_-]{40,}` +
		`|AIza[0-9A-Za-z_-]{30,}` +
		`|ya29\.[0-9A-Za-z_-]{16,}` +
		`|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*` +
		`)` +
		`|(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{12,}=*`)
})

var tokenTriggers = [][]byte{
	[]byte("gh"), []byte("hf_"), []byte("sk-"), []byte("sk_"), []byte("rk_"), []byte("xox"),
	[]byte("AKIA"), []byte("ASIA"), []byte("gl"), []byte("npm_"), []byte("pypi-"), []byte("AIza"), []byte("ya29."), []byte("eyJ"),
	[]byte("earer"), []byte("EARER"),
}

// basicPattern matches the Basic scheme's credentials; submatch 1 is the
// base64 payload, which must decode to user:password to count.
var basicPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bbasic[ \t]+([A-Za-z0-9+/]{4,}={0,2})`)
})

// webhookPattern matches the credential path of a webhook URL (the URL is
// the secret: whoever has it can post); submatch 1 is what is kept.
var webhookPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(\bhooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/-]+`)
})

// pemPattern matches a PEM private key block (or its start, when cut).
var pemPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|\z)`)
})

// userinfoPattern matches the userinfo of a URL; submatch 1 is the scheme.
var userinfoPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s"'<>\\]+@`)
})

// optionPattern matches "--key value" (submatch 1 the option, 2 the value)
// and jsonPattern "key": "value" (1 the key, 2 the value).
var (
	optionPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|\s)(--?[A-Za-z][A-Za-z0-9_.-]*)[ \t]+([^\s\x00-][^\s\x00]*)`)
	})
	jsonPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`"([A-Za-z][A-Za-z0-9_.-]*)"[ \t]*:[ \t]*"((?:[^"\\\n]|\\.)*)"`)
	})
)

var withheld = []byte(Withheld)

// Scrub returns s with every secret-shaped value replaced by Withheld.
// Text without secrets comes back unchanged; Scrub(Scrub(s)) == Scrub(s).
func Scrub(s string) string {
	b := ScrubBytes([]byte(s))
	return string(b)
}

// ScrubBytes is Scrub for bytes. It returns b itself when nothing matched.
// It works line by line (a PEM block aside) so that its cost stays linear
// in the input and small for lines that hold no trigger.
func ScrubBytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	src := b
	if bytes.Contains(b, []byte("PRIVATE KEY-----")) {
		src = pemPattern().ReplaceAll(b, withheld)
	}
	var out []byte
	changed := len(src) != len(b)
	for line := range bytes.Lines(src) {
		l := scrubLine(line)
		if len(l) != len(line) || &l[0] != &line[0] {
			changed = true
		}
		out = append(out, l...)
	}
	if !changed {
		return b
	}
	return out
}

func scrubLine(l []byte) []byte {
	if bytes.IndexByte(l, ':') >= 0 {
		l = maskHeaders(l)
	}
	for _, t := range tokenTriggers {
		if bytes.Contains(l, t) {
			l = tokenPattern().ReplaceAll(l, withheld)
			break
		}
	}
	if bytes.Contains(l, []byte("asic")) || bytes.Contains(l, []byte("ASIC")) {
		l = maskBasic(l)
	}
	if bytes.Contains(l, []byte("://")) && bytes.IndexByte(l, '@') >= 0 {
		l = userinfoPattern().ReplaceAll(l, []byte("${1}"+Withheld+"@"))
	}
	if bytes.Contains(l, []byte("hooks.")) || bytes.Contains(l, []byte("HOOKS.")) {
		l = maskWebhooks(l)
	}
	if bytes.IndexByte(l, '=') >= 0 {
		l = maskKeyValues(l)
	}
	if bytes.IndexByte(l, '-') >= 0 {
		l = maskPairs(l, optionPattern())
	}
	if bytes.IndexByte(l, '"') >= 0 {
		l = maskPairs(l, jsonPattern())
	}
	return maskRandom(l)
}

// knownHeaders are HTTP header names that always carry a credential,
// whatever Name says of them.
var knownHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// maskHeaders masks the value of "Name: value" (to the end of the line or
// a quote) when Name is an HTTP authentication header, or a name that
// looks secret and is compound (X-Api-Key, api_key, X-Auth-Token): a bare
// "auth:" or "session:" in a log line is left alone. It walks the colons
// once, so its cost stays linear in the line.
func maskHeaders(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != ':' {
			continue
		}
		ne := i
		for ne > last && (b[ne-1] == ' ' || b[ne-1] == '\t') {
			ne--
		}
		ns := ne
		for ns > last && headerByte(b[ns-1]) {
			ns--
		}
		if ns == ne || !isLetter(b[ns]) || !secretHeader(string(b[ns:ne])) {
			continue
		}
		vs := i + 1
		for vs < len(b) && (b[vs] == ' ' || b[vs] == '\t') {
			vs++
		}
		ve := vs
		for ve < len(b) && b[ve] != '\r' && b[ve] != '\n' && b[ve] != '"' && b[ve] != '\'' {
			ve++
		}
		for ve > vs && (b[ve-1] == ' ' || b[ve-1] == '\t') {
			ve--
		}
		if ve == vs || string(b[vs:ve]) == Withheld {
			continue
		}
		out = append(out, b[last:vs]...)
		out = append(out, withheld...)
		last = ve
		i = ve - 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func headerByte(c byte) bool { return alnum(c) || c == '-' || c == '_' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func secretHeader(name string) bool {
	for _, h := range knownHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return strings.ContainsAny(name, "-_") && Name(name)
}

// maskBasic masks "Basic <payload>" when the payload is standard base64 of
// printable text holding a colon: the user-id:password of RFC 7617. "basic
// information" and other prose are left alone.
func maskBasic(b []byte) []byte {
	var out []byte
	last := 0
	for _, m := range basicPattern().FindAllSubmatchIndex(b, -1) {
		dec, err := base64.StdEncoding.DecodeString(string(b[m[2]:m[3]]))
		if err != nil || !bytes.Contains(dec, []byte(":")) || !printable(dec) {
			continue
		}
		out = append(out, b[last:m[0]]...)
		out = append(out, withheld...)
		last = m[1]
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

func maskWebhooks(b []byte) []byte {
	return webhookPattern().ReplaceAll(b, []byte("${1}"+Withheld))
}

// maskPairs masks submatch 2 of each match of re whose submatch 1 (a key,
// leading dashes aside) looks secret.
func maskPairs(b []byte, re *regexp.Regexp) []byte {
	var out []byte
	last := 0
	for _, m := range re.FindAllSubmatchIndex(b, -1) {
		ks, ke, vs, ve := m[2], m[3], m[4], m[5]
		if vs == ve || !secretValue(b[ks:ke], b[vs:ve]) {
			continue
		}
		out = append(out, b[last:vs]...)
		out = append(out, withheld...)
		last = ve
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func secretValue(key, value []byte) bool {
	return string(value) != Withheld && Name(string(bytes.TrimLeft(key, "-")))
}

// queryKeys are URL query parameters that carry a credential though their
// name does not look secret: the signature of an Azure shared access
// signature (sig).
var queryKeys = map[string]bool{"sig": true}

// maskKeyValues masks the value of every key=value whose key looks secret.
// The key is the run of letters, digits, '_', '.' and '-' before '='; the
// value runs to the next space, comma, semicolon, '&', quote or NUL, so
// "root=UUID=1" is one pair and "a=1,password=x" two.
func maskKeyValues(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '=' {
			continue
		}
		ks := i
		for ks > 0 && keyByte(b[ks-1]) {
			ks--
		}
		ve := i + 1
		for ve < len(b) && !valueEnd(b[ve]) {
			ve++
		}
		query := ks > 0 && (b[ks-1] == '?' || b[ks-1] == '&') && queryKeys[strings.ToLower(string(b[ks:i]))]
		if ks < i && ve > i+1 && (secretValue(b[ks:i], b[i+1:ve]) || query && string(b[i+1:ve]) != Withheld) {
			out = append(out, b[last:i+1]...)
			out = append(out, withheld...)
			last = ve
		}
		i = ve - 1
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

func valueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ';', '&', '"', '\'', 0:
		return true
	}
	return false
}

// Args masks secrets in a program's arguments: each argument by value
// shape, and the argument after a secret-looking option ("--password x").
// A positional word that only looks secret ("token") is kept.
func Args(args []string) []string {
	out := make([]string, len(args))
	maskNext := false
	for i, a := range args {
		if maskNext {
			out[i], maskNext = Withheld, false
			continue
		}
		out[i] = Scrub(a)
		if len(a) > 1 && a[0] == '-' && !strings.Contains(a, "=") && Name(strings.TrimLeft(a, "-")) {
			maskNext = true
		}
	}
	return out
}

// Cmdline masks secrets in a NUL-separated command line
// (/proc/<pid>/cmdline) argument by argument, as Args does; a kernel
// command line (/proc/cmdline, one line of space-separated words) is
// scrubbed word by word as text.
func Cmdline(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	if bytes.IndexByte(b, 0) < 0 {
		return ScrubBytes(b)
	}
	trail := b[len(b)-1] == 0
	if trail {
		b = b[:len(b)-1]
	}
	parts := bytes.Split(b, []byte{0})
	args := make([]string, len(parts))
	for i, p := range parts {
		args[i] = string(p)
	}
	var out []byte
	for i, a := range Args(args) {
		if i > 0 {
			out = append(out, 0)
		}
		out = append(out, a...)
	}
	if trail {
		out = append(out, 0)
	}
	return out
}

// ScrubJSON masks secret-shaped values in every string of a JSON document
// (keys are names devctl chose and are kept). A document that does not
// decode, or holds no secret, comes back as it was.
func ScrubJSON(doc []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return doc
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case string:
			if s := Scrub(t); s != t {
				changed = true
				return s
			}
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return doc
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return doc
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
