package main

import (
	"net/http"
	"net/http/httptest"
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

// TestRejectedHubConfigsAreNotCached: a config.json recommend refuses
// (issue 22: Hub configs devctl then rejects were still written to its
// cache). The refused file is testdata/models/mamba.synthetic.config.json,
// a family devctl does not count, served with no index; the accepted one
// is the real YouriLalain/3PRYMMAL-PHI3-3B-SLERP pair of internal/hfhub.
func TestRejectedHubConfigsAreNotCached(t *testing.T) {
	mamba, err := os.ReadFile("../../testdata/models/mamba.synthetic.config.json")
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join("..", "..", "internal", "hfhub", "testdata", "YouriLalain--3PRYMMAL-PHI3-3B-SLERP")
	cfg, err := os.ReadFile(filepath.Join(real, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	const good = "YouriLalain/3PRYMMAL-PHI3-3B-SLERP"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/state-spaces/mamba/resolve/main/config.json":
			_, _ = w.Write(mamba)
		case "/" + good + "/resolve/main/config.json":
			_, _ = w.Write(cfg)
		default:
			w.Header().Set("X-Error-Code", "EntryNotFound")
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	cache := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "XDG_CACHE_HOME": cache,
		"HF_HOME": t.TempDir(), "HF_ENDPOINT": srv.URL, "NO_COLOR": "1", "PATH": os.Getenv("PATH")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	io, _, _, errOut := iostreams.Test()
	if code := root.Main([]string{"recommend", "--model", "state-spaces/mamba", "--device", "a10g", "-o", "json"}, io, lookup); code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", code, errOut)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "devctl", "hf", "state-spaces--mamba", "*", "*")); len(files) > 0 {
		t.Errorf("the refused config was cached: %v", files)
	}
	io, _, _, errOut = iostreams.Test()
	if code := root.Main([]string{"recommend", "--model", good, "--device", "a10g", "-o", "json"}, io, lookup); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, errOut)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "devctl", "hf", "YouriLalain--3PRYMMAL-PHI3-3B-SLERP", "main", "config.json")); len(files) != 1 {
		t.Errorf("the accepted config was not cached")
	}
}

// TestOutputTargetExitCodes pins exit 2 for every path the one output
// policy refuses, and for label lifetimes NFD cannot use (issue 22:
// --report into a missing directory only warned, --nfd-expiry 1ns wrote
// labels already expired).
func TestOutputTargetExitCodes(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Skip(err)
	}
	snap := h100Snapshot(t)
	missing := filepath.Join(dir, "nope", "out")
	runExitCases(t, []exitCase{
		{"run --report into a missing directory", []string{"run", "--report", missing, "--", "true"}, 2},
		{"run --report onto a symlink", []string{"run", "--report", link, "--", "true"}, 2},
		{"run --report onto a device", []string{"run", "--report", os.DevNull, "--", "true"}, 2},
		{"probe --nfd-file into a missing directory", []string{"--from", snap, "probe", "-o", "nfd", "--nfd-file", missing}, 2},
		{"probe --nfd-file onto a symlink", []string{"--from", snap, "probe", "-o", "nfd", "--nfd-file", link}, 2},
		{"probe --nfd-expiry 1ns", []string{"--from", snap, "probe", "-o", "nfd", "--nfd-file", "-", "--nfd-expiry", "1ns"}, 2},
		{"probe --nfd-expiry 59s", []string{"--from", snap, "probe", "-o", "nfd", "--nfd-file", "-", "--nfd-expiry", "59s"}, 2},
		{"probe --nfd-expiry 1m", []string{"--from", snap, "probe", "-o", "nfd", "--nfd-file", "-", "--nfd-expiry", "1m"}, 0},
		{"probe --nfd-expiry 0", []string{"--from", snap, "probe", "-o", "nfd", "--nfd-file", "-", "--nfd-expiry", "0"}, 0},
		{"snapshot -o onto a symlink", []string{"--from", snap, "snapshot", "-o", link, "--force"}, 2},
		{"snapshot -o into a missing directory", []string{"--from", snap, "snapshot", "-o", missing}, 2},
	})
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
}
