package probe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/probe"
)

func TestNewCmdProbeParsesFlagsIntoOptions(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *Options
	cmd := NewCmdProbe(&cmdutil.Factory{IO: ios, Global: &cmdutil.GlobalOptions{}}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"-o", "json", "--only", "cpu,memory", "--require", "gpu_count>=1", "--nfd-expiry", "2h"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	type flags struct {
		Output        string
		Only, Require []string
		NFDExpiry     time.Duration
	}
	want := flags{"json", []string{"cpu", "memory"}, []string{"gpu_count>=1"}, 2 * time.Hour}
	if diff := cmp.Diff(want, flags{got.Output, got.Only, got.Require, got.NFDExpiry}); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestValidateRefusesBadFlagsBeforeProbing(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	probed := false
	o := &Options{IO: ios, NFDFile: "-", NFDExpiry: -time.Second,
		Probe: func(context.Context, []string) (*probe.Report, error) { probed = true; return &probe.Report{}, nil }}
	err := Run(context.Background(), o)
	if !errors.Is(err, cmdutil.ErrUsage) || probed {
		t.Errorf("Run = %v (probed %v), want a usage error before any probe", err, probed)
	}
}
