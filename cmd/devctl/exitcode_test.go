package main

import (
	"os"
	"path/filepath"
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
