package doctor

import (
	"fmt"
	"sort"
	"strings"
)

// Lang is a message language.
type Lang string

// The languages devctl's messages exist in. English is the default; Polish
// comes from the device-manager design devctl grew from, whose users read
// its messages in Polish.
const (
	English Lang = "en"
	Polish  Lang = "pl"
)

// Langs lists the accepted --lang values.
var Langs = []Lang{English, Polish}

// ParseLang validates a --lang value.
func ParseLang(s string) (Lang, error) {
	v := Lang(strings.ToLower(strings.TrimSpace(s)))
	for _, l := range Langs {
		if v == l {
			return v, nil
		}
	}
	return "", fmt.Errorf("invalid --lang %q: want en or pl", s)
}

// DetectLang picks the language from the locale variables in POSIX
// precedence (LC_ALL, then LC_MESSAGES, then LANG): a value starting with
// "pl" (pl_PL.UTF-8, pl) means Polish, anything else English.
func DetectLang(lookup func(string) (string, bool)) Lang {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v, ok := lookup(k)
		if !ok || v == "" {
			continue
		}
		if strings.HasPrefix(strings.ToLower(v), "pl") {
			return Polish
		}
		return English
	}
	return English
}

// Text is one message in every language. Templates name their values in
// braces ("driver {version}") so a translation may reorder them.
type Text struct {
	EN string
	PL string
}

// In returns the text in lang, falling back to English when a translation
// is missing.
func (t Text) In(lang Lang) string {
	if lang == Polish && t.PL != "" {
		return t.PL
	}
	return t.EN
}

// Message is what a finding says: the detail template and the fix.
type Message struct {
	Detail Text
	Fix    Text
}

// Args are the named values a template refers to.
type Args map[string]string

// Expand fills {name} placeholders from args. An unknown name is left as
// written so a typo in a catalogue shows up in tests rather than vanishing.
func Expand(tmpl string, args Args) string {
	if !strings.Contains(tmpl, "{") || len(args) == 0 {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			break
		}
		name := tmpl[i+1 : i+j]
		if v, ok := args[name]; ok {
			b.WriteString(tmpl[:i])
			b.WriteString(v)
		} else {
			b.WriteString(tmpl[:i+j+1])
		}
		tmpl = tmpl[i+j+1:]
	}
	return b.String()
}

// placeholders lists the {names} a template uses (for catalogue tests).
func placeholders(tmpl string) []string {
	var out []string
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			break
		}
		out = append(out, tmpl[i+1:i+j])
		tmpl = tmpl[i+j+1:]
	}
	sort.Strings(out)
	return out
}
