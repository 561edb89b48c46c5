// Package capability decides which numeric precisions a device can run
// well, from one table of rules. Every driver and every command (probe,
// recommend, doctor) asks this table; no other code hard-codes a threshold.
package capability

import (
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
)

// Facts are what the rules look at. Drivers fill what they know.
type Facts struct {
	Backend backend.Backend
	// ComputeCapability is CUDA's "major.minor".
	ComputeCapability string
	// CPUFeatures are lower-case kernel flag names (avx512_bf16, asimddp, ...).
	CPUFeatures []string
	// OSVersion is the macOS product version for MPS ("14.2.1").
	OSVersion string
	// Generation is the family/generation string for other accelerators:
	// ROCm gfx target ("gfx90a"), Intel family ("max", "arc", "flex",
	// "battlemage"), TPU version ("v2", "v3", "v4", "v5e", "v5p", "v6e",
	// "7x"), Neuron ("inf1", "inf2", "trn1", "trn2"), MPS GPU maker
	// ("apple" or "amd").
	Generation string
}

// Rule says a device supports a precision when Holds returns true.
type Rule struct {
	Backend   backend.Backend
	Precision Precision
	// Why is the condition in words, shown by recommend and doctor.
	Why   string
	Holds func(Facts) bool
}

// Support is the outcome for one device.
type Support struct {
	FP16, BF16, Int8, FP8, Int4 bool
	// Reasons maps a precision to the rule that granted it.
	Reasons map[Precision]string
}

// Without is s with precision p no longer supported (what ran on the
// device outranks what its rules claim). fp32 is always supported.
func (s Support) Without(p Precision) Support {
	switch p {
	case FP16:
		s.FP16 = false
	case BF16:
		s.BF16 = false
	case Int8:
		s.Int8 = false
	case Int4:
		s.Int4 = false
	case FP8:
		s.FP8 = false
	}
	return s
}

// Has reports whether a precision is supported. fp32 always is.
func (s Support) Has(precision Precision) bool {
	switch precision {
	case FP32:
		return true
	case FP16:
		return s.FP16
	case BF16:
		return s.BF16
	case Int8:
		return s.Int8
	case Int4:
		return s.Int4
	case FP8:
		return s.FP8
	}
	return false
}

// Rules is the table. Order does not matter: a precision is supported when
// any rule for the backend holds.
var Rules = []Rule{
	// NVIDIA CUDA, by compute capability.
	{"cuda", FP16, "compute capability >= 7.0 (Volta tensor cores)", ccAtLeast(7, 0)},
	{"cuda", BF16, "compute capability >= 8.0 (Ampere)", ccAtLeast(8, 0)},
	{"cuda", Int8, "compute capability >= 7.5 (Turing int8 tensor cores; older GPUs only have slow 8-bit matmul)", ccAtLeast(7, 5)},
	{"cuda", Int4, "bitsandbytes 4-bit runs on every CUDA GPU", func(Facts) bool { return true }},
	{"cuda", FP8, "compute capability >= 8.9 (Ada, Hopper and newer)", ccAtLeast(8, 9)},

	// CPUs, by instruction-set feature.
	{"cpu", BF16, "CPU has avx512_bf16, amx_bf16 or arm bf16", anyFeature("avx512_bf16", "amx_bf16", "bf16")},
	{"cpu", Int8, "CPU has a VNNI, AMX-int8, i8mm or asimddp dot-product feature", anyFeature("avx512_vnni", "avx_vnni", "amx_int8", "i8mm", "asimddp")},
	{"cpu", FP16, "CPU has avx512_fp16, or arm fphp with asimdhp", func(f Facts) bool {
		return hasFeature(f, "avx512_fp16") || (hasFeature(f, "fphp") && hasFeature(f, "asimdhp"))
	}},

	// Apple MPS, by macOS version. Generation is "apple" (Apple silicon)
	// or "amd" (an AMD GPU in an Intel Mac); bf16 on MPS needs both macOS 14
	// and Apple silicon (pytorch#141864).
	{"mps", FP16, "MPS runs fp16 on macOS >= 12.3", macOSAtLeast(12, 3)},
	{"mps", BF16, "MPS supports bf16 from macOS 14 (Sonoma) on Apple silicon", func(f Facts) bool {
		return versionAtLeast(f.OSVersion, 14, 0) && !strings.EqualFold(f.Generation, "amd")
	}},

	// Google TPU: the MXUs are bf16.
	{"xla", BF16, "TPU matrix units are bf16-native", func(Facts) bool { return true }},
	{"xla", Int8, "TPU v5e and newer have int8 matrix units", generationIn("v5e", "v5p", "v6e", "7x")},
	{"xla", FP8, "TPU7x (Ironwood) has fp8", generationIn("7x")},

	// AMD ROCm, by gfx target.
	{"rocm", FP16, "every ROCm-supported GPU runs fp16", func(Facts) bool { return true }},
	{"rocm", BF16, "bf16 matrix cores on CDNA (gfx908 and newer) and RDNA3+", gfxBF16},
	{"rocm", Int8, "int8 dot products on gfx906 and newer (not gfx1010, RDNA1 without dot4)", gfxInt8},
	{"rocm", Int4, "4-bit weights dequantised to fp16 for the matmul on gfx906 and newer (not gfx1010): bitsandbytes' ROCm backend (experimental, official from v0.50) and vLLM's Triton AWQ/GPTQ kernels", gfxInt8},
	{"rocm", FP8, "fp8 on CDNA3 (gfx94x), CDNA4 (gfx950) and RDNA4 (gfx12)", func(f Facts) bool {
		g := f.Generation
		return strings.HasPrefix(g, "gfx94") || strings.HasPrefix(g, "gfx95") || strings.HasPrefix(g, "gfx12")
	}},

	// Intel XPU, by product family.
	{"xpu", FP16, "Intel Xe GPUs run fp16", func(Facts) bool { return true }},
	{"xpu", BF16, "XMX engines on Data Center Max, Arc, Flex and Battlemage run bf16", generationIn("max", "arc", "flex", "battlemage")},
	{"xpu", Int8, "XMX engines run int8", generationIn("max", "arc", "flex", "battlemage")},

	// AWS Neuron.
	{"neuron", FP16, "NeuronCores run fp16", func(Facts) bool { return true }},
	{"neuron", BF16, "NeuronCores run bf16", func(Facts) bool { return true }},
	{"neuron", Int8, "NeuronCore-v2 (Inferentia2, Trainium) and newer run int8", generationIn("inf2", "trn1", "trn2", "trn3")},
	{"neuron", FP8, "Trainium2 and newer run fp8", generationIn("trn2", "trn3")},
}

// Evaluate applies the table to one device.
func Evaluate(f Facts) Support {
	s := Support{Reasons: map[Precision]string{}}
	for _, r := range Rules {
		if r.Backend != f.Backend || !r.Holds(f) {
			continue
		}
		if _, done := s.Reasons[r.Precision]; done {
			continue
		}
		s.Reasons[r.Precision] = r.Why
		switch r.Precision {
		case FP16:
			s.FP16 = true
		case BF16:
			s.BF16 = true
		case Int8:
			s.Int8 = true
		case Int4:
			s.Int4 = true
		case FP8:
			s.FP8 = true
		}
	}
	return s
}

// Requirement returns the rule text for a precision on a backend, so a
// refusal can say what would have been needed ("" when no rule exists).
func Requirement(b backend.Backend, precision Precision) string {
	for _, r := range Rules {
		if r.Backend == b && r.Precision == precision {
			return r.Why
		}
	}
	return ""
}

// ParseVersion splits "8.9", "14.2.1" or a package release ("v0.8.1rc1",
// "1.13a0") into major and minor: a leading v and a pre-release suffix
// on the minor number are ignored.
func ParseVersion(v string) (major, minor int, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 3)
	if len(parts) == 0 || parts[0] == "" {
		return 0, 0, false
	}
	major, err := strconv.Atoi(parts[0])
	if err != nil {
		return 0, 0, false
	}
	if len(parts) > 1 {
		digits := strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
		if minor, err = strconv.Atoi(digits); err != nil {
			return 0, 0, false
		}
	}
	return major, minor, true
}

func ccAtLeast(major, minor int) func(Facts) bool {
	return func(f Facts) bool { return versionAtLeast(f.ComputeCapability, major, minor) }
}

func macOSAtLeast(major, minor int) func(Facts) bool {
	return func(f Facts) bool { return versionAtLeast(f.OSVersion, major, minor) }
}

func versionAtLeast(v string, major, minor int) bool {
	ma, mi, ok := ParseVersion(v)
	if !ok {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

func hasFeature(f Facts, name string) bool {
	for _, x := range f.CPUFeatures {
		if x == name {
			return true
		}
	}
	return false
}

func anyFeature(names ...string) func(Facts) bool {
	return func(f Facts) bool {
		for _, n := range names {
			if hasFeature(f, n) {
				return true
			}
		}
		return false
	}
}

func generationIn(gens ...string) func(Facts) bool {
	return func(f Facts) bool {
		for _, g := range gens {
			if strings.EqualFold(f.Generation, g) {
				return true
			}
		}
		return false
	}
}

// gfxNumber turns "gfx90a" into 0x90a-like ordering: the major digits and
// the hex stepping, so gfx906 < gfx908 < gfx90a < gfx942 < gfx1100.
func gfxNumber(g string) (major int, step int, ok bool) {
	g = strings.TrimPrefix(strings.ToLower(g), "gfx")
	if len(g) < 3 {
		return 0, 0, false
	}
	m, err := strconv.Atoi(g[:len(g)-2])
	if err != nil {
		return 0, 0, false
	}
	s, err := strconv.ParseInt(g[len(g)-2:], 16, 32)
	if err != nil {
		return 0, 0, false
	}
	return m, int(s), true
}

func gfxInt8(f Facts) bool {
	m, s, ok := gfxNumber(f.Generation)
	if !ok {
		return false
	}
	if m == 10 && s == 0x10 {
		return false
	}
	return m > 9 || (m == 9 && s >= 0x06)
}

func gfxBF16(f Facts) bool {
	m, s, ok := gfxNumber(f.Generation)
	if !ok {
		return false
	}
	return (m == 9 && s >= 0x08) || m >= 11
}
