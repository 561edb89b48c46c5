package cmdutil

import (
	"context"
	"errors"
	"sync"

	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/hfhub"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/interrupt"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/drivers"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/userfile"
)

// RunProbe runs the selected drivers against the factory's host with the
// effective configuration. probe, recommend and doctor all start here.
func RunProbe(ctx context.Context, f *Factory, only []string) (*probe.Report, []probe.Outcome, error) {
	return RunProbeFor(ctx, f, only, "")
}

// RunProbeFor is RunProbe with the history rule judged for an operation:
// `devctl run --operation NAME` passes over a device that cannot run it.
func RunProbeFor(ctx context.Context, f *Factory, only []string, operation string) (*probe.Report, []probe.Outcome, error) {
	ds, err := drivers.Select(only)
	if err != nil {
		return nil, nil, &FlagError{Err: err}
	}
	passOver := f.passOverLaterFor(operation) // read while the host and configuration are set up
	h, err := f.Host()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	return runProbe(ctx, f, h, cfg, ds, passOver)
}

// ProbeHost runs drivers against h with the effective configuration.
// `devctl serve` calls it with a fresh Host for every refresh, since a
// Host remembers what it read.
func ProbeHost(ctx context.Context, f *Factory, h *host.Host, ds []probe.Driver) (*probe.Report, []probe.Outcome, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	return runProbe(ctx, f, h, cfg, ds, f.passOverLater())
}

// RunProbeOn is RunProbe on a host and configuration the command built
// itself (snapshot's recording host, recommend's configuration with its own
// flags), leaving the factory's as they are.
func RunProbeOn(ctx context.Context, f *Factory, h *host.Host, cfg *config.Config, only []string) (*probe.Report, []probe.Outcome, error) {
	ds, err := drivers.Select(only)
	if err != nil {
		return nil, nil, &FlagError{Err: err}
	}
	return runProbe(ctx, f, h, cfg, ds, f.passOverLater())
}

func runProbe(ctx context.Context, f *Factory, h *host.Host, cfg *config.Config, ds []probe.Driver, passOver func() map[string]string) (*probe.Report, []probe.Outcome, error) {
	o := f.ProbeOptions(cfg)
	if cfg.Device.FallbackEnabled {
		o.PassOverLater = passOver
	}
	rep, outcomes, err := probe.Run(ctx, h, ds, o)
	if ierr := interrupt.Err(ctx); ierr != nil {
		// Drivers a signal cut short did not time out: there is no
		// report to show or gate on.
		return nil, nil, ierr
	}
	if errors.Is(err, probe.ErrDeviceUnavailable) {
		return rep, outcomes, Usagef("%w", err)
	}
	if err == nil && !cfg.Device.FallbackEnabled {
		keepWhenFallbackOff(rep, cfg, passOver())
	}
	return rep, outcomes, err
}

// passOverLater starts reading the run history and returns the function
// that waits for the verdict: selection needs it only once the drivers
// have answered, and decoding a long history (history.RecentBytes) costs
// up to half a millisecond, which can overlap them.
func (f *Factory) passOverLater() func() map[string]string {
	return f.passOverLaterFor("")
}

// passOverLaterFor is passOverLater for an operation (devctl run
// --operation).
func (f *Factory) passOverLaterFor(operation string) func() map[string]string {
	ch := make(chan map[string]string, 1)
	go func() { ch <- HistoryVerdicts(f, operation) }()
	return sync.OnceValue(func() map[string]string { return <-ch })
}

// ProbeOptions are the probe's options for cfg in this invocation: the
// configured selection plus --timeout, the version and the PCI sweep.
func (f *Factory) ProbeOptions(cfg *config.Config) probe.Options {
	o := probe.OptionsFrom(cfg)
	o.Timeout, o.DevctlVersion, o.Sweep = f.Global.Timeout, f.Version, drivers.Unanswered
	return o
}

// PlanDeps are the planner's dependencies in production: the run history
// of this machine (none for a replay: --from or --sysroot), --model-config files read
// with userfile's bounds, and the Hugging Face settings of the
// environment. recommend and run both plan with them.
func PlanDeps(f *Factory) recommend.Deps {
	return recommend.Deps{
		History: func() (history.Records, error) {
			l, err := HistoryLog(f)
			if errors.Is(err, ErrReplay) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return l.Recent()
		},
		ReadFile: func(path string, limit int64) ([]byte, error) {
			return userfile.ReadAs(path, limit, "a config.json")
		},
		Hub: hubOptions(f.LookupEnv),
	}
}

// hubOptions are the Hugging Face settings of the environment, with the
// planner's own verdict on downloaded files: what it cannot size is not
// kept in devctl's cache (hfhub.Options.Accept).
func hubOptions(lookupEnv func(string) (string, bool)) hfhub.Options {
	o := hfhub.OptionsFromEnv(lookupEnv)
	o.Accept = func(config, index []byte) error {
		var total int64
		if index != nil {
			ix, err := hfhub.ParseIndex(index)
			if err != nil {
				return err
			}
			total = *ix.Metadata.TotalSize
		}
		_, _, err := recommend.ModelFromFiles("", config, total)
		return err
	}
	return o
}

// PlanSettings are the configured device settings the planner honours,
// with their sources.
func PlanSettings(cfg *config.Config) recommend.Settings {
	d := cfg.Device
	return recommend.Settings{
		Precision: d.Precision, PrecisionSource: cfg.Sources["device.precision"].String(),
		Strategy: d.MemoryStrategy, StrategySource: cfg.Sources["device.memory_strategy"].String(),
		Fraction: d.MemoryFraction, FractionSource: cfg.Sources["device.memory_fraction"].String(),
		Fallback: d.FallbackEnabled,
	}
}
