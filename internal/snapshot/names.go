package snapshot

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"
)

// Machine names are bytes: Linux allows any but '/' and NUL, and an old or
// hostile tree has Latin-1 names. JSON strings are UTF-8 (encoding/json
// turns a bad byte into U+FFFD, losing it), so the manifest spells a name
// that is not valid UTF-8 as NUL + "b64:" + its bytes in base64. No real
// path or name contains NUL, so the spelling is unambiguous, and a valid
// UTF-8 name (all of them in practice) is stored as it is. Member names in
// the tar keep the raw bytes.
const rawNamePrefix = "\x00b64:"

var errBadRawName = errors.New("bad encoded name")

func encodeName(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return rawNamePrefix + base64.RawURLEncoding.EncodeToString([]byte(s))
}

func decodeName(s string) (string, error) {
	rest, ok := strings.CutPrefix(s, rawNamePrefix)
	if !ok {
		return s, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || utf8.Valid(b) {
		return "", errBadRawName
	}
	return string(b), nil
}

// mapNames applies f to every machine path and name in m: files,
// listings and their entries, stats, links and their targets, missing
// paths and failed operations.
func (m *Manifest) mapNames(f func(string) (string, error)) error {
	var firstErr error
	do := func(s string) string {
		out, err := f(s)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return out
	}
	keys := func(in map[string]Stat) map[string]Stat {
		out := make(map[string]Stat, len(in))
		for k, v := range in {
			out[do(k)] = v
		}
		return out
	}
	for i, p := range m.Files {
		m.Files[i] = do(p)
	}
	for i, p := range m.Missing {
		m.Missing[i] = do(p)
	}
	for i := range m.Errors {
		m.Errors[i].Path = do(m.Errors[i].Path)
	}
	dirs := make(map[string][]Entry, len(m.Dirs))
	for p, es := range m.Dirs {
		for i := range es {
			es[i].Name = do(es[i].Name)
		}
		dirs[do(p)] = es
	}
	m.Dirs = dirs
	m.Stats, m.Lstats = keys(m.Stats), keys(m.Lstats)
	links := make(map[string]string, len(m.Links))
	for p, t := range m.Links {
		links[do(p)] = do(t)
	}
	m.Links = links
	return firstErr
}
