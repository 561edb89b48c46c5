package safetext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// The hostile strings of issue 22 and the escape-sequence tests before it:
// U+202E (right-to-left override) in a value, an OSC 52 clipboard write, a
// title change, CSI, a C1 CSI (U+009B), NEL (U+0085), a line separator.
var hostile = []string{
	"NVIDIA A100\u202E08-MXS",
	"\x1b]52;c;ZWNobyBoaQ==\x07",
	"\x1b]0;pwned\x07",
	"\x1b[2J\x1b[H",
	"\u009b31m",
	"a\u0085b",
	"a\u2028b\u2029c",
	"gpu_count==8\u2066\u2069",
}

func TestCleanLeavesNoUnsafeRune(t *testing.T) {
	for _, s := range hostile {
		got := Clean(s)
		if Contains(got) || strings.ContainsRune(got, 0x1b) {
			t.Errorf("Clean(%q) = %q keeps an unsafe rune", s, got)
		}
	}
	if got := Clean("NVIDIA A100-SXM4-80GB, 81920 MiB"); got != "NVIDIA A100-SXM4-80GB, 81920 MiB" {
		t.Errorf("plain text changed: %q", got)
	}
	if got := Clean("a\tb"); got != "a b" {
		t.Errorf("tab: %q", got)
	}
}

func TestEscapeJSONIsLossless(t *testing.T) {
	for _, s := range hostile {
		raw, err := json.Marshal(map[string]string{"name": s})
		if err != nil {
			t.Fatal(err)
		}
		esc := EscapeJSON(raw)
		for _, r := range string(esc) {
			if Unsafe(r) {
				t.Errorf("%s keeps %U raw", esc, r)
			}
		}
		var back map[string]string
		if err := json.Unmarshal(esc, &back); err != nil || back["name"] != s {
			t.Errorf("%s decodes to %q, %v; want %q", esc, back["name"], err, s)
		}
	}
}

// FuzzSanitise: for any text, Clean leaves no unsafe rune and is
// idempotent, and EscapeJSON of its JSON encoding is valid JSON that
// decodes to the same string with no unsafe rune left raw.
func FuzzSanitise(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Clean(s)
		if Contains(c) || Clean(c) != c {
			t.Fatalf("Clean(%q) = %q", s, c)
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		esc := EscapeJSON(raw)
		if !utf8.Valid(esc) {
			t.Fatalf("invalid UTF-8: %q", esc)
		}
		for _, r := range string(esc) {
			if Unsafe(r) {
				t.Fatalf("%q keeps %U raw", esc, r)
			}
		}
		var back string
		if err := json.Unmarshal(esc, &back); err != nil {
			t.Fatalf("%q: %v", esc, err)
		}
		want := string([]rune(s)) // each invalid byte becomes U+FFFD, as encoding/json does
		if back != want {
			t.Fatalf("round trip %q -> %q, want %q", s, back, want)
		}
	})
}
