package doctor

import (
	"fmt"
	"sync"

	"github.com/devctl/devctl/internal/explain/i18n"
)

// Lang is a message language, in i18n's two-letter form.
type Lang string

// The languages devctl's messages exist in. English is the default; Polish
// comes from the device-manager design devctl grew from, whose users read
// its messages in Polish.
const (
	English Lang = i18n.English
	Polish  Lang = i18n.Polish
)

// Langs lists the accepted --lang values.
var Langs = []Lang{English, Polish}

func supported() []string {
	out := make([]string, len(Langs))
	for i, l := range Langs {
		out[i] = string(l)
	}
	return out
}

// ParseLang validates a --lang value: a language (en, pl) or a locale
// naming one (pl_PL.UTF-8).
func ParseLang(s string) (Lang, error) {
	v := i18n.NormalizeLang(s)
	for _, l := range Langs {
		if v == string(l) {
			return l, nil
		}
	}
	return "", fmt.Errorf("invalid --lang %q: want en or pl", s)
}

// DetectLang picks the language from the locale variables in POSIX
// precedence (LC_ALL, then LC_MESSAGES, then LANG): the first one set
// decides, and one naming a language devctl lacks means English.
func DetectLang(lookup func(string) (string, bool)) Lang {
	return Lang(i18n.Negotiate(supported(), i18n.Locale(lookup)))
}

// Args are the named values a finding's templates refer to.
type Args map[string]string

// commonPrefix keys the messages any check may return.
const commonPrefix = "common."

// catalog holds every check's texts, built on first use so that commands
// other than doctor pay nothing for it.
var catalog = sync.OnceValue(func() *i18n.Catalog {
	return i18n.New().MustAdd(i18n.English, messagesEN...).MustAdd(i18n.Polish, messagesPL...)
})

// lookup finds id itself in lang or English: never a parent id, which for
// a finding would be its check's title.
func lookup(id string, lang Lang) (i18n.Message, bool) {
	m, ok := catalog().Lookup(id, string(lang))
	return m, ok && m.ID == id
}

// title is a check's title in lang; its id when the catalogue has none.
func title(id string, lang Lang) string {
	if m, ok := lookup(id, lang); ok && m.Title != "" {
		return m.Title
	}
	return id
}

// findingMessage finds a finding's message: the check's own, then the
// common one.
func findingMessage(checkID, key string, lang Lang) (i18n.Message, bool) {
	if m, ok := lookup(checkID+"."+key, lang); ok {
		return m, true
	}
	return lookup(commonPrefix+key, lang)
}

// valueKeys name the English placeholder values checks put in Args and
// Evidence ("none", "unknown", "want true or false"): rendering looks each
// up as "value.<key>" so a Polish detail does not carry English words.
var valueKeys = map[string]string{
	"none":                                "none",
	"unknown":                             "unknown",
	"none set":                            "none_set",
	"want true or false":                  "want_bool",
	"want an absolute directory path":     "want_abs_path",
	"want a fraction in (0, 1], e.g. .75": "want_fraction",
	"want default, platform, bfc or cuda_async": "want_allocator",
}

// localValue is v in lang when it is one of the known placeholder values.
func localValue(v string, lang Lang) string {
	if k, ok := valueKeys[v]; ok {
		if m, ok := lookup("value."+k, lang); ok && m.Detail != "" {
			return m.Detail
		}
	}
	return v
}

// localArgs copies args with known placeholder values in lang.
func localArgs(args Args, lang Lang) Args {
	out := make(Args, len(args))
	for k, v := range args {
		out[k] = localValue(v, lang)
	}
	return out
}

// Fact renders one of this machine's facts shown beside a log explanation
// ("log.fact.<key>" in the catalogue) in lang.
func Fact(key string, args Args, lang Lang) string {
	m, ok := lookup("log.fact."+key, lang)
	if !ok {
		return key
	}
	return m.Render(localArgs(args, lang)).Detail
}

// Catalog is the checks' message catalogue (titles, finding details and
// fixes, machine facts, placeholder values), for renderers and for tests
// that hold every language to the same ids.
func Catalog() *i18n.Catalog { return catalog() }
