// Package safetext is devctl's one sanitiser for text that leaves it:
// whatever a machine, a log, a config file or a flag put into a string,
// what devctl prints or writes cannot act on the reader's terminal or
// reorder what they see.
//
// The runes it treats as unsafe (Unsafe) are the C0 and C1 controls and
// DEL (ESC, and so every escape sequence: OSC 52 clipboard writes, title
// changes, CSI), the bidirectional controls (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069: "Trojan Source", CVE-2021-42574) and the
// Unicode line and paragraph separators (U+2028, U+2029).
//
// Each output chooses what it can afford:
//   - text for a terminal (tables, error messages, echoes of a user's
//     value) is Clean: each unsafe rune becomes '?', a tab a space;
//   - JSON is lossless: EscapeJSON writes each unsafe rune as a \uXXXX
//     escape, so a consumer decodes the very string devctl read, and the
//     raw rune never reaches a terminal that cats the file;
//   - YAML likewise escapes them inside double-quoted scalars
//     (internal/output).
package safetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unsafe reports whether r may act on a terminal or reorder text.
func Unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// Clean returns s safe to print on a terminal: each unsafe rune becomes
// '?', a tab a space, invalid UTF-8 U+FFFD. Clean(Clean(s)) == Clean(s).
func Clean(s string) string {
	if safe(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case Unsafe(r):
			return '?'
		}
		return r
	}, s)
}

// safe is the fast path: printable ASCII and valid UTF-8 without an unsafe
// rune need no copy.
func safe(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || Unsafe(r) {
			return false
		}
		i += n
	}
	return true
}

// EscapeJSON rewrites every unsafe rune that encoding/json leaves raw (DEL,
// the C1 controls, the bidirectional controls) in an encoded JSON document
// as a \uXXXX escape; the C0 controls are already escaped inside strings,
// and outside them are JSON's own whitespace. Outside strings a JSON
// document is otherwise ASCII punctuation, so every rune rewritten stands
// inside a string, where the escape decodes to the same rune.
// A document holding none comes back as it was.
func EscapeJSON(doc []byte) []byte {
	return escape(doc)
}

// EscapeQuoted is EscapeJSON for YAML: the caller makes sure that every
// scalar holding an unsafe rune is double-quoted, where YAML reads \uXXXX
// as JSON does.
func EscapeQuoted(doc []byte) []byte { return escape(doc) }

func escape(doc []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(doc); {
		r, n := rune(doc[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(doc[i:])
		}
		if r == 0x7f || r >= utf8.RuneSelf && Unsafe(r) {
			if out == nil {
				out = make([]byte, 0, len(doc)+16)
			}
			out = append(out, doc[last:i]...)
			out = append(out, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
			last = i + n
		}
		i += n
	}
	if out == nil {
		return doc
	}
	return append(out, doc[last:]...)
}

const hex = "0123456789abcdef"

// Contains reports whether s holds an unsafe rune.
func Contains(s string) bool {
	for _, r := range s {
		if Unsafe(r) {
			return true
		}
	}
	return false
}
