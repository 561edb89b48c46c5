package probe

import (
	"fmt"
	"math"
	"strings"

	"github.com/devctl/devctl/internal/backend"
)

// Select picks the default device. Preferred may be "auto", a backend
// ("cuda") or a device id ("cuda:1"), aliases included (backend.Canonical).
func Select(devices []Device, opts Options) (*Selection, error) {
	pref := backend.Canonical(opts.Preferred)
	if pref == "" {
		pref = backend.Auto
	}
	if p, err := backend.ParsePreference(pref); err == nil {
		pref = p
	}
	priority := opts.PlatformPriority
	if len(priority) == 0 {
		priority = backend.All()
	}
	sel := &Selection{Requested: pref}
	if pref != backend.Auto {
		if d := findDevice(devices, pref); d != nil {
			sel.Chosen = d.ID
			sel.Reason = fmt.Sprintf("requested %s", pref)
			if why, bad := opts.PassOver[string(d.Backend)]; bad {
				sel.Reason += "; used although the history rule would pass it over: " + why
			}
			return sel, nil
		}
		if !opts.FallbackEnabled {
			return nil, fmt.Errorf("device %q: %w (found: %s); enable device.fallback_enabled to fall back", pref, ErrDeviceUnavailable, deviceList(devices))
		}
		sel.FellBack = true
		sel.Reason = fmt.Sprintf("%s is not available on this machine; fell back by platform priority", pref)
	}
	// The history rule: a backend whose recent runs mostly failed
	// (opts.PassOver) is passed over for the next present one, unless
	// every present backend is.
	var present []*Device
	for _, b := range priority {
		if d := findDevice(devices, string(b)); d != nil {
			present = append(present, d)
		}
	}
	var passed []string
	for _, d := range present {
		if why, bad := opts.PassOver[string(d.Backend)]; bad {
			passed = append(passed, why)
			continue
		}
		sel.Chosen = d.ID
		if sel.Reason == "" {
			sel.Reason = fmt.Sprintf("first available backend in platform priority %v", priority)
		}
		if len(passed) > 0 {
			sel.FellBack = true
			sel.PassedOver = passed
			sel.Reason = fmt.Sprintf("passed over by the history rule: %s; next in platform priority %v: %s", strings.Join(passed, "; "), priority, d.Backend)
		}
		return sel, nil
	}
	if len(present) > 0 {
		d := present[0]
		sel.Chosen = d.ID
		if sel.Reason == "" {
			sel.Reason = fmt.Sprintf("first available backend in platform priority %v", priority)
		}
		sel.PassedOver = passed
		sel.Reason += fmt.Sprintf("; every present backend fails the history rule, so %s is used anyway: %s", d.Backend, strings.Join(passed, "; "))
		return sel, nil
	}
	// Nothing in the priority list: take any usable device, else the CPU id.
	if d := firstUsable(devices); d != nil {
		sel.Chosen = d.ID
	} else {
		sel.Chosen = "cpu"
	}
	if sel.Reason == "" {
		sel.Reason = "no backend of the platform priority is present"
	}
	return sel, nil
}

// findDevice returns the first usable device with the id or backend.
func findDevice(devices []Device, want string) *Device {
	for i := range devices {
		d := &devices[i]
		if !d.Usable() {
			continue
		}
		if d.ID == want || string(d.Backend) == want {
			return d
		}
	}
	return nil
}

func firstUsable(devices []Device) *Device {
	for i := range devices {
		if devices[i].Usable() {
			return &devices[i]
		}
	}
	return nil
}

func deviceList(devices []Device) string {
	if len(devices) == 0 {
		return "none"
	}
	ids := make([]string, len(devices))
	for i, d := range devices {
		ids[i] = d.ID
	}
	return strings.Join(ids, ", ")
}

// Summarize describes the chosen default device.
func Summarize(devices []Device, chosen string, platforms []*Platform, opts Options) Summary {
	s := Summary{
		Backend:        backend.CPU,
		DeviceType:     "cpu",
		DefaultDevice:  chosen,
		MemoryStrategy: opts.MemoryStrategy,
		MemoryFraction: opts.MemoryFraction,
	}
	for _, d := range devices {
		if d.DeviceType == "gpu" && d.Usable() {
			s.GPUCount++
		}
	}
	s.UnusableDevices, s.Notes = unusableNotes(devices, chosen)
	def := findDevice(devices, chosen)
	if def == nil {
		return s
	}
	s.Backend = def.Backend
	s.DeviceType = def.DeviceType
	var combined int64
	known := true
	for _, d := range devices {
		if d.Backend == def.Backend && d.Usable() {
			s.DeviceCount++
			if d.TotalMemoryMB == nil {
				known = false
			} else {
				combined += *d.TotalMemoryMB
			}
		}
	}
	s.TotalMemoryMB, s.DeviceMemoryMB = def.TotalMemoryMB, def.TotalMemoryMB
	if def.TotalMemoryMB != nil {
		s.MemoryGB = Ptr(math.Round(float64(*def.TotalMemoryMB)/1024*100) / 100)
	}
	if known && s.DeviceCount > 0 {
		s.CombinedMemoryMB = Ptr(combined)
	}
	s.ComputeCapability = def.ComputeCapability
	s.SupportsFP16 = def.SupportsFP16
	s.SupportsBF16 = def.SupportsBF16
	s.Supports8Bit = def.Supports8Bit
	s.SupportsFP8 = def.SupportsFP8
	s.Architecture = def.Architecture
	s.SupportsMixedPrecision = def.SupportsFP16 || def.SupportsBF16
	s.SupportsDistributed = def.Backend != "cpu" && s.DeviceCount > 1
	for _, p := range platforms {
		if p.Backend != def.Backend {
			continue
		}
		s.DriverVersion = p.DriverVersion
		if p.Backend == "cuda" {
			s.CUDAVersion = p.RuntimeVersion
		}
	}
	return s
}

// unusableNotes says, per backend, that accelerators sit on the bus but
// cannot be used from here, so a summary never silently reads "cpu".
func unusableNotes(devices []Device, chosen string) (int, []string) {
	var order []backend.Backend
	byBackend := map[backend.Backend][]Device{}
	total := 0
	for _, d := range devices {
		if !d.Counted() {
			continue
		}
		total++
		if len(byBackend[d.Backend]) == 0 {
			order = append(order, d.Backend)
		}
		byBackend[d.Backend] = append(byBackend[d.Backend], d)
	}
	var notes []string
	for _, b := range order {
		ds := byBackend[b]
		if findDevice(devices, string(b)) != nil {
			notes = append(notes, fmt.Sprintf("%d more %s %s %s cannot be used from here (%s)", len(ds), ds[0].Vendor, plural(len(ds), ds[0].DeviceType), where(ds[0]), reasons(ds)))
			continue
		}
		def := chosen
		if def == "" {
			def = "cpu"
		}
		notes = append(notes, fmt.Sprintf("%d %s %s %s but %s cannot be used from here (%s); the default device is %s", len(ds), ds[0].Vendor, plural(len(ds), ds[0].DeviceType), where(ds[0]), backendDisplay(b), reasons(ds), def))
	}
	return total, notes
}

func reasons(ds []Device) string {
	seen := map[string]bool{}
	var out []string
	for _, d := range ds {
		r := d.State
		if d.StateReason != "" {
			r += ": " + d.StateReason
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return strings.Join(out, "; ")
}

// backendDisplay is how people write a backend's name.
func backendDisplay(b backend.Backend) string {
	switch b {
	case backend.CUDA:
		return "CUDA"
	case backend.ROCm:
		return "ROCm"
	case backend.XLA:
		return "XLA (TPU)"
	case backend.XPU:
		return "XPU"
	case backend.Neuron:
		return "Neuron"
	case backend.MPS:
		return "MPS"
	}
	return string(b)
}

// where says how devctl knows the device is there.
func where(d Device) string {
	if d.PCIBusID != nil {
		return "on the PCI bus"
	}
	return "present"
}
