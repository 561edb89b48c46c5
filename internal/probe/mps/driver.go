// Package mps is the Apple Metal Performance Shaders probe driver.
//
// PyTorch's MPS backend needs macOS 12.3 and an Apple-silicon or AMD GPU;
// bf16 needs macOS 14 on Apple silicon. Everything here comes from sysctl
// and two allowlisted programs (ioreg, system_profiler) through the Host,
// so the driver is pure Go (it builds with CGO_ENABLED=0) and its parsing
// is tested on Linux with recorded answers.
package mps

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes the Mac's GPU for MPS.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "mps" }

// Facts is what the driver learned, kept in Result.Raw for doctor.
type Facts struct {
	MacOS          string `json:"macos_version"`
	Chip           string `json:"chip"`
	AppleSilicon   bool   `json:"apple_silicon"`
	Rosetta        bool   `json:"rosetta"`
	PerfCores      int    `json:"performance_cores,omitempty"`
	EffCores       int    `json:"efficiency_cores,omitempty"`
	GPUCores       int    `json:"gpu_cores,omitempty"`
	MemBytes       uint64 `json:"memory_bytes"`
	WiredLimitMB   uint64 `json:"iogpu_wired_limit_mb,omitempty"`
	BudgetBytes    uint64 `json:"gpu_budget_bytes"`
	BudgetEstimate bool   `json:"gpu_budget_estimated"`
	GPUModel       string `json:"gpu_model,omitempty"`
	AMD            bool   `json:"amd_gpu"`
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	if h.OS != "darwin" {
		return probe.Result{Source: "sysctl"}, probe.Absent("not macOS")
	}
	sys := func(k string) string {
		v, err := h.Sysctl.Get(k)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(v)
	}
	num := func(k string) uint64 { v, _ := ParseUint(sys(k)); return v }

	var f Facts
	f.MacOS = sys("kern.osproductversion")
	if f.MacOS == "" {
		if out, err := h.Runner.Run(ctx, "sw_vers", "-productVersion"); err == nil {
			f.MacOS = strings.TrimSpace(string(out))
		}
	}
	f.Chip = sys("machdep.cpu.brand_string")
	f.Rosetta = sys("sysctl.proc_translated") == "1"
	f.AppleSilicon = sys("hw.optional.arm64") == "1" || h.Arch == "arm64" || strings.HasPrefix(f.Chip, "Apple")
	f.MemBytes = num("hw.memsize")
	f.PerfCores = int(num("hw.perflevel0.physicalcpu"))
	f.EffCores = int(num("hw.perflevel1.physicalcpu"))
	if f.PerfCores == 0 {
		f.PerfCores = int(num("hw.physicalcpu"))
	}
	f.WiredLimitMB = num("iogpu.wired_limit_mb")
	src := "sysctl"

	if !capabilityVersion(f.MacOS, 12, 3) {
		return probe.Result{Source: src, Raw: f}, probe.Absent("macOS %q: PyTorch MPS needs macOS 12.3 or newer", f.MacOS)
	}

	var vramMiB int64
	if f.AppleSilicon {
		if out, err := h.Runner.Run(ctx, "ioreg", "-rc", "AGXAccelerator"); err == nil {
			if g, ok := ParseIoreg(out); ok {
				f.GPUCores, f.GPUModel = g.Cores, g.Model
				src = "sysctl+ioreg"
			}
		}
		switch {
		case f.WiredLimitMB > 0:
			f.BudgetBytes = f.WiredLimitMB << 20
		case f.MemBytes > 0:
			f.BudgetBytes, f.BudgetEstimate = WorkingSetEstimate(f.MemBytes), true
		}
	} else {
		// An Intel Mac: MPS needs an AMD GPU; the integrated Intel GPU does not count.
		out, err := h.Runner.Run(ctx, "system_profiler", "SPDisplaysDataType", "-json")
		if err != nil {
			return probe.Result{Source: src, Raw: f}, probe.Absent("Intel Mac and system_profiler failed: %v", err)
		}
		disps, err := ParseDisplays(out)
		if err != nil {
			return probe.Result{Source: src, Raw: f}, fmt.Errorf("parsing system_profiler SPDisplaysDataType: %w", err)
		}
		for _, d := range disps {
			if d.IsAMD {
				f.AMD, f.GPUModel, vramMiB = true, d.Model, d.VRAMMiB
				break
			}
		}
		if !f.AMD {
			return probe.Result{Source: "sysctl+system_profiler", Raw: f}, probe.Absent("Intel Mac without an AMD GPU: MPS unavailable")
		}
		src = "sysctl+system_profiler"
		f.BudgetBytes = uint64(vramMiB) << 20
	}

	gen := "apple"
	vendor := "Apple"
	if f.AMD {
		gen, vendor = "amd", "AMD"
	}
	sup := capability.Evaluate(capability.Facts{Backend: "mps", OSVersion: f.MacOS, Generation: gen})
	name := f.GPUModel
	if name == "" {
		name = f.Chip
	}
	if name == "" {
		name = "Apple GPU"
	}
	extra := map[string]any{
		"macos_version":        f.MacOS,
		"mps_available":        true,
		"rosetta":              f.Rosetta,
		"unified_memory":       !f.AMD,
		"gpu_budget_estimated": f.BudgetEstimate,
	}
	if f.Chip != "" {
		extra["chip"] = f.Chip
	}
	if f.GPUCores > 0 {
		extra["gpu_cores"] = f.GPUCores
	}
	if f.PerfCores > 0 {
		extra["performance_cores"] = f.PerfCores
	}
	if f.EffCores > 0 {
		extra["efficiency_cores"] = f.EffCores
	}
	if f.MemBytes > 0 && !f.AMD {
		extra["unified_memory_mb"] = int64(f.MemBytes >> 20)
	}
	if f.WiredLimitMB > 0 {
		extra["iogpu_wired_limit_mb"] = f.WiredLimitMB
	}
	var total *int64
	if f.BudgetBytes > 0 {
		total = probe.Ptr(int64(f.BudgetBytes >> 20))
	}
	arch := gen
	dev := probe.Device{
		ID:               "mps",
		Index:            0,
		Backend:          "mps",
		DeviceType:       "gpu",
		Vendor:           vendor,
		Name:             name,
		TotalMemoryMB:    total,
		Architecture:     &arch,
		SupportsFP16:     sup.FP16,
		SupportsBF16:     sup.BF16,
		Supports8Bit:     sup.Int8,
		SupportsFP8:      sup.FP8,
		PytorchDevice:    "mps",
		JAXPlatform:      "metal",
		InferenceContext: "torch.inference_mode",
		Extra:            extra,
	}
	detail := fmt.Sprintf("%s, macOS %s", name, f.MacOS)
	if f.GPUCores > 0 {
		detail += ", " + strconv.Itoa(f.GPUCores) + " GPU cores"
	}
	if f.Rosetta {
		detail += ", running under Rosetta 2"
	}
	ver := f.MacOS
	return probe.Result{
		Devices:  []probe.Device{dev},
		Source:   src,
		Detail:   detail,
		Raw:      f,
		Platform: &probe.Platform{Backend: "mps", RuntimeVersion: &ver},
	}, nil
}

func capabilityVersion(v string, major, minor int) bool {
	ma, mi, ok := capability.ParseVersion(v)
	return ok && (ma > major || (ma == major && mi >= minor))
}
