package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/devctl/devctl/internal/cmdutil"
)

func TestFlagsFillOptions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want Options
	}{
		{"-o alone writes a plain snapshot", []string{"-o", "a.tar.gz"}, Options{Output: "a.tar.gz"}},
		{"--force and --redact-host are read", []string{"--output", "b.tar.gz", "--force", "--redact-host"}, Options{Output: "b.tar.gz", Force: true, RedactHost: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *Options
			cmd := NewCmdSnapshot(&cmdutil.Factory{}, func(o *Options) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			deps := cmpopts.IgnoreFields(Options{}, "IO", "Host", "Config", "Probe", "Timeout", "Version", "Now")
			if diff := cmp.Diff(tt.want, *got, deps, cmpopts.IgnoreUnexported(Options{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateRefusesBadOutputPaths(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.tar.gz")
	if err := os.WriteFile(existing, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.tar.gz")
	if err := os.Symlink(existing, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no -o is a usage error", Options{}, "snapshot needs -o FILE"},
		{"an existing file needs --force", Options{Output: existing}, "the file exists; pass --force"},
		{"a directory is not a file", Options{Output: dir, Force: true}, "it is a directory"},
		{"a missing directory is named", Options{Output: filepath.Join(dir, "nope", "x.tar.gz")}, "nope: no such file or directory"},
		{"a file as the directory is named", Options{Output: filepath.Join(existing, "x.tar.gz")}, "not a directory"},
		{"a symlink is not replaced, even with --force", Options{Output: link, Force: true}, "it is a symbolic link"},
		{"a device node is refused, even with --force", Options{Output: os.DevNull, Force: true}, "it is a device or socket"},
		{"an existing file with --force is fine", Options{Output: existing, Force: true}, ""},
		{"a new file is fine", Options{Output: filepath.Join(dir, "new.tar.gz")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate error %v, want it to contain %q", err, tt.want)
			}
			if !errors.Is(err, cmdutil.ErrUsage) {
				t.Errorf("error %v is not a usage error (exit 2)", err)
			}
		})
	}
}
