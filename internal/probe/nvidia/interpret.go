package nvidia

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/probe"
)

// Devices turns raw answers into devctl devices: one per GPU, id "cuda:N"
// by NVML index. Fields whose answer failed stay null.
func Devices(r *Raw) []probe.Device {
	if r == nil {
		return nil
	}
	out := make([]probe.Device, 0, len(r.GPUs))
	for _, g := range r.GPUs {
		out = append(out, device(g))
	}
	return out
}

func device(g GPU) probe.Device {
	d := probe.Device{
		ID:               fmt.Sprintf("cuda:%d", g.Index),
		Index:            g.Index,
		Backend:          "cuda",
		DeviceType:       "gpu",
		Vendor:           "NVIDIA",
		Name:             "NVIDIA GPU",
		PytorchDevice:    fmt.Sprintf("cuda:%d", g.Index),
		JAXPlatform:      "cuda",
		VisibilityEnv:    "CUDA_VISIBLE_DEVICES",
		InferenceContext: "torch.inference_mode",
	}
	extra := map[string]any{}
	if v, ok := g.Name.Get(); ok && trimNUL(v) != "" {
		d.Name = trimNUL(v)
	}
	if v, ok := g.UUID.Get(); ok && v != "" {
		d.UUID = probe.Ptr(trimNUL(v))
	}
	if v, ok := g.PCI.Get(); ok && v.BusID != "" {
		d.PCIBusID = probe.Ptr(trimNUL(v.BusID))
	}
	if m, ok := memory(g); ok {
		d.TotalMemoryMB = probe.Ptr(int64(m.Total >> 20))
		d.FreeMemoryMB = probe.Ptr(int64(m.Free >> 20))
		extra["memory_used_mb"] = int64(m.Used >> 20)
		if m.Reserved != nil {
			extra["memory_reserved_mb"] = int64(*m.Reserved >> 20)
		}
	}
	var cc string
	if v, ok := g.ComputeCapability.Get(); ok {
		cc = v.String()
		d.ComputeCapability = probe.Ptr(cc)
	}
	if a := architecture(g); a != "" {
		d.Architecture = probe.Ptr(a)
	}
	if cc != "" {
		s := capability.Evaluate(capability.Facts{Backend: "cuda", ComputeCapability: cc})
		d.SupportsFP16, d.SupportsBF16, d.Supports8Bit, d.SupportsFP8 = s.FP16, s.BF16, s.Int8, s.FP8
	}
	if link := pcieLink(g); link != nil {
		d.Link = link
	}

	if v, ok := g.Brand.Get(); ok {
		extra["brand"] = BrandName(v)
	}
	if v, ok := g.MinorNumber.Get(); ok {
		extra["minor_number"] = v
	}
	if v, ok := g.PersistenceMode.Get(); ok {
		extra["persistence_mode"] = enabled(v)
	}
	if v, ok := g.MIGMode.Get(); ok {
		extra[probe.ExtraMIGModeCurrent] = enabled(v.Current)
		extra["mig_mode_pending"] = enabled(v.Pending)
	}
	if v, ok := g.ComputeMode.Get(); ok {
		extra["compute_mode"] = ComputeModeName(v)
	}
	if v, ok := g.PowerUsageMW.Get(); ok {
		extra["power_draw_w"] = watts(v)
	}
	if v, ok := g.PowerLimitMW.Get(); ok {
		extra["power_limit_w"] = watts(v)
	}
	if v, ok := g.PowerDefaultLimitMW.Get(); ok {
		extra["power_default_limit_w"] = watts(v)
	}
	if v, ok := g.TemperatureC.Get(); ok {
		extra["temperature_c"] = int64(v)
	}
	if v, ok := g.ClocksEventReasons.Get(); ok {
		extra["clocks_event_reasons"] = ClocksEventReasonNames(v)
	}
	if v, ok := g.ECCMode.Get(); ok {
		extra["ecc_mode"] = enabled(v.Current)
	}
	if v, ok := g.ECCVolatileUncorrected.Get(); ok {
		extra["ecc_volatile_uncorrected"] = int64(v)
	}
	if v, ok := g.ECCAggregateUncorrected.Get(); ok {
		extra["ecc_aggregate_uncorrected"] = int64(v)
	}
	if v, ok := g.RetiredPagesPending.Get(); ok {
		extra["retired_pages_pending"] = v == 1
	}
	if v, ok := g.RemappedRows.Get(); ok {
		extra["remapped_rows_correctable"] = v.Correctable
		extra["remapped_rows_uncorrectable"] = v.Uncorrectable
		extra["remapped_rows_pending"] = v.Pending
		extra["remapped_rows_failure"] = v.Failure
	}
	if v, ok := g.Processes.Get(); ok {
		extra["compute_processes"] = len(v)
	}
	if v, ok := g.Fabric.Get(); ok && v.State != 0 {
		extra["fabric_state"] = FabricStateName(v.State)
	}
	if g.Lost || g.HandleRet == ErrGPUIsLost {
		extra["lost"] = true
		extra["error"] = ErrGPUIsLost.String()
	} else if g.HandleRet != Success {
		extra["error"] = "no handle: " + g.HandleRet.String()
	}
	if len(extra) > 0 {
		d.Extra = extra
	}
	return d
}

// memory prefers the v2 answer, which knows the reserved amount.
func memory(g GPU) (Memory, bool) {
	if m, ok := g.MemoryV2.Get(); ok {
		return m, true
	}
	return g.Memory.Get()
}

func architecture(g GPU) string {
	if a, ok := g.Architecture.Get(); ok {
		if n := ArchitectureName(a); n != "" {
			return n
		}
	}
	if cc, ok := g.ComputeCapability.Get(); ok {
		return ArchitectureFromCC(cc.Major, cc.Minor)
	}
	return ""
}

// pcieLink reports the link against the system-wide maximum (what the slot
// and GPU can reach together), which is what a degraded-link check compares.
func pcieLink(g GPU) *probe.PCIeLink {
	l := &probe.PCIeLink{}
	any := false
	set := func(dst **int, a *Answer[int]) {
		if v, ok := a.Get(); ok {
			*dst = probe.Ptr(v)
			any = true
		}
	}
	set(&l.GenCurrent, g.PCIeGenCurrent)
	set(&l.GenMax, g.PCIeGenMax)
	set(&l.WidthCurrent, g.PCIeWidthCurrent)
	set(&l.WidthMax, g.PCIeWidthMax)
	if !any {
		return nil
	}
	return l
}

func watts(mw uint32) float64 { return float64(mw) / 1000 }

// Platform is the CUDA software stack the answers describe.
func Platform(r *Raw) *probe.Platform {
	p := &probe.Platform{Backend: "cuda"}
	if r == nil {
		return p
	}
	if v, ok := r.DriverVersion.Get(); ok && v != "" {
		p.DriverVersion = probe.Ptr(trimNUL(v))
	}
	if v, ok := r.CUDADriverVersion.Get(); ok {
		if s := CUDAVersionString(v); s != "" {
			p.RuntimeVersion = probe.Ptr(s)
		}
	}
	if v, ok := r.NVMLVersion.Get(); ok && v != "" {
		p.LibraryVersion = probe.Ptr(trimNUL(v))
	}
	return p
}

// Detail is the short drivers[] note: GPU count, names, versions, and any
// GPU that was lost.
func Detail(r *Raw) string {
	var parts []string
	names := map[string]int{}
	var order []string
	var lost []string
	for _, g := range r.GPUs {
		n := "NVIDIA GPU"
		if v, ok := g.Name.Get(); ok && v != "" {
			n = trimNUL(v)
		}
		if _, seen := names[n]; !seen {
			order = append(order, n)
		}
		names[n]++
		if g.Lost || g.HandleRet == ErrGPUIsLost {
			lost = append(lost, fmt.Sprintf("cuda:%d", g.Index))
		}
	}
	var gpus []string
	for _, n := range order {
		gpus = append(gpus, fmt.Sprintf("%d× %s", names[n], n))
	}
	noun := "GPUs"
	if len(r.GPUs) == 1 {
		noun = "GPU"
	}
	head := fmt.Sprintf("%d %s", len(r.GPUs), noun)
	if len(gpus) > 0 {
		head += " (" + strings.Join(gpus, ", ") + ")"
	}
	parts = append(parts, head)
	if v, ok := r.DriverVersion.Get(); ok && v != "" {
		parts = append(parts, "driver "+trimNUL(v))
	}
	if v, ok := r.CUDADriverVersion.Get(); ok && v > 0 {
		parts = append(parts, "CUDA "+CUDAVersionString(v))
	}
	if len(lost) > 0 {
		parts = append(parts, fmt.Sprintf("%s lost (%s)", strings.Join(lost, ", "), ErrGPUIsLost.Name()))
	}
	if r.Incomplete {
		parts = append(parts, "incomplete: deadline reached")
	}
	return strings.Join(parts, "; ")
}
