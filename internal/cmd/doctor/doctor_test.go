package doctor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/cmd/doctor"
	"github.com/devctl/devctl/internal/cmd/factory"
	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/iostreams"
)

const fixtures = "../../../testdata/doctor"

// TestExitCodes pins the documented exit codes, which a testscript can
// only tell apart as zero or not.
func TestExitCodes(t *testing.T) {
	state := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "oom.log")
	if err := os.WriteFile(logFile, []byte("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_STATE_HOME": state, "XDG_CONFIG_HOME": t.TempDir(), "NO_COLOR": "1"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want int
	}{
		{"a passing fixture exits 0", []string{"doctor", "--sysroot", fixtures + "/nvidia.driver_loaded/pass/root", "--check", "nvidia.driver_loaded"}, nil, cmdutil.ExitOK},
		{"a failing fixture exits 3", []string{"doctor", "--sysroot", fixtures + "/nvidia.driver_loaded/fail/root", "--check", "nvidia.driver_loaded"}, nil, cmdutil.ExitFound},
		{"a warning exits 0", []string{"doctor", "--sysroot", fixtures + "/pcie.link_width/fail/root", "--check", "pcie.link_width"}, nil, cmdutil.ExitOK},
		{"a warning with --strict exits 3", []string{"doctor", "--sysroot", fixtures + "/pcie.link_width/fail/root", "--check", "pcie.link_width", "--strict"}, nil, cmdutil.ExitFound},
		{"an unknown check exits 2", []string{"doctor", "--check", "nope"}, nil, cmdutil.ExitUsage},
		{"a missing log exits 2", []string{"doctor", "--log", filepath.Join(t.TempDir(), "none.log")}, nil, cmdutil.ExitUsage},
		{"a directory as log exits 2", []string{"doctor", "--log", t.TempDir()}, nil, cmdutil.ExitUsage},
		{"an explained log exits 0: it is not a finding about this machine", []string{"doctor", "--log", logFile}, nil, cmdutil.ExitOK},
		{"an explained log with passing checks exits 0", []string{"doctor", "--log", logFile, "--check", "env.xla"}, nil, cmdutil.ExitOK},
		{"a log with a failing check asked for exits 3", []string{"doctor", "--log", logFile, "--sysroot", fixtures + "/nvidia.driver_loaded/fail/root", "--check", "nvidia.driver_loaded"}, nil, cmdutil.ExitFound},
		{"--record without --log exits 2", []string{"doctor", "--record"}, nil, cmdutil.ExitUsage},
		{"--checks without --log exits 2", []string{"doctor", "--checks"}, nil, cmdutil.ExitUsage},
		{"a bad --model-params exits 2", []string{"doctor", "--log", logFile, "--model-params", "7GB"}, nil, cmdutil.ExitUsage},
		{"a bad DEVCTL_ variable is a finding (3), not a usage error", []string{"doctor", "--check", "env.devctl"}, map[string]string{"DEVCTL_PRECISION": "fp12"}, cmdutil.ExitFound},
		{"a bad --device flag is still a usage error", []string{"doctor", "--device", "gpu9", "--check", "env.devctl"}, nil, cmdutil.ExitUsage},
		{"--list exits 0", []string{"doctor", "--list"}, nil, cmdutil.ExitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io, _, out, errOut := iostreams.Test()
			lookup := func(k string) (string, bool) {
				if v, ok := tt.env[k]; ok {
					return v, true
				}
				v, ok := env[k]
				return v, ok
			}
			got := root.Main(tt.args, io, lookup)
			if got != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, out, errOut)
			}
			if got == cmdutil.ExitFound && errOut.Len() > 0 && !strings.Contains(errOut.String(), "no out-of-memory plan") {
				t.Errorf("exit 3 should print findings on stdout only, stderr: %s", errOut)
			}
		})
	}
}

// TestFlags checks flag parsing reaches Options (the runF hook).
func TestFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := factory.New(io, func(string) (string, bool) { return "", false }, "dev")
	var got *doctor.Options
	cmd := doctor.NewCmdDoctor(f, func(o *doctor.Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--check", "a,b", "--log", "-", "--model-params", "7B", "--lang", "pl", "--strict", "-o", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Checks, ",") != "a,b" || got.Log != "-" || got.ModelParams != "7B" || got.Lang != "pl" || !got.Strict || got.Output != "json" || got.Mode != "training" {
		t.Errorf("options not parsed: %+v", got)
	}
}
