package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    *Options
		wantErr bool
	}{
		{"defaults run every suite for 10 s", nil,
			&Options{Suites: []string{"cpu", "memory", "link"}, Duration: 10 * time.Second}, false},
		{"suites are normalised to the canonical order", []string{"--suite", "Memory,cpu"},
			&Options{Suites: []string{"cpu", "memory"}, Duration: 10 * time.Second}, false},
		{"threads and json", []string{"--threads", "3", "-o", "json", "--quiet", "--fail-on-regression"},
			&Options{Suites: []string{"cpu", "memory", "link"}, Duration: 10 * time.Second, Threads: 3, ThreadsSet: true, Output: "json", Quiet: true, FailOnRegression: true}, false},
		{"an unknown suite is a usage error", []string{"--suite", "gpu"}, nil, true},
		{"zero duration is a usage error", []string{"--duration", "0s"}, nil, true},
		{"negative duration is a usage error", []string{"--duration", "-1s"}, nil, true},
		{"zero threads is a usage error", []string{"--threads", "0"}, nil, true},
		{"negative threads is a usage error", []string{"--threads", "-2"}, nil, true},
		{"more threads than the runtime can hold is a usage error, not a crash", []string{"--threads", "100000"}, nil, true},
		{"env is not offered", []string{"-o", "env"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IO: ios, Global: &cmdutil.GlobalOptions{}}
			var got *Options
			cmd := NewCmdBench(f, func(o *Options) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SilenceErrors, cmd.SilenceUsage = true, true
			err := cmd.Execute()
			if err == nil {
				err = got.Complete()
			}
			if err == nil {
				err = got.Validate()
			}
			if tt.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			deps := cmpopts.IgnoreFields(Options{}, "IO", "LookupEnv", "Now", "Version", "Elsewhere", "Host", "Probe")
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Options{}), deps); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestUsageErrorsNameTheValueAndWhatIsAccepted(t *testing.T) {
	err := (&Options{Suites: []string{"gpu"}, Duration: time.Second}).Validate()
	if !errors.Is(err, cmdutil.ErrUsage) || err.Error() != `unknown --suite "gpu": want one or more of cpu, memory, link (comma-separated)` {
		t.Errorf("got %v", err)
	}
}

func TestFailOnRegressionExitsThreeWhenAFigureFell(t *testing.T) {
	stateDir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": stateDir}
	newFactory := func() *cmdutil.Factory {
		ios, _, _, _ := iostreams.Test()
		f := &cmdutil.Factory{IO: ios, Global: &cmdutil.GlobalOptions{Timeout: 5 * time.Second}, Now: time.Now,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
		f.HostFunc = func() (*host.Host, error) { return host.Local(host.LocalOptions{}) }
		f.ConfigFunc = func(map[string]config.Flag) (*config.Config, error) {
			return config.Load(config.LoadOptions{LookupEnv: f.LookupEnv})
		}
		return f
	}
	opts := func() *Options {
		// The machine's load is not sampled: on a busy test machine the
		// fall would (rightly) not be judged.
		var o *Options
		cmd := NewCmdBench(newFactory(), func(got *Options) error { o = got; return nil })
		cmd.SetArgs([]string{"--suite", "cpu", "--duration", "50ms", "--threads", "1", "-o", "json", "--fail-on-regression"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		o.sampleLoad = func(func(string) ([]byte, error)) bench.LoadSample { return bench.LoadSample{Load1: -1} }
		return o
	}
	if err := Run(context.Background(), opts()); err != nil {
		t.Fatalf("first run: %v", err)
	}
	// Pretend the previous run was ten times faster.
	path := filepath.Join(stateDir, "devctl", bench.HistoryFile)
	runs, err := bench.LoadHistory(path)
	if err != nil || len(runs) != 1 {
		t.Fatalf("history: %v, %d runs", err, len(runs))
	}
	for i := range runs[0].Results {
		runs[0].Results[i].Value *= 10
	}
	os.Remove(path)
	if err := bench.AppendHistory(path, &runs[0]); err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), opts())
	var ee *cmdutil.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Fatalf("second run: %v, want exit 3", err)
	}
}
