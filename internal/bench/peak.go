package bench

import "fmt"

// CPUID is what the peak table needs to know about a CPU model.
type CPUID struct {
	// Vendor is /proc/cpuinfo's vendor_id (GenuineIntel, AuthenticAMD,
	// HygonGenuine) on x86, "Apple" on macOS arm64.
	Vendor string `json:"vendor,omitempty"`
	Family int    `json:"family,omitempty"`
	Model  int    `json:"model,omitempty"`
	// Implementer and Part are arm64's "CPU implementer" and "CPU part".
	Implementer int `json:"implementer,omitempty"`
	Part        int `json:"part,omitempty"`
}

// Peak is the per-core throughput a kernel should reach.
type Peak struct {
	// OpsPerCycle per core: FMA units (or dot-product units) × lanes × ops
	// per lane per instruction.
	OpsPerCycle float64
	// Units is the number of vector units of this width that issue the
	// kernel's instruction each cycle.
	Units int
	// Note says what the figure assumes and where it is uncertain.
	Note string
}

// PeakFor returns the per-core peak of a kernel on a CPU, or ok=false when
// devctl's table does not know the microarchitecture (then the theoretical
// figure and the efficiency are null rather than a guess).
//
// The table (ops per cycle per core; fp64 is half of fp32, a dot product
// counts one multiply and one add per element pair):
//
//	x86 FMA3 (ymm):  Intel Haswell and later: 2 FMA units → fp32 32, fp64 16.
//	                 AMD Zen 1/Zen+ (family 0x17 model < 0x30), Hygon: 1 → 16/8.
//	                 AMD Zen 2 and later: 2 → 32/16.
//	AVX-512 (zmm):   Intel: assumes 2 512-bit FMA units (Xeon Gold 6xxx,
//	                 Platinum, Sapphire Rapids and later) → 64/32; parts with
//	                 one unit (Bronze, Silver, some Gold 5xxx, client) reach half.
//	                 AMD Zen 4 (0x19): 512-bit ops on 256-bit units → 32/16.
//	                 AMD Zen 5 (0x1A): full 512-bit datapath on desktop and
//	                 EPYC → 64/32 (mobile Zen 5 reaches half).
//	VDPBF16PS zmm:   16 lanes × 2 pairs × 2 ops = 64 per instruction, issued
//	                 like the zmm FMA above (2 units Intel/Zen 5, 1 on Zen 4).
//	VPDPBUSD zmm:    16 lanes × 4 pairs × 2 ops = 128 per instruction, same
//	                 issue assumption.
//	NEON FMLA q:     pipes × 4 lanes × 2: Apple P-cores and Neoverse V1/V2/V3,
//	                 Cortex-X1..: 4 pipes → 32/16; Neoverse N1/N2/N3,
//	                 Cortex-A76/A77/A78: 2 → 16/8. Other cores: unknown.
//	Go fallback:     unknown (depends on what the compiler emits).
//
// Uncertainty: issue-port counts are from vendors' optimisation manuals and
// public microbenchmarks; turbo frequencies under all-core vector load are
// usually lower than the single-core maximum, so all-core efficiency well
// under 100% is expected on many CPUs.
func PeakFor(spec KernelSpec, c CPUID, goos string) (Peak, bool) {
	units, note, ok := vectorUnits(spec.ISA, c, goos)
	if !ok {
		return Peak{}, false
	}
	perInstr := spec.OpsPerIter / float64(spec.Accumulators)
	return Peak{OpsPerCycle: float64(units) * perInstr, Units: units, Note: note}, true
}

func vectorUnits(isa string, c CPUID, goos string) (int, string, bool) {
	switch isa {
	case ISAFMA3:
		switch {
		case c.Vendor == "GenuineIntel":
			return 2, "Intel: 2 FMA units (Haswell and later)", true
		case c.Vendor == "HygonGenuine":
			return 1, "Hygon (Zen 1 core): 256-bit FMA at 1 per cycle", true
		case c.Vendor == "AuthenticAMD" && c.Family == 0x17 && c.Model < 0x30:
			return 1, "AMD Zen 1/Zen+: 256-bit FMA at 1 per cycle", true
		case c.Vendor == "AuthenticAMD" && c.Family >= 0x17:
			return 2, "AMD Zen 2 or later: 2 FMA units", true
		}
	case ISAAVX512, ISAAVX512BF, ISAAVX512VN:
		switch {
		case c.Vendor == "GenuineIntel":
			return 2, "Intel: assumes 2 512-bit FMA units (one-unit parts reach half)", true
		case c.Vendor == "AuthenticAMD" && c.Family == 0x19:
			return 1, "AMD Zen 4: 512-bit operations on 256-bit units", true
		case c.Vendor == "AuthenticAMD" && c.Family == 0x1A:
			return 2, "AMD Zen 5: full 512-bit datapath (mobile Zen 5 reaches half)", true
		}
	case ISANEON:
		if goos == "darwin" || c.Implementer == 0x61 {
			return 4, "Apple P-core: 4 FP/SIMD pipes (E-cores are slower)", true
		}
		if c.Implementer == 0x41 {
			switch c.Part {
			case 0xd40, 0xd4f, 0xd84, 0xd44, 0xd4c, 0xd82:
				return 4, fmt.Sprintf("Arm core part %#x: 4 128-bit FP pipes", c.Part), true
			case 0xd0c, 0xd49, 0xd8e, 0xd0b, 0xd0d, 0xd41, 0xd4b:
				return 2, fmt.Sprintf("Arm core part %#x: 2 128-bit FP pipes", c.Part), true
			}
		}
	}
	return 0, "", false
}

// Theoretical is cores × frequency × ops per cycle, in G-ops per second.
func Theoretical(cores int, freqMHz, opsPerCycle float64) float64 {
	return float64(cores) * freqMHz / 1000 * opsPerCycle
}

// Efficiency is measured / theoretical, or nil when the theoretical figure
// is unknown or zero.
func Efficiency(measured float64, theoretical *float64) *float64 {
	if theoretical == nil || *theoretical <= 0 {
		return nil
	}
	e := measured / *theoretical
	return &e
}
