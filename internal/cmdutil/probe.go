package cmdutil

import (
	"context"
	"errors"

	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/drivers"
)

// RunProbe runs the selected drivers against the factory's host with the
// effective configuration. probe, recommend and doctor all start here.
func RunProbe(ctx context.Context, f *Factory, only []string) (*probe.Report, []probe.Outcome, error) {
	ds, err := drivers.Select(only)
	if err != nil {
		return nil, nil, &FlagError{Err: err}
	}
	h, err := f.Host()
	if err != nil {
		return nil, nil, err
	}
	return ProbeHost(ctx, f, h, ds)
}

// ProbeHost runs drivers against h with the effective configuration.
// `devctl serve` calls it with a fresh Host for every refresh, since a
// Host remembers what it read.
func ProbeHost(ctx context.Context, f *Factory, h *host.Host, ds []probe.Driver) (*probe.Report, []probe.Outcome, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	d := cfg.Device
	// The history rule steers automatic selection on this machine (a
	// replayed snapshot is another machine). An unreadable history steers
	// nothing; recommend and history report it.
	var passOver map[string]string
	if f.Global.From == "" {
		if recs, err := history.Load(f.LookupEnv); err == nil {
			passOver = recs.PassOver()
		}
	}
	rep, outcomes, err := probe.Run(ctx, h, ds, probe.Options{
		Sweep:            drivers.Unanswered,
		PassOver:         passOver,
		Timeout:          f.Global.Timeout,
		Preferred:        d.Preferred,
		PlatformPriority: d.PlatformPriority,
		FallbackEnabled:  d.FallbackEnabled,
		MemoryStrategy:   d.MemoryStrategy,
		MemoryFraction:   d.MemoryFraction,
		DevctlVersion:    f.Version,
	})
	if errors.Is(err, probe.ErrDeviceUnavailable) {
		return rep, outcomes, Usagef("%v", err)
	}
	return rep, outcomes, err
}
