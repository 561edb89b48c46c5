package state

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type rec struct{ N int }

func TestAppendKeepsTheNewestRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "h.jsonl")
	for i := 0; i < MaxRecords+5; i++ {
		if err := Append(path, rec{i}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxRecords || got[0].N != 5 || got[len(got)-1].N != MaxRecords+4 {
		t.Fatalf("got %d records from %v to %v", len(got), got[0], got[len(got)-1])
	}
}

func TestReadSkipsDamagedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	os.WriteFile(path, []byte("{\"N\":1}\nnot json\n{\"N\":2}\n"), 0o600)
	got, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]rec{{1}, {2}}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestDirPrefersXDGStateHome(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}
	d, err := Dir(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || d != "/s/devctl" {
		t.Fatalf("Dir = %q, %v", d, err)
	}
	delete(env, "XDG_STATE_HOME")
	d, _ = Dir(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if d != "/h/.local/state/devctl" {
		t.Fatalf("Dir = %q", d)
	}
}
