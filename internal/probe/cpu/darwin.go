package cpu

import (
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/cpuinfo"
	"github.com/devctl/devctl/internal/probe"
)

// darwinARMFeatures maps macOS hw.optional.* keys to the names Linux
// prints in /proc/cpuinfo "Features", so the capability rules see the same
// words on both systems. FEAT_FP16 is the architecture feature behind both
// Linux's fphp (scalar) and asimdhp (vector) half precision.
var darwinARMFeatures = map[string][]string{
	"hw.optional.arm.FEAT_FP16":    {"fphp", "asimdhp"},
	"hw.optional.arm.FEAT_BF16":    {"bf16"},
	"hw.optional.arm.FEAT_EBF16":   {"ebf16"},
	"hw.optional.arm.FEAT_I8MM":    {"i8mm"},
	"hw.optional.arm.FEAT_DotProd": {"asimddp"},
	"hw.optional.arm.FEAT_FHM":     {"asimdfhm"},
	"hw.optional.arm.FEAT_RDM":     {"asimdrdm"},
	"hw.optional.arm.FEAT_AES":     {"aes"},
	"hw.optional.arm.FEAT_PMULL":   {"pmull"},
	"hw.optional.arm.FEAT_SHA1":    {"sha1"},
	"hw.optional.arm.FEAT_SHA256":  {"sha2"},
	"hw.optional.arm.FEAT_SHA512":  {"sha512"},
	"hw.optional.arm.FEAT_SHA3":    {"sha3"},
	"hw.optional.arm.FEAT_CRC32":   {"crc32"},
	"hw.optional.arm.FEAT_LSE":     {"atomics"},
	"hw.optional.arm.FEAT_JSCVT":   {"jscvt"},
	"hw.optional.arm.FEAT_FCMA":    {"fcma"},
	"hw.optional.arm.FEAT_LRCPC":   {"lrcpc"},
	"hw.optional.arm.FEAT_LRCPC2":  {"ilrcpc"},
	"hw.optional.arm.FEAT_FlagM":   {"flagm"},
	"hw.optional.arm.FEAT_FlagM2":  {"flagm2"},
	"hw.optional.arm.FEAT_SB":      {"sb"},
	"hw.optional.arm.FEAT_FRINTTS": {"frint"},
	"hw.optional.arm.FEAT_DPB":     {"dcpop"},
	"hw.optional.arm.FEAT_DPB2":    {"dcpodp"},
	"hw.optional.arm.FEAT_DIT":     {"dit"},
	"hw.optional.arm.FEAT_SSBS":    {"ssbs"},
	"hw.optional.arm.FEAT_BTI":     {"bti"},
	"hw.optional.arm.FEAT_SME":     {"sme"},
	"hw.optional.arm.FEAT_SME2":    {"sme2"},
	"hw.optional.arm.AdvSIMD":      {"asimd"},
	"hw.optional.floatingpoint":    {"fp"},
	// Keys of macOS 11, before the FEAT_* names.
	"hw.optional.neon":            {"asimd"},
	"hw.optional.neon_fp16":       {"fphp", "asimdhp"},
	"hw.optional.armv8_crc32":     {"crc32"},
	"hw.optional.armv8_1_atomics": {"atomics"},
	"hw.optional.armv8_2_fhm":     {"asimdfhm"},
	"hw.optional.armv8_2_sha512":  {"sha512"},
	"hw.optional.armv8_2_sha3":    {"sha3"},
}

// darwinX86Features maps Intel Mac hw.optional.* keys to Linux flag names.
var darwinX86Features = map[string]string{
	"hw.optional.avx1_0":           "avx",
	"hw.optional.avx2_0":           "avx2",
	"hw.optional.fma":              "fma",
	"hw.optional.f16c":             "f16c",
	"hw.optional.avx512f":          "avx512f",
	"hw.optional.avx512cd":         "avx512cd",
	"hw.optional.avx512dq":         "avx512dq",
	"hw.optional.avx512bw":         "avx512bw",
	"hw.optional.avx512vl":         "avx512vl",
	"hw.optional.avx512ifma":       "avx512ifma",
	"hw.optional.avx512vbmi":       "avx512vbmi",
	"hw.optional.avx512vnni":       "avx512_vnni",
	"hw.optional.avx512bf16":       "avx512_bf16",
	"hw.optional.sse4_1":           "sse4_1",
	"hw.optional.sse4_2":           "sse4_2",
	"hw.optional.supplementalsse3": "ssse3",
}

// darwinX86Words maps machdep.cpu.*features words that Linux spells
// differently; other words are lower-cased as they are.
var darwinX86Words = map[string]string{
	"AVX1.0": "avx", "SSE3": "pni", "SSE4.1": "sse4_1", "SSE4.2": "sse4_2",
	"AVX512VNNI": "avx512_vnni", "AVX512BF16": "avx512_bf16", "AVX512FP16": "avx512_fp16",
	"AVX512VBMI2": "avx512_vbmi2", "AVX512BITALG": "avx512_bitalg",
	"AVX512VPOPCNTDQ": "avx512_vpopcntdq", "AVX512VBMI": "avx512vbmi",
	"AVX512IFMA": "avx512ifma", "CLFSH": "clflush", "EM64T": "lm",
}

// readDarwin asks sysctl. Apple silicon reports performance-level core
// counts (hw.perflevel0 = P cores, hw.perflevel1 = E cores).
func readDarwin(h *host.Host) (Facts, error) {
	get := func(k string) string {
		v, err := h.Sysctl.Get(k)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(v)
	}
	num := func(k string) int {
		n, err := strconv.Atoi(get(k))
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
	brand := get("machdep.cpu.brand_string")
	logical := num("hw.logicalcpu")
	if logical == 0 {
		logical = num("hw.ncpu")
	}
	if brand == "" && logical == 0 {
		return Facts{}, probe.Absent("sysctl has no machdep.cpu.brand_string or hw.logicalcpu")
	}
	f := Facts{
		Model:     brand,
		Logical:   logical,
		Online:    logical,
		Cores:     num("hw.physicalcpu"),
		Sockets:   num("hw.packages"),
		PerfCores: num("hw.perflevel0.physicalcpu"),
		EffCores:  num("hw.perflevel1.physicalcpu"),
		Source:    "sysctl",
	}
	if hz := num("hw.cpufrequency_max"); hz > 0 {
		f.MaxMHz, f.MHzSource = float64(hz)/1e6, "sysctl hw.cpufrequency_max"
	}
	var feats []string
	if get("hw.optional.arm64") == "1" || strings.HasPrefix(brand, "Apple") {
		f.Arch, f.Vendor = "arm64", "Apple"
		for k, names := range darwinARMFeatures {
			if get(k) == "1" {
				feats = append(feats, names...)
			}
		}
	} else {
		f.Arch = "amd64"
		f.Vendor = cpuinfo.X86Vendor(get("machdep.cpu.vendor"))
		for _, k := range []string{"machdep.cpu.features", "machdep.cpu.leaf7_features", "machdep.cpu.extfeatures"} {
			for _, w := range strings.Fields(get(k)) {
				if n, ok := darwinX86Words[w]; ok {
					w = n
				}
				feats = append(feats, w)
			}
		}
		for k, name := range darwinX86Features {
			if get(k) == "1" {
				feats = append(feats, name)
			}
		}
	}
	f.Features = sortedUnique(feats)
	return f, nil
}
