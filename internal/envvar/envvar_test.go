package envvar

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{"0,1": "0,1", "expandable_segments:True": "expandable_segments:True", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, "$(rm -rf /)": "'$(rm -rf /)'"} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
