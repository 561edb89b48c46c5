// Package secret finds secrets in what devctl is about to store (snapshots,
// history and other state files) by name and by the shape of the value, and
// replaces them with Withheld.
//
// By name: a variable, option or key whose name looks secret (Name). By
// value shape (Scrub), wherever the value stands: tokens with a known
// prefix (GitHub ghp_/gho_/github_pat_, Hugging Face hf_, OpenAI and
// Anthropic sk-, Slack xox?-, AWS AKIA/ASIA key ids, GitLab glpat-, npm_,
// pypi-, Google AIza and ya29.), JSON Web Tokens, "Bearer <token>", PEM
// private keys, the userinfo of a URL (https://user:pass@host), and
// key=value, --key value and "key": "value" pairs whose key looks secret
// (kernel command lines, mount options, flags inside XLA_FLAGS, ...).
//
// The rules err towards withholding: a masked path or flag costs a bug
// report a detail, a kept token costs the user their account.
package secret

import (
	"bytes"
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
		`|xox[abposr]-[A-Za-z0-9-]{10,}` +
		`|(?:AKIA|ASIA)[A-Z0-9]{16}` +
		`|glpat-[A-Za-z0-9_-]{16,}` +
		`|npm_[A-Za-z0-9]{30,}` +
		`|pypi-[A-Za-z0-9_-]{40,}` +
		`|AIza[0-9A-Za-z_-]{30,}` +
		`|ya29\.[0-9A-Za-z_-]{16,}` +
		`|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*` +
		`)` +
		`|(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{12,}=*`)
})

var tokenTriggers = [][]byte{
	[]byte("gh"), []byte("hf_"), []byte("sk-"), []byte("xox"), []byte("AKIA"), []byte("ASIA"), []byte("glpat-"),
	[]byte("npm_"), []byte("pypi-"), []byte("AIza"), []byte("ya29."), []byte("eyJ"), []byte("earer"), []byte("EARER"),
}

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
	for _, t := range tokenTriggers {
		if bytes.Contains(l, t) {
			l = tokenPattern().ReplaceAll(l, withheld)
			break
		}
	}
	if bytes.Contains(l, []byte("://")) && bytes.IndexByte(l, '@') >= 0 {
		l = userinfoPattern().ReplaceAll(l, []byte("${1}"+Withheld+"@"))
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
	return l
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
		if ks < i && ve > i+1 && secretValue(b[ks:i], b[i+1:ve]) {
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
