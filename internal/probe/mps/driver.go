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

// Facts is what the driver read from the Mac: the input of Interpret, kept
// in Result.Raw for doctor.
type Facts struct {
	MacOS        string `json:"macos_version"`
	Chip         string `json:"chip"`
	AppleSilicon bool   `json:"apple_silicon"`
	Rosetta      bool   `json:"rosetta"`
	PerfCores    int    `json:"performance_cores,omitempty"`
	EffCores     int    `json:"efficiency_cores,omitempty"`
	GPUCores     int    `json:"gpu_cores,omitempty"`
	MemBytes     uint64 `json:"memory_bytes"`
	WiredLimitMB uint64 `json:"iogpu_wired_limit_mb,omitempty"`
	GPUModel     string `json:"gpu_model,omitempty"`
	AMD          bool   `json:"amd_gpu"`
	// VRAMMiB is the AMD GPU's own memory (Intel Macs).
	VRAMMiB int64 `json:"vram_mib,omitempty"`
	// Source names what answered: sysctl, sysctl+ioreg, sysctl+system_profiler.
	Source string `json:"source"`
}

// Probe implements probe.Driver: collect the facts, then interpret them.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	f, err := Collect(ctx, h)
	if err != nil {
		res := probe.Result{Source: "sysctl"}
		if f != nil {
			res.Source = f.Source
		}
		return res, err
	}
	return Interpret(*f), nil
}

// Collect reads sysctl and, by platform, ioreg (Apple silicon) or
// system_profiler (Intel Macs, for an AMD GPU). It returns a probe.Absent
// error, with the facts read so far, when MPS cannot run here.
//
// The facts are read once per Host: the driver and doctor's Apple checks
// share them (a second caller gets the first one's answer).
func Collect(ctx context.Context, h *host.Host) (*Facts, error) {
	return host.Once(h, factsKey, func() (*Facts, error) { return collect(ctx, h) })
}

// Read gives the facts Collect read on h, if it has finished; it never
// waits (a hung ioreg must not hold doctor).
func Read(h *host.Host) (*Facts, bool) {
	f, _, ok := host.Done[*Facts](h, factsKey)
	return f, ok && f != nil
}

const factsKey = "mps.facts"

func collect(ctx context.Context, h *host.Host) (*Facts, error) {
	if h.OS != "darwin" {
		return nil, probe.Absent("not macOS")
	}
	sys := func(k string) string {
		v, err := h.Sysctl.Get(k)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(v)
	}
	num := func(k string) uint64 { v, _ := ParseUint(sys(k)); return v }

	f := &Facts{Source: "sysctl"}
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

	if !capabilityVersion(f.MacOS, 12, 3) {
		return f, probe.Absent("macOS %q: PyTorch MPS needs macOS 12.3 or newer", f.MacOS)
	}
	if f.AppleSilicon {
		if out, err := h.Runner.Run(ctx, "ioreg", "-rc", "AGXAccelerator"); err == nil {
			if g, ok := ParseIoreg(out); ok {
				f.GPUCores, f.GPUModel = g.Cores, g.Model
				f.Source = "sysctl+ioreg"
			}
		}
		return f, nil
	}
	// An Intel Mac: MPS needs an AMD GPU; the integrated Intel GPU does not count.
	out, err := h.Runner.Run(ctx, "system_profiler", "SPDisplaysDataType", "-json")
	if err != nil {
		return f, probe.Absent("Intel Mac and system_profiler failed: %v", err)
	}
	disps, err := ParseDisplays(out)
	if err != nil {
		return f, fmt.Errorf("parsing system_profiler SPDisplaysDataType: %w", err)
	}
	f.Source = "sysctl+system_profiler"
	for _, d := range disps {
		if d.IsAMD {
			f.AMD, f.GPUModel, f.VRAMMiB = true, d.Model, d.VRAMMiB
			break
		}
	}
	if !f.AMD {
		return f, probe.Absent("Intel Mac without an AMD GPU: MPS unavailable")
	}
	return f, nil
}

// Budget is the memory MPS may use: the AMD GPU's VRAM, else the wired
// limit set with sysctl iogpu.wired_limit_mb, else Metal's recommended
// working set estimated from unified memory (estimated true).
func Budget(f Facts) (bytes uint64, estimated bool) {
	switch {
	case f.AMD:
		return uint64(f.VRAMMiB) << 20, false
	case !f.AppleSilicon:
		return 0, false
	case f.WiredLimitMB > 0:
		return f.WiredLimitMB << 20, false
	case f.MemBytes > 0:
		return WorkingSetEstimate(f.MemBytes), true
	}
	return 0, false
}

// Interpret describes the one MPS device from the collected facts. It
// reads nothing.
func Interpret(f Facts) probe.Result {
	budget, estimated := Budget(f)
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
		"mps_available":        !f.Rosetta,
		"rosetta":              f.Rosetta,
		"unified_memory":       !f.AMD,
		"gpu_budget_estimated": estimated,
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
	if budget > 0 {
		total = probe.Ptr(int64(budget >> 20))
	}
	dev := probe.Device{
		ID:               "mps",
		Index:            0,
		Backend:          "mps",
		DeviceType:       "gpu",
		Vendor:           vendor,
		Name:             name,
		TotalMemoryMB:    total,
		Architecture:     probe.Ptr(gen),
		SupportsFP16:     sup.FP16,
		SupportsBF16:     sup.BF16,
		Supports8Bit:     sup.Int8,
		SupportsFP8:      sup.FP8,
		PytorchDevice:    "mps",
		JAXPlatform:      "metal",
		InferenceContext: "torch.inference_mode",
		Extra:            extra,
	}
	if f.Rosetta {
		// One truth with doctor's apple.rosetta: an x86_64 process under
		// Rosetta 2 has no MPS, so the GPU is listed but not usable here.
		dev.State = probe.StateTranslated
		dev.StateReason = "this process runs as x86_64 under Rosetta 2: x86_64 Python has no MPS; a native arm64 Python can use it"
	}
	detail := fmt.Sprintf("%s, macOS %s", name, f.MacOS)
	if f.GPUCores > 0 {
		detail += ", " + strconv.Itoa(f.GPUCores) + " GPU cores"
	}
	if f.Rosetta {
		detail += ", running under Rosetta 2"
	}
	return probe.Result{
		Devices:  []probe.Device{dev},
		Source:   f.Source,
		Detail:   detail,
		Platform: &probe.Platform{Backend: "mps", RuntimeVersion: probe.Ptr(f.MacOS)},
	}
}

func capabilityVersion(v string, major, minor int) bool {
	ma, mi, ok := capability.ParseVersion(v)
	return ok && (ma > major || (ma == major && mi >= minor))
}
