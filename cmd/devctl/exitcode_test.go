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
)

// TestGateExitCodes pins the exit codes CI jobs branch on (testscript's
// `! exec` only knows zero from non-zero): 3 for an unmet requirement or a
// check at or above --fail-on, 2 for a requirement that does not parse.
func TestGateExitCodes(t *testing.T) {
	fx, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(fx, "snapshots", "nvidia-h100-pcie-x2.tar.gz")
	pcie := filepath.Join(fx, "doctor", "pcie.link_width", "fail", "root")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"met requirements exit 0", []string{"--from", snap, "probe", "-o", "json", "--require", "gpu_count>=2", "--require", "cuda_version>=12.1"}, 0},
		{"an unmet requirement exits 3", []string{"--from", snap, "probe", "-o", "json", "--require", "gpu_count>=8"}, 3},
		{"a requirement that does not parse exits 2", []string{"--from", snap, "probe", "--require", "gpu_count=>8"}, 2},
		{"an unknown field exits 2", []string{"--from", snap, "probe", "--require", "gpus>=8"}, 2},
		{"a warning passes --fail-on fail", []string{"doctor", "--sysroot", pcie, "--check", "pcie.link_width", "--fail-on", "fail"}, 0},
		{"a warning fails --fail-on warn with 3", []string{"doctor", "--sysroot", pcie, "--check", "pcie.link_width", "--fail-on", "warn"}, 3},
		{"a bad --fail-on exits 2", []string{"doctor", "--fail-on", "never"}, 2},
	}
	runExitCases(t, tests)
}

// TestRecommendRequireFit pins `recommend --require-fit`: 3 when the plan as
// given does not fit, 0 when it does, whatever the output format.
func TestRecommendRequireFit(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"a plan that fits exits 0", []string{"recommend", "--model", "gpt2", "--device", "t4", "--require-fit", "-o", "env"}, 0},
		{"a plan that does not fit exits 3", []string{"recommend", "--model", "llama-3-70b", "--device", "t4", "--require-fit", "-o", "env"}, 3},
		{"even when the ladder finds a plan that does", []string{"recommend", "--model", "llama-2-7b", "--mode", "training", "--device", "a100-80gb", "--require-fit", "-o", "json"}, 3},
		{"without --require-fit it exits 0", []string{"recommend", "--model", "llama-3-70b", "--device", "t4", "-o", "env"}, 0},
	}
	runExitCases(t, tests)
}

// TestRecommendHub runs `recommend --model ORG/NAME` against a local HTTP
// server in the Hub's layout (HF_ENDPOINT), serving the real config.json
// and index of internal/hfhub/testdata: the model is sized (exit 0), and
// every Hub failure is one line and exit 2. No test touches the network.
func TestRecommendHub(t *testing.T) {
	dir := filepath.Join("..", "..", "internal", "hfhub", "testdata", "YouriLalain--3PRYMMAL-PHI3-3B-SLERP")
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(dir, "model.safetensors.index.json"))
	if err != nil {
		t.Fatal(err)
	}
	const id = "YouriLalain/3PRYMMAL-PHI3-3B-SLERP"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/" + id + "/resolve/main/config.json":
			_, _ = w.Write(cfg)
		case "/" + id + "/resolve/main/model.safetensors.index.json":
			_, _ = w.Write(idx)
		case "/gated/model/resolve/main/config.json":
			w.Header().Set("X-Error-Code", "GatedRepo")
			w.WriteHeader(http.StatusForbidden)
		case "/private/model/resolve/main/config.json":
			w.WriteHeader(http.StatusUnauthorized)
		case "/broken/model/resolve/main/config.json":
			_, _ = w.Write([]byte("<html>"))
		case "/huge/model/resolve/main/config.json":
			_, _ = w.Write([]byte(strings.Repeat("{", 5<<20)))
		default:
			w.Header().Set("X-Error-Code", "RepoNotFound")
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	tests := []struct {
		model, want string
		code        int
	}{
		{id, `"params": 3821079552`, 0},
		{"gated/model", "gated/model is gated: accept its conditions", 2},
		{"private/model", "set HF_TOKEN", 2},
		{"nobody/nothing", "no model nobody/nothing on", 2},
		{"broken/model", "is not a JSON object", 2},
		{"huge/model", "larger than 4194304 bytes", 2},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir(),
				"HF_HOME": t.TempDir(), "HF_ENDPOINT": srv.URL, "NO_COLOR": "1", "PATH": os.Getenv("PATH")}
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			io, _, out, errOut := iostreams.Test()
			got := root.Main([]string{"recommend", "--model", tc.model, "--device", "a10g", "-o", "json"}, io, lookup)
			text := out.String() + errOut.String()
			if got != tc.code || !strings.Contains(text, tc.want) {
				t.Errorf("exit %d, want %d and %q in:\n%s", got, tc.code, tc.want, text)
			}
			if tc.code == 2 && strings.Count(strings.TrimSpace(errOut.String()), "\n") > 0 {
				t.Errorf("more than one line on stderr:\n%s", errOut)
			}
		})
	}
}

// exitCase is a command line and the exit code it must give.
type exitCase = struct {
	name string
	args []string
	want int
}

// runExitCases runs each case through root.Main with a clean config and
// state directory.
func runExitCases(t *testing.T, tests []exitCase) {
	t.Helper()
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "NO_COLOR": "1", "PATH": os.Getenv("PATH")}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			io, _, _, errOut := iostreams.Test()
			if got := root.Main(tc.args, io, lookup); got != tc.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", got, tc.want, errOut)
			}
		})
	}
}
