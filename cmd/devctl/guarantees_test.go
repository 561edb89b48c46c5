package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/safetext"
)

// issue22Env is a clean environment for root.Main.
func issue22Env(t *testing.T) func(string) (string, bool) {
	t.Helper()
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir(),
		"NO_COLOR": "1", "PATH": os.Getenv("PATH")}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func h100Snapshot(t *testing.T) string {
	t.Helper()
	fx, err := filepath.Abs("../../testdata/snapshots/nvidia-h100-pcie-x2.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestRequireNaNIsBadInput: `--require 'gpu_count==NaN'` exited 0 (issue
// 22); every non-finite number is a bad requirement, exit 2.
func TestRequireNaNIsBadInput(t *testing.T) {
	snap := h100Snapshot(t)
	for _, req := range []string{"gpu_count==NaN", "gpu_count!=NaN", "gpu_count>=-Inf", "gpu_count<1e999"} {
		io, _, _, errOut := iostreams.Test()
		code := root.Main([]string{"--from", snap, "probe", "-o", "json", "--require", req}, io, issue22Env(t))
		if code != 2 || !strings.Contains(errOut.String(), "not NaN, Inf or hex") {
			t.Errorf("--require %q: exit %d, want 2; stderr:\n%s", req, code, errOut)
		}
	}
}

// TestEchoesAreInert: what a user typed comes back in messages with its
// escape sequences and bidirectional overrides shown as '?' or escaped,
// never raw (issue 22: the --require echo kept U+202E).
func TestEchoesAreInert(t *testing.T) {
	snap := h100Snapshot(t)
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"a --require that does not parse", []string{"--from", snap, "probe", "--require", "gpu_count\u202e>=8"}, 2},
		{"a --require with an unknown field", []string{"--from", snap, "probe", "--require", "gpu\u202ecount>=8"}, 2},
		{"a --require quoting a bidi override", []string{"--from", snap, "probe", "-o", "json", "--require", "summary.default_device==\"cu\u202eda\""}, 2},
		{"a bad --device", []string{"--from", snap, "probe", "--device", "cuda\u202e\x1b]52;c;eA==\x07"}, 2},
		{"a bad -o", []string{"probe", "-o", "json\u2066\x1b[2J"}, 2},
		{"a bad --config path", []string{"--config", "/nonexistent/\u202e\x1b[31mx.yaml", "probe", "--only", "cpu"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			io, _, _, errOut := iostreams.Test()
			code := root.Main(c.args, io, issue22Env(t))
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, errOut)
			}
			for _, r := range errOut.String() {
				if r != '\n' && safetext.Unsafe(r) {
					t.Errorf("stderr keeps %U raw:\n%q", r, errOut)
				}
			}
		})
	}
}
