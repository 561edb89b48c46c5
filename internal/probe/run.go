package probe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/guard"
	"github.com/devctl/devctl/internal/host"
)

// Options controls a probe run.
type Options struct {
	// Timeout is each driver's deadline; zero means 5 s.
	Timeout time.Duration
	// Selection settings (from config).
	Preferred        string            // "auto", a backend or a device id (backend.ParsePreference)
	PlatformPriority []backend.Backend // in order of preference; empty means backend.All()
	FallbackEnabled  bool
	MemoryStrategy   string
	MemoryFraction   float64
	DevctlVersion    string
}

// ErrDeviceUnavailable is returned when the preferred device is not present
// and fallback is disabled. It is a usage error (exit 2).
var ErrDeviceUnavailable = errors.New("requested device is not available")

// Outcome is one driver's result with its status, kept for later commands.
type Outcome struct {
	Status DriverStatus
	Result Result
	Err    error
}

// Run executes the drivers concurrently, each under its own deadline, and
// builds the report. A driver that fails, panics or hangs becomes a
// drivers[] entry and never blocks or crashes the report.
func Run(ctx context.Context, h *host.Host, drivers []Driver, opts Options) (*Report, []Outcome, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	outcomes := make([]Outcome, len(drivers))
	guard.Each(len(drivers), func(i int) { outcomes[i] = runOne(ctx, h, drivers[i], timeout) })

	rep := &Report{
		SchemaVersion: SchemaVersion,
		DevctlVersion: opts.DevctlVersion,
		Host:          HostInfo{OS: h.OS, Arch: h.Arch, Container: "none"},
		Devices:       []Device{},
	}
	var platforms []*Platform
	for _, o := range outcomes {
		rep.Drivers = append(rep.Drivers, o.Status)
		// Host facts count even from a driver that failed: the NVIDIA
		// kernel module version matters most when NVML is broken.
		if o.Result.Host != nil && o.Status.Status != StatusTimeout {
			mergeHost(&rep.Host, o.Result.Host)
		}
		if o.Status.Status != StatusOK {
			continue
		}
		rep.Devices = append(rep.Devices, o.Result.Devices...)
		if o.Result.Platform != nil {
			platforms = append(platforms, o.Result.Platform)
		}
	}
	sortDevices(rep.Devices)
	sel, err := Select(rep.Devices, opts)
	if err != nil {
		return rep, outcomes, err
	}
	rep.Selection = sel
	rep.Summary = Summarize(rep.Devices, sel.Chosen, platforms, opts)
	return rep, outcomes, nil
}

func runOne(ctx context.Context, h *host.Host, d Driver, timeout time.Duration) Outcome {
	start := time.Now()
	res, err := guard.Run(ctx, timeout, func(ctx context.Context) (Result, error) { return d.Probe(ctx, h) })
	if errors.Is(err, guard.ErrPanic) {
		err = fmt.Errorf("driver %w", err)
	}
	st := DriverStatus{Name: d.Name(), Source: res.Source, DurationMS: time.Since(start).Milliseconds()}
	switch {
	case err == nil:
		st.Status = StatusOK
		st.Detail = res.Detail
		if st.Detail == "" {
			st.Detail = fmt.Sprintf("%d device(s)", len(res.Devices))
		}
	case errors.Is(err, ErrAbsent):
		st.Status = StatusAbsent
		st.Detail = trimAbsent(err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		st.Status = StatusTimeout
		st.Detail = fmt.Sprintf("no answer within %s", timeout)
	default:
		st.Status = StatusError
		st.Detail = err.Error()
	}
	return Outcome{Status: st, Result: res, Err: err}
}

func trimAbsent(s string) string {
	const suffix = ": " + "absent"
	if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
		return s[:len(s)-len(suffix)]
	}
	return s
}

func mergeHost(dst, src *HostInfo) {
	if src.Kernel != nil {
		dst.Kernel = src.Kernel
	}
	if src.Container != "" {
		dst.Container = src.Container
	}
	if src.OS != "" {
		dst.OS = src.OS
	}
	if src.Arch != "" {
		dst.Arch = src.Arch
	}
	if src.MemoryTotalMB != nil {
		dst.MemoryTotalMB = src.MemoryTotalMB
	}
	if src.MemoryLimitMB != nil {
		dst.MemoryLimitMB = src.MemoryLimitMB
	}
	if src.CPUQuota != nil {
		dst.CPUQuota = src.CPUQuota
	}
	if src.SwapTotalMB != nil {
		dst.SwapTotalMB = src.SwapTotalMB
	}
	if src.MemoryAvailMB != nil {
		dst.MemoryAvailMB = src.MemoryAvailMB
	}
	if src.ShmTotalMB != nil {
		dst.ShmTotalMB = src.ShmTotalMB
	}
	if src.NvidiaKernelMod != nil {
		dst.NvidiaKernelMod = src.NvidiaKernelMod
	}
}

func sortDevices(ds []Device) {
	sort.SliceStable(ds, func(i, j int) bool {
		ri, rj := ds[i].Backend.Rank(), ds[j].Backend.Rank()
		if ri != rj {
			return ri < rj
		}
		return ds[i].Index < ds[j].Index
	})
}
