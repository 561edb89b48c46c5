package snapshot

import (
	"bytes"
	"strings"
	"testing"
)

// TestNonUTF8NamesReplay records a tree whose names are not UTF-8 (Linux
// names are bytes; a hostile or just old tree has Latin-1 names) and
// replays it: every name, read, listing and link must come back byte for
// byte. Synthetic tree.
func TestNonUTF8NamesReplay(t *testing.T) {
	bad := "caf\xe9"
	h := fixtureHost(t, map[string]string{
		"sys/class/x/" + bad + "/name": "latin-1 dir\n",
		"sys/class/x/ok/name":          "ok\n",
	}, nil)
	rec := NewRecorder(h)
	rh := rec.Host()
	if _, err := rh.FS.ReadDir("/sys/class/x"); err != nil {
		t.Fatal(err)
	}
	want, err := rh.FS.ReadFile("/sys/class/x/" + bad + "/name")
	if err != nil {
		t.Fatal(err)
	}
	rh.FS.Stat("/sys/class/x/" + bad)
	rh.FS.ReadFile("/sys/class/x/" + bad + "/missing")
	data := archiveBytes(t, rec, WriteOptions{})
	s, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("replay refused the snapshot: %v", err)
	}
	r := s.Host()
	got, err := r.FS.ReadFile("/sys/class/x/" + bad + "/name")
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("replayed read = %q, %v; want %q", got, err, want)
	}
	es, err := r.FS.ReadDir("/sys/class/x")
	if err != nil || len(es) != 2 || (es[0].Name() != bad && es[1].Name() != bad) {
		names := []string{}
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("replayed listing = %q, %v; want %q among them", names, err, bad)
	}
	if _, err := r.FS.Stat("/sys/class/x/" + bad); err != nil {
		t.Errorf("replayed stat: %v", err)
	}
}

func FuzzNameCodec(f *testing.F) {
	for _, s := range []string{"/sys/class/x", "caf\xe9", "", rawNamePrefix + "Y2Fm6Q", "\x00b64:!!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			decodeName(s) // hostile input: an error or a name, never a panic
			return
		}
		got, err := decodeName(encodeName(s))
		if err != nil || got != s {
			t.Fatalf("round trip of %q: %q, %v", s, got, err)
		}
	})
}
