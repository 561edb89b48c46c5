// Package i18n holds devctl's user-facing messages as data: an id, a title,
// a one-paragraph explanation and ordered fixes, per language. Doctor
// findings and log explanations share it so that every sentence a person
// reads can be rendered, translated and tested in one place.
//
// A message that reports a measured state rather than explaining a log (a
// doctor finding) carries a one-line Detail template instead of, or beside,
// a Title; Message.Render fills it like the other texts.
//
// A Catalog maps (language, id) to a Message. Lookup falls back from the
// asked language to English, and from a dotted sub-id ("no_gpu_found.cpu_build")
// to its parent ("no_gpu_found"), so a translation or a refinement can be
// added later without breaking callers. Texts may hold {placeholders} that
// Render fills; a part written as [[ ... ]] is kept only when every
// placeholder inside it has a value, so one sentence serves logs with and
// without numbers.
package i18n

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// English is the fallback language of every catalogue.
const English = "en"

// Polish is the second language devctl ships (the original device-manager
// design spoke Polish to its users).
const Polish = "pl"

// Message is one finding or explanation in one language.
type Message struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Explanation string `json:"explanation"`
	// Detail is a one-line finding with its evidence ("kernel module {kernel}
	// but user-space library {library}"): what doctor's checks report, where
	// a log explanation has a title and a paragraph.
	Detail string   `json:"detail,omitempty"`
	Fixes  []string `json:"fixes,omitempty"`
}

// ErrInvalid marks a message that cannot enter a catalogue.
var ErrInvalid = errors.New("invalid message")

// Catalog is a set of messages per language. The zero value is not usable;
// call New. A Catalog is safe for concurrent use.
type Catalog struct {
	mu   sync.RWMutex
	msgs map[string]map[string]Message // lang -> id -> message
}

// New returns an empty catalogue.
func New() *Catalog {
	return &Catalog{msgs: map[string]map[string]Message{}}
}

// Add registers messages for lang. An id already present for lang is an
// error (two packages claiming one id is a bug worth hearing about), as is
// an empty id or language, or a message with neither a title nor a detail.
func (c *Catalog) Add(lang string, msgs ...Message) error {
	lang = NormalizeLang(lang)
	if lang == "" {
		return fmt.Errorf("%w: empty language", ErrInvalid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	byID := c.msgs[lang]
	if byID == nil {
		byID = map[string]Message{}
		c.msgs[lang] = byID
	}
	for _, m := range msgs {
		if m.ID == "" || (m.Title == "" && m.Detail == "") {
			return fmt.Errorf("%w: id %q needs an id and a title or a detail", ErrInvalid, m.ID)
		}
		if _, dup := byID[m.ID]; dup {
			return fmt.Errorf("%w: id %q already registered for %q", ErrInvalid, m.ID, lang)
		}
		m.Fixes = append([]string(nil), m.Fixes...)
		byID[m.ID] = m
	}
	return nil
}

// MustAdd is Add for package-level tables known to be valid; it panics on a
// programming error so that a broken table fails its first test.
func (c *Catalog) MustAdd(lang string, msgs ...Message) *Catalog {
	if err := c.Add(lang, msgs...); err != nil {
		panic(err)
	}
	return c
}

// Lookup finds id in lang, then in English; for a dotted id it then tries
// the parent id the same way. ok is false when nothing matched.
func (c *Catalog) Lookup(id, lang string) (Message, bool) {
	lang = NormalizeLang(lang)
	c.mu.RLock()
	defer c.mu.RUnlock()
	for cur := id; cur != ""; cur = parent(cur) {
		for _, l := range []string{lang, English} {
			if m, ok := c.msgs[l][cur]; ok {
				m.Fixes = append([]string(nil), m.Fixes...)
				return m, true
			}
		}
	}
	return Message{}, false
}

// IDs lists the ids known in lang, sorted; tests check catalogues with it.
func (c *Catalog) IDs(lang string) []string {
	lang = NormalizeLang(lang)
	c.mu.RLock()
	defer c.mu.RUnlock()
	ids := make([]string, 0, len(c.msgs[lang]))
	for id := range c.msgs[lang] {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func parent(id string) string {
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		return id[:i]
	}
	return ""
}

// NormalizeLang turns a language tag or a POSIX locale ("pl_PL.UTF-8",
// "pl-PL", "PL") into devctl's two-letter form. "C" and "POSIX" mean
// English; an empty value stays empty so callers can try the next source.
func NormalizeLang(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ".@"); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexAny(s, "_-"); i >= 0 {
		s = s[:i]
	}
	s = strings.ToLower(s)
	switch s {
	case "c", "posix":
		return English
	}
	return s
}

// Locale returns the locale that governs messages, in POSIX precedence:
// LC_ALL, then LC_MESSAGES, then LANG, the first one set and not empty, or
// "" when none is. Only that one decides: a set LC_ALL in a language devctl
// lacks means English, not the LANG under it, so callers Negotiate this
// value rather than all three. lookup is os.LookupEnv or a test's map.
func Locale(lookup func(string) (string, bool)) string {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v, ok := lookup(k); ok && v != "" {
			return v
		}
	}
	return ""
}

// Negotiate picks the first supported language among candidates, in order
// (e.g. the --lang flag, then LC_ALL, LC_MESSAGES and LANG as the caller
// read them), and English when none is supported.
func Negotiate(supported []string, candidates ...string) string {
	for _, cand := range candidates {
		n := NormalizeLang(cand)
		if n == "" {
			continue
		}
		for _, s := range supported {
			if n == s {
				return n
			}
		}
	}
	return English
}

// Render returns m with its placeholders filled from vars.
func (m Message) Render(vars map[string]string) Message {
	out := Message{ID: m.ID, Title: Render(m.Title, vars), Explanation: Render(m.Explanation, vars), Detail: Render(m.Detail, vars)}
	for _, f := range m.Fixes {
		out.Fixes = append(out.Fixes, Render(f, vars))
	}
	return out
}

// Render fills {name} placeholders from vars. A part written [[ ... ]] is
// kept (without the brackets) only when every placeholder directly in it
// has a non-empty value, and dropped otherwise; parts nest, each deciding
// for itself. A placeholder outside any such part with no value renders as
// "?". Unbalanced brackets or braces are left as text: Render never fails,
// because a message must reach the user even when a translation has a typo.
func Render(tmpl string, vars map[string]string) string {
	out, _ := render(tmpl, vars, nil, nil)
	return out
}

// Missing lists the placeholders Render would show as "?" for vars: those
// outside every [[ ]] part with no value, in order, each once. Tests use it
// to prove that a caller provides every value a template needs.
func Missing(tmpl string, vars map[string]string) []string {
	var names []string
	render(tmpl, vars, &names, nil)
	return uniq(names)
}

// Placeholders lists the placeholder names tmpl uses, in [[ ]] parts or not,
// sorted and each once; tests compare a translation's against the original's.
func Placeholders(tmpl string) []string {
	var names []string
	render(tmpl, nil, nil, &names)
	names = uniq(names)
	sort.Strings(names)
	return names
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// render returns the text of tmpl and whether every placeholder at this
// level (not inside nested optional parts) had a value. It appends the
// names without a value at this level to missing, and every name at any
// level to all (either may be nil).
func render(tmpl string, vars map[string]string, missing, all *[]string) (string, bool) {
	var b strings.Builder
	complete := true
	for tmpl != "" {
		i := strings.Index(tmpl, "[[")
		if i < 0 {
			break
		}
		j := matchClose(tmpl[i+2:])
		if j < 0 {
			break
		}
		s, ok := fill(tmpl[:i], vars, missing, all)
		b.WriteString(s)
		complete = complete && ok
		if part, ok := render(tmpl[i+2:i+2+j], vars, nil, all); ok {
			b.WriteString(part)
		}
		tmpl = tmpl[i+2+j+2:]
	}
	s, ok := fill(tmpl, vars, missing, all)
	b.WriteString(s)
	return b.String(), complete && ok
}

// matchClose finds the "]]" closing a part whose "[[" came just before s,
// counting nested parts; -1 if there is none.
func matchClose(s string) int {
	depth := 0
	for i := 0; i+1 < len(s); i++ {
		switch {
		case s[i] == '[' && s[i+1] == '[':
			depth++
			i++
		case s[i] == ']' && s[i+1] == ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		}
	}
	return -1
}

// fill substitutes placeholders; ok is false when one had no value (it
// then renders as "?" and its name goes to missing). Every name goes to all.
func fill(s string, vars map[string]string, missing, all *[]string) (string, bool) {
	if !strings.Contains(s, "{") {
		return s, true
	}
	var b strings.Builder
	ok := true
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		name := s[i+1 : i+j]
		b.WriteString(s[:i])
		if validName(name) && all != nil {
			*all = append(*all, name)
		}
		switch v := vars[name]; {
		case !validName(name):
			b.WriteString(s[i : i+j+1])
		case v != "":
			b.WriteString(v)
		default:
			b.WriteString("?")
			ok = false
			if missing != nil {
				*missing = append(*missing, name)
			}
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String(), ok
}

// validName keeps JSON-looking text such as {"a": 1} out of substitution.
func validName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
