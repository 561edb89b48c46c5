// Package release checks what `go install` and goreleaser need from the
// repository.
package release

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	"sigs.k8s.io/yaml"
)

const repo = "../.."

// TestModuleZipAcceptsEveryFile: `go install github.com/devctl/devctl/cmd/devctl@latest`
// downloads the module as a zip, and a module zip refuses the whole
// version if one file name is invalid (sysfs fixtures hold PCI addresses
// with ':'). Such trees must sit in a nested module (testdata/go.mod),
// which the zip leaves out.
func TestModuleZipAcceptsEveryFile(t *testing.T) {
	skip := map[string]bool{".git": true, "bin": true, "dist": true, "man": true, "completions": true}
	n := 0
	err := filepath.WalkDir(repo, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skip[rel] {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module: not in the zip
				}
			}
			return nil
		}
		n++
		if err := module.CheckFilePath(rel); err != nil {
			t.Errorf("%v: the module zip would refuse it, and go install with it", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("walked only %d files", n)
	}
}

// TestGoreleaserConfig checks the release configuration's promises: the
// three kinds of build of the one devctl binary, and a version flag aimed at a variable that exists.
func TestGoreleaserConfig(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repo, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version  int `json:"version"`
		Archives []struct {
			ID    string   `json:"id"`
			Files []string `json:"files"`
		} `json:"archives"`
		Builds []struct {
			ID      string   `json:"id"`
			Main    string   `json:"main"`
			Env     []string `json:"env"`
			Goos    []string `json:"goos"`
			Goarch  []string `json:"goarch"`
			Ldflags []string `json:"ldflags"`
		} `json:"builds"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 2 {
		t.Errorf("want a GoReleaser v2 configuration, got version %d", cfg.Version)
	}
	want := map[string]string{"static": "CGO_ENABLED=0 linux amd64,arm64", "nvml": "CGO_ENABLED=1 linux amd64,arm64", "darwin": "CGO_ENABLED=0 darwin amd64,arm64"}
	src, err := os.ReadFile(filepath.Join(repo, "internal", "cmd", "root", "root.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range cfg.Builds {
		got := b.Env[0] + " " + strings.Join(b.Goos, ",") + " " + strings.Join(b.Goarch, ",")
		if want[b.ID] != got {
			t.Errorf("build %s: %q, want %q", b.ID, got, want[b.ID])
		}
		delete(want, b.ID)
		if b.Main != "./cmd/devctl" {
			t.Errorf("build %s builds %s, want ./cmd/devctl (devctl is one binary)", b.ID, b.Main)
		}
		if !strings.Contains(strings.Join(b.Ldflags, " "), "-X github.com/devctl/devctl/internal/cmd/root.Version=") || !strings.Contains(string(src), "\nvar Version = ") {
			t.Errorf("build %s does not set root.Version, or root.go no longer declares it", b.ID)
		}
	}
	for id := range want {
		t.Errorf("no %s build", id)
	}
	// Man pages ship where man(1) looks under a MANPATH entry: man/man1,
	// which `make docs` writes.
	mk, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "-man man/man1\n") {
		t.Error("make docs does not write the man pages to man/man1")
	}
	for _, a := range cfg.Archives {
		if !slices.Contains(a.Files, "man/man1/*.1") {
			t.Errorf("archive %s does not ship man/man1/*.1: %v", a.ID, a.Files)
		}
	}
	if len(cfg.Archives) == 0 {
		t.Error("no archives")
	}
}
