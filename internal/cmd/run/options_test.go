package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/supervise"
)

// parse runs `devctl run ARGS` up to flag parsing (the runF hook) and
// validates the options against env.
func parse(t *testing.T, env map[string]string, args ...string) (*Options, supervise.LadderConfig, error) {
	t.Helper()
	io, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdRun(&cmdutil.Factory{IO: io}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err != nil {
		return nil, supervise.LadderConfig{}, err
	}
	got.Environ = func() []string {
		var kv []string
		for k, v := range env {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	got.Complete()
	err := got.Validate()
	return got, got.ladder, err
}

func TestFlags(t *testing.T) {
	env := map[string]string{"BS": "64", "DTYPE": "bfloat16", "EMPTY": ""}
	tests := []struct {
		name    string
		args    []string
		command []string
		cfg     supervise.LadderConfig
		err     string
	}{
		{name: "the command after -- keeps its own flags", args: []string{"--retries", "2", "--", "python", "train.py", "--retries", "9"},
			command: []string{"python", "train.py", "--retries", "9"}},
		{name: "without -- the flags end at the command", args: []string{"python", "-u", "train.py"}, command: []string{"python", "-u", "train.py"}},
		{name: "knobs with values", args: []string{"--batch-env", "BATCH_SIZE=32", "--accum-env", "GA=2", "--precision-env", "P=fp32", "--allow-cpu", "--", "x"},
			command: []string{"x"}, cfg: supervise.LadderConfig{Batch: &supervise.IntVar{Name: "BATCH_SIZE", Value: 32}, Accum: &supervise.IntVar{Name: "GA", Value: 2},
				Precision: &supervise.StrVar{Name: "P", Value: "fp32"}, AllowCPU: true}},
		{name: "a knob without a value reads the environment; accumulation defaults to 1", args: []string{"--batch-env", "BS", "--accum-env", "GA", "--precision-env", "DTYPE", "--", "x"},
			command: []string{"x"}, cfg: supervise.LadderConfig{Batch: &supervise.IntVar{Name: "BS", Value: 64}, Accum: &supervise.IntVar{Name: "GA", Value: 1},
				Precision: &supervise.StrVar{Name: "DTYPE", Value: "bfloat16"}}},
		{name: "no command is a usage error", args: []string{"--retries", "2"}, err: "give the command after --"},
		{name: "negative retries", args: []string{"--retries", "-1", "--", "x"}, err: "invalid --retries -1: want 0 to 100"},
		{name: "a zero grace", args: []string{"--grace", "0s", "--", "x"}, err: "invalid --grace 0s"},
		{name: "a variable name with a space", args: []string{"--batch-env", "A B=1", "--", "x"}, err: `invalid --batch-env "A B=1": want NAME=VALUE or NAME`},
		{name: "a batch that is not a number", args: []string{"--batch-env", "B=lots", "--", "x"}, err: `want B=N with N a whole number from 1 to 1048576`},
		{name: "a batch too large", args: []string{"--batch-env", "B=9999999", "--", "x"}, err: `want B=N with N a whole number from 1 to 1048576`},
		{name: "an unset batch variable", args: []string{"--batch-env", "EMPTY", "--", "x"}, err: "EMPTY is not set; give its value as EMPTY=VALUE"},
		{name: "accumulation without a batch", args: []string{"--accum-env", "GA=2", "--", "x"}, err: "--accum-env needs --batch-env"},
		{name: "batch and accumulation in one variable", args: []string{"--batch-env", "B=2", "--accum-env", "B=2", "--", "x"}, err: "name the same variable B"},
		{name: "two models", args: []string{"--model", "gpt2", "--model-params", "7B", "--", "x"}, err: "at most one of --model-params, --model or --model-config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, cfg, err := parse(t, env, tt.args...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				var fe *cmdutil.FlagError
				if !errors.Is(err, cmdutil.ErrUsage) && !errors.As(err, &fe) {
					t.Errorf("err %v is not a usage error (exit 2)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.command, o.Command); d != "" {
				t.Errorf("command (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.cfg, cfg); d != "" {
				t.Errorf("ladder config (-want +got):\n%s", d)
			}
		})
	}
}
