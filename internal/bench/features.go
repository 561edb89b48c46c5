package bench

import (
	"runtime"

	"golang.org/x/sys/cpu"
)

// Features are the CPU capabilities kernel dispatch depends on. They are a
// plain value so that dispatch can be tested for every CPU on any machine.
type Features struct {
	AVX        bool `json:"avx"`
	FMA        bool `json:"fma"`
	AVX2       bool `json:"avx2"`
	AVX512F    bool `json:"avx512f"`
	AVX512BF16 bool `json:"avx512_bf16"`
	AVX512VNNI bool `json:"avx512_vnni"`
	ASIMD      bool `json:"asimd"`
}

// CPUFeatures reads the running CPU's features (and the OS's support for
// the wider registers, which golang.org/x/sys/cpu checks too).
func CPUFeatures() Features {
	return Features{
		AVX:        cpu.X86.HasAVX,
		FMA:        cpu.X86.HasFMA,
		AVX2:       cpu.X86.HasAVX2,
		AVX512F:    cpu.X86.HasAVX512F,
		AVX512BF16: cpu.X86.HasAVX512BF16,
		AVX512VNNI: cpu.X86.HasAVX512VNNI,
		ASIMD:      cpu.ARM64.HasASIMD,
	}
}

// ISA names, as reported in method.isa.
const (
	ISAFMA3      = "fma3-avx2"
	ISAAVX512    = "avx512f"
	ISAAVX512BF  = "avx512_bf16"
	ISAAVX512VN  = "avx512_vnni"
	ISANEON      = "neon"
	ISAGo        = "go"
	ISAAVXMemory = "avx"
	// ISAAVXMemoryNT is the AVX STREAM kernels with non-temporal stores.
	ISAAVXMemoryNT = "avx-nt"
)

// KernelSpec describes one peak-compute kernel: what it computes and how
// many operations one loop iteration performs.
type KernelSpec struct {
	// ID is unique per implementation ("fma_fp32/avx512f").
	ID string
	// Name is the result name (fma_fp32, fma_fp64, dot_bf16, dot_int8).
	Name string
	ISA  string
	Unit string
	// OpsPerIter counts a fused multiply-add as two operations, and a
	// dot-product step as one multiply and one add per element pair.
	OpsPerIter float64
	// Lanes and Accumulators describe the loop, for method.kernel.
	Lanes, Accumulators int
	Instruction         string
}

// Units.
const (
	UnitGFLOPS = "GFLOPS"
	UnitGOPS   = "GOPS"
	UnitGBs    = "GB/s"
)

// Specs lists every kernel devctl has, on any architecture.
var Specs = []KernelSpec{
	{ID: "fma_fp32/" + ISAAVX512, Name: "fma_fp32", ISA: ISAAVX512, Unit: UnitGFLOPS, OpsPerIter: 12 * 16 * 2, Lanes: 16, Accumulators: 12, Instruction: "VFMADD231PS zmm"},
	{ID: "fma_fp64/" + ISAAVX512, Name: "fma_fp64", ISA: ISAAVX512, Unit: UnitGFLOPS, OpsPerIter: 12 * 8 * 2, Lanes: 8, Accumulators: 12, Instruction: "VFMADD231PD zmm"},
	{ID: "fma_fp32/" + ISAFMA3, Name: "fma_fp32", ISA: ISAFMA3, Unit: UnitGFLOPS, OpsPerIter: 12 * 8 * 2, Lanes: 8, Accumulators: 12, Instruction: "VFMADD231PS ymm"},
	{ID: "fma_fp64/" + ISAFMA3, Name: "fma_fp64", ISA: ISAFMA3, Unit: UnitGFLOPS, OpsPerIter: 12 * 4 * 2, Lanes: 4, Accumulators: 12, Instruction: "VFMADD231PD ymm"},
	{ID: "dot_bf16/" + ISAAVX512BF, Name: "dot_bf16", ISA: ISAAVX512BF, Unit: UnitGFLOPS, OpsPerIter: 12 * 16 * 4, Lanes: 16, Accumulators: 12, Instruction: "VDPBF16PS zmm"},
	{ID: "dot_int8/" + ISAAVX512VN, Name: "dot_int8", ISA: ISAAVX512VN, Unit: UnitGOPS, OpsPerIter: 12 * 16 * 8, Lanes: 16, Accumulators: 12, Instruction: "VPDPBUSD zmm"},
	{ID: "fma_fp32/" + ISANEON, Name: "fma_fp32", ISA: ISANEON, Unit: UnitGFLOPS, OpsPerIter: 24 * 4 * 2, Lanes: 4, Accumulators: 24, Instruction: "FMLA v.4s"},
	{ID: "fma_fp64/" + ISANEON, Name: "fma_fp64", ISA: ISANEON, Unit: UnitGFLOPS, OpsPerIter: 24 * 2 * 2, Lanes: 2, Accumulators: 24, Instruction: "FMLA v.2d"},
	{ID: "fma_fp32/" + ISAGo, Name: "fma_fp32", ISA: ISAGo, Unit: UnitGFLOPS, OpsPerIter: 8 * 2, Lanes: 1, Accumulators: 8, Instruction: "scalar a = a*x + y (Go compiler)"},
	{ID: "fma_fp64/" + ISAGo, Name: "fma_fp64", ISA: ISAGo, Unit: UnitGFLOPS, OpsPerIter: 8 * 2, Lanes: 1, Accumulators: 8, Instruction: "scalar a = a*x + y (Go compiler)"},
}

// SpecByID returns the spec with that ID.
func SpecByID(id string) (KernelSpec, bool) {
	for _, s := range Specs {
		if s.ID == id {
			return s, true
		}
	}
	return KernelSpec{}, false
}

// Plan chooses the kernels to run on a CPU of architecture arch with
// features f: the widest ISA for each precision, then bf16 and int8 dot
// products where the CPU has them. It is pure so that dispatch is tested
// for CPUs the test machine is not.
func Plan(arch string, f Features) []string {
	switch arch {
	case "amd64":
		var ids []string
		switch {
		case f.AVX512F:
			ids = append(ids, "fma_fp32/"+ISAAVX512, "fma_fp64/"+ISAAVX512)
		case f.FMA && f.AVX2:
			ids = append(ids, "fma_fp32/"+ISAFMA3, "fma_fp64/"+ISAFMA3)
		default:
			ids = append(ids, "fma_fp32/"+ISAGo, "fma_fp64/"+ISAGo)
		}
		if f.AVX512F && f.AVX512BF16 {
			ids = append(ids, "dot_bf16/"+ISAAVX512BF)
		}
		if f.AVX512F && f.AVX512VNNI {
			ids = append(ids, "dot_int8/"+ISAAVX512VN)
		}
		return ids
	case "arm64":
		if f.ASIMD {
			return []string{"fma_fp32/" + ISANEON, "fma_fp64/" + ISANEON}
		}
	}
	return []string{"fma_fp32/" + ISAGo, "fma_fp64/" + ISAGo}
}

// Kernels returns the runnable kernels this binary has for ids, in order,
// skipping any this architecture lacks (Plan for another arch).
func Kernels(ids []string) []Kernel {
	var out []Kernel
	for _, id := range ids {
		if k, ok := kernelFor(id); ok {
			out = append(out, k)
		}
	}
	return out
}

// HostPlan is Plan for the running CPU.
func HostPlan() []string { return Plan(runtime.GOARCH, CPUFeatures()) }
