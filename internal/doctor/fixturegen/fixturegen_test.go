package fixturegen

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testdata = "../../../testdata"

// snapshotTree describes a tree: each path's kind and contents.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[rel] = "link " + target
			return err
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			out[rel] = "file " + string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Regenerating testdata/doctor must give the committed tree, byte for
// byte: a fixture edited by hand, or code changed without regenerating,
// fails here. Run `go generate ./internal/doctor/...` to regenerate.
func TestRegeneratingChangesNothing(t *testing.T) {
	out := t.TempDir()
	if err := Write(testdata, out); err != nil {
		t.Fatal(err)
	}
	cases, err := Cases(testdata)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		rel := filepath.Join(c.Check, c.Name)
		want := snapshotTree(t, filepath.Join(testdata, "doctor", rel))
		got := snapshotTree(t, filepath.Join(out, rel))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s differs from what the generator writes (-committed +generated):\n%s", rel, diff)
		}
	}
}

// Every case directory under testdata/doctor comes from the generator.
func TestEveryCaseIsGenerated(t *testing.T) {
	cases, err := Cases(testdata)
	if err != nil {
		t.Fatal(err)
	}
	gen := map[string]bool{}
	for _, c := range cases {
		gen[filepath.Join(c.Check, c.Name)] = true
	}
	checks, err := os.ReadDir(filepath.Join(testdata, "doctor"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range checks {
		if !ch.IsDir() {
			continue
		}
		names, err := os.ReadDir(filepath.Join(testdata, "doctor", ch.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if rel := filepath.Join(ch.Name(), n.Name()); n.IsDir() && !gen[rel] {
				t.Errorf("testdata/doctor/%s is not written by fixturegen: add it to Cases", rel)
			}
		}
	}
}
