package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/cmd/factory"
	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
)

// TestCommandReferenceUpToDate fails when a command or flag changed
// without `make docs`: docs/commands must be what the tree generates.
func TestCommandReferenceUpToDate(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	cmd := root.NewCmdRoot(factory.New(io, func(string) (string, bool) { return "", false }, "dev"))
	md, man := t.TempDir(), t.TempDir()
	if err := Write(cmd, md, man, time.Unix(0, 0).UTC()); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(md, "*.md"))
	if len(want) < 10 {
		t.Fatalf("only %d markdown pages", len(want))
	}
	committed := filepath.Join("..", "..", "..", "docs", "commands")
	for _, p := range want {
		got, err := os.ReadFile(filepath.Join(committed, filepath.Base(p)))
		exp, _ := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, exp) {
			t.Errorf("docs/commands/%s is missing or out of date: run `make docs`", filepath.Base(p))
		}
	}
	old, _ := filepath.Glob(filepath.Join(committed, "*.md"))
	if len(old) != len(want) {
		t.Errorf("docs/commands has %d pages, the tree %d: run `make docs` and remove stale pages", len(old), len(want))
	}
	for _, name := range []string{"devctl.1", "devctl-probe.1", "devctl-serve.1", "devctl-completion-bash.1"} {
		b, err := os.ReadFile(filepath.Join(man, name))
		if err != nil || !strings.HasPrefix(string(b), ".nh\n.TH \"DEVCTL\" \"1\"") {
			t.Errorf("man page %s: %v\n%.80s", name, err, b)
		}
	}
}
