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
			return sel, nil
		}
		if !opts.FallbackEnabled {
			return nil, fmt.Errorf("device %q: %w (found: %s); enable device.fallback_enabled to fall back", pref, ErrDeviceUnavailable, deviceList(devices))
		}
		sel.FellBack = true
		sel.Reason = fmt.Sprintf("%s is not available on this machine; fell back by platform priority", pref)
	}
	for _, b := range priority {
		if d := findDevice(devices, string(b)); d != nil {
			sel.Chosen = d.ID
			if sel.Reason == "" {
				sel.Reason = fmt.Sprintf("first available backend in platform priority %v", priority)
			}
			return sel, nil
		}
	}
	// Nothing in the priority list: take any device, else the CPU id.
	if len(devices) > 0 {
		sel.Chosen = devices[0].ID
	} else {
		sel.Chosen = "cpu"
	}
	if sel.Reason == "" {
		sel.Reason = "no backend of the platform priority is present"
	}
	return sel, nil
}

func findDevice(devices []Device, want string) *Device {
	for i := range devices {
		d := &devices[i]
		if d.ID == want || string(d.Backend) == want {
			return d
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
		if d.DeviceType == "gpu" {
			s.GPUCount++
		}
	}
	def := findDevice(devices, chosen)
	if def == nil {
		return s
	}
	s.Backend = def.Backend
	s.DeviceType = def.DeviceType
	for _, d := range devices {
		if d.Backend == def.Backend {
			s.DeviceCount++
		}
	}
	s.TotalMemoryMB = def.TotalMemoryMB
	if def.TotalMemoryMB != nil {
		s.MemoryGB = Ptr(math.Round(float64(*def.TotalMemoryMB)/1024*100) / 100)
	}
	s.ComputeCapability = def.ComputeCapability
	s.SupportsFP16 = def.SupportsFP16
	s.SupportsBF16 = def.SupportsBF16
	s.Supports8Bit = def.Supports8Bit
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
