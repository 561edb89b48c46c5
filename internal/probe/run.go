package probe

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
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
	// Sweep, when set, runs after the drivers: it returns the accelerators
	// the kernel shows that no driver answered for (see Unanswered).
	Sweep Sweep
	// PassOver names the backends whose run history fails the history rule,
	// with the reason to show; automatic selection passes them over for
	// the next backend in priority. An explicit Preferred device wins.
	PassOver map[string]string
	// PassOverLater, when set, gives PassOver once the drivers have
	// answered, so that reading the run history can overlap them.
	PassOverLater func() map[string]string
}

// Unanswered is an accelerator on the bus that the named driver did not
// answer for; Device carries its State and StateReason.
type Unanswered struct {
	Driver string
	Device Device
}

// Sweep finds unanswered accelerators, given the devices the drivers
// returned and every driver's status (a driver that did not run is not in
// drivers and its vendor is not swept).
type Sweep func(ctx context.Context, h *host.Host, answered []Device, drivers []DriverStatus) []Unanswered

// ErrDeviceUnavailable is returned when the preferred device is not present
// and fallback is disabled. It is a usage error (exit 2).
var ErrDeviceUnavailable = errors.New("requested device is not available")

// Outcome is one driver's result with its status, kept for later commands.
type Outcome struct {
	Status DriverStatus
	Result Result
	Err    error
}

// Run executes the drivers concurrently, under one deadline, and
// builds the report. A driver that fails, panics or hangs becomes a
// drivers[] entry and never blocks or crashes the report.
func Run(ctx context.Context, h *host.Host, drivers []Driver, opts Options) (*Report, []Outcome, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	answers := guard.All(ctx, timeout, len(drivers), func(ctx context.Context, i int) (Result, error) {
		return drivers[i].Probe(ctx, h)
	})
	outcomes := make([]Outcome, len(drivers))
	for i, a := range answers {
		outcomes[i] = outcome(drivers[i].Name(), a, timeout)
	}

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
		if n := unusable(o.Result.Devices); n > 0 {
			// The driver answered, but for devices that cannot be used
			// from here: say so in drivers[] as the sweep does.
			st := &rep.Drivers[len(rep.Drivers)-1]
			st.Status = StatusDegraded
			st.Detail = fmt.Sprintf("%d %s cannot be used from here (%s); %s", n, plural(n, o.Result.Devices[0].DeviceType), stateCounts(o.Result.Devices), st.Detail)
		}
		if o.Result.Software != nil {
			rep.Software = o.Result.Software
		}
		if o.Result.Platform != nil {
			platforms = append(platforms, o.Result.Platform)
		}
	}
	if opts.PassOverLater != nil {
		opts.PassOver = opts.PassOverLater()
	}
	if opts.Sweep != nil {
		addUnanswered(rep, opts.Sweep(ctx, h, rep.Devices, rep.Drivers))
	}
	sortDevices(rep.Devices)
	sel, err := Select(rep.Devices, opts)
	if err != nil {
		return rep, outcomes, err
	}
	if findDevice(rep.Devices, sel.Chosen) == nil {
		// Frameworks still run on the CPU, but no driver described any
		// device: say why instead of a reason about the priority list.
		why := "no usable device was described" + undescribed(rep.Drivers) + "; frameworks fall back to the CPU"
		if sel.FellBack {
			sel.Reason += "; " + why
		} else {
			sel.Reason = why
		}
	}
	rep.Selection = sel
	rep.Summary = Summarize(rep.Devices, sel.Chosen, platforms, opts)
	return rep, outcomes, nil
}

// undescribed names, in parentheses, the drivers that failed or timed out
// and a CPU driver that found nothing (every machine has a CPU, so its
// absence means the files it reads are missing, as in a partial snapshot).
func undescribed(ds []DriverStatus) string {
	var parts []string
	for _, d := range ds {
		switch {
		case d.Status == StatusError || d.Status == StatusTimeout:
			parts = append(parts, d.Name+" "+d.Status)
		case d.Name == "cpu" && d.Status == StatusAbsent:
			parts = append(parts, "cpu: "+d.Detail)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// addUnanswered lists the unanswered devices and marks their drivers
// degraded. A driver that failed or timed out keeps that status: the
// devices say what is on the bus, the status says what went wrong.
// Display-only adapters are listed without touching the status; GPUs
// known from their kernel driver alone (kernel_only) are usable, and the
// status says so.
func addUnanswered(rep *Report, found []Unanswered) {
	byDriver := map[string][]Device{}
	for _, u := range found {
		byDriver[u.Driver] = append(byDriver[u.Driver], u.Device)
	}
	for i := range rep.Drivers {
		st := &rep.Drivers[i]
		devs := byDriver[st.Name]
		if len(devs) == 0 {
			continue
		}
		for j := range devs {
			devs[j].Index = j
		}
		rep.Devices = append(rep.Devices, devs...)
		var counted, kernel []Device
		for _, d := range devs {
			switch {
			case d.State == StateKernelOnly:
				kernel = append(kernel, d)
			case d.Counted():
				counted = append(counted, d)
			}
		}
		var parts []string
		if len(counted) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s on the PCI bus cannot be used from here (%s)", len(counted), plural(len(counted), counted[0].DeviceType), stateCounts(counted)))
		}
		if len(kernel) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s known from the kernel driver only (kernel_only): usable, capabilities from the PCI id", len(kernel), plural(len(kernel), kernel[0].DeviceType)))
		}
		if len(parts) == 0 {
			continue // display-only adapters: listed, the driver's status stands
		}
		why := strings.Join(parts, "; ")
		switch st.Status {
		case StatusOK, StatusAbsent:
			if st.Status == StatusOK {
				why += "; " + st.Detail
			} else if st.Detail != "" {
				why += ": " + st.Detail
			}
			st.Status, st.Detail = StatusDegraded, why
		default:
			st.Detail += "; " + why
		}
	}
}

func unusable(ds []Device) int {
	n := 0
	for _, d := range ds {
		if d.Counted() {
			n++
		}
	}
	return n
}

func plural(n int, noun string) string {
	if noun == "" {
		noun = "device"
	}
	if noun == "gpu" || noun == "tpu" || noun == "npu" {
		noun = strings.ToUpper(noun)
	}
	if n == 1 {
		return noun
	}
	return noun + "s"
}

func stateCounts(devs []Device) string {
	n := map[string]int{}
	var order []string
	for _, d := range devs {
		if n[d.State] == 0 {
			order = append(order, d.State)
		}
		n[d.State]++
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%d %s", n[s], s)
	}
	return strings.Join(parts, ", ")
}

// outcome turns one driver's answer into its status.
func outcome(name string, a guard.Answer[Result], timeout time.Duration) Outcome {
	res, err := a.Value, a.Err
	if errors.Is(err, guard.ErrPanic) {
		err = fmt.Errorf("driver %w", err)
	}
	st := DriverStatus{Name: name, Source: res.Source, DurationMS: a.Took.Milliseconds()}
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
		if ui, uj := ds[i].Usable(), ds[j].Usable(); ui != uj {
			return ui
		}
		return ds[i].Index < ds[j].Index
	})
}
