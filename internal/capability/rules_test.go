package capability_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
)

// got is the part of Support the table decides, without the reason texts.
type got struct{ FP16, BF16, Int8, FP8, Int4 bool }

func eval(f capability.Facts) got {
	s := capability.Evaluate(f)
	return got{s.FP16, s.BF16, s.Int8, s.FP8, s.Int4}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name  string
		facts capability.Facts
		want  got
	}{
		// CUDA by compute capability.
		{"a Pascal P100 (6.0) has only 4-bit", capability.Facts{Backend: "cuda", ComputeCapability: "6.0"}, got{Int4: true}},
		{"a V100 (7.0) adds fp16", capability.Facts{Backend: "cuda", ComputeCapability: "7.0"}, got{FP16: true, Int4: true}},
		{"a Jetson Xavier (7.2) has fp16 but no int8 tensor cores", capability.Facts{Backend: "cuda", ComputeCapability: "7.2"}, got{FP16: true, Int4: true}},
		{"a T4 (7.5) adds int8", capability.Facts{Backend: "cuda", ComputeCapability: "7.5"}, got{FP16: true, Int8: true, Int4: true}},
		{"an A100 (8.0) adds bf16", capability.Facts{Backend: "cuda", ComputeCapability: "8.0"}, got{FP16: true, BF16: true, Int8: true, Int4: true}},
		{"an RTX 3090 (8.6) has bf16 but no fp8", capability.Facts{Backend: "cuda", ComputeCapability: "8.6"}, got{FP16: true, BF16: true, Int8: true, Int4: true}},
		{"an L4 (8.9) adds fp8", capability.Facts{Backend: "cuda", ComputeCapability: "8.9"}, got{FP16: true, BF16: true, Int8: true, FP8: true, Int4: true}},
		{"an H100 (9.0) has everything", capability.Facts{Backend: "cuda", ComputeCapability: "9.0"}, got{FP16: true, BF16: true, Int8: true, FP8: true, Int4: true}},
		{"a Blackwell (10.0) compares as a number, not text", capability.Facts{Backend: "cuda", ComputeCapability: "10.0"}, got{FP16: true, BF16: true, Int8: true, FP8: true, Int4: true}},
		{"an unknown compute capability grants only 4-bit", capability.Facts{Backend: "cuda"}, got{Int4: true}},

		// CPUs by feature flag.
		{"a plain x86 CPU has nothing but fp32", capability.Facts{Backend: "cpu", CPUFeatures: []string{"avx2", "fma"}}, got{}},
		{"Sapphire Rapids AMX gives bf16 and int8", capability.Facts{Backend: "cpu", CPUFeatures: []string{"amx_bf16", "amx_int8", "avx512_fp16"}}, got{FP16: true, BF16: true, Int8: true}},
		{"a Cascade Lake VNNI CPU gives int8 only", capability.Facts{Backend: "cpu", CPUFeatures: []string{"avx512f", "avx512_vnni"}}, got{Int8: true}},
		{"a Neoverse V1 gives bf16, int8 and fp16", capability.Facts{Backend: "cpu", CPUFeatures: []string{"fphp", "asimdhp", "asimddp", "bf16", "i8mm"}}, got{FP16: true, BF16: true, Int8: true}},
		{"arm fphp without asimdhp is not fp16", capability.Facts{Backend: "cpu", CPUFeatures: []string{"fphp"}}, got{}},

		// Apple MPS by macOS version and GPU maker.
		{"macOS 12.2 has no MPS precisions", capability.Facts{Backend: "mps", OSVersion: "12.2", Generation: "apple"}, got{}},
		{"macOS 12.3 runs fp16", capability.Facts{Backend: "mps", OSVersion: "12.3", Generation: "apple"}, got{FP16: true}},
		{"macOS 13.6.1 still lacks bf16", capability.Facts{Backend: "mps", OSVersion: "13.6.1", Generation: "apple"}, got{FP16: true}},
		{"macOS 14.0 on Apple silicon adds bf16", capability.Facts{Backend: "mps", OSVersion: "14.0", Generation: "apple"}, got{FP16: true, BF16: true}},
		{"macOS 15 on an AMD GPU Mac has no bf16", capability.Facts{Backend: "mps", OSVersion: "15.1", Generation: "amd"}, got{FP16: true}},
		{"an unreadable macOS version grants nothing", capability.Facts{Backend: "mps", OSVersion: "Sonoma"}, got{}},

		// Google TPU by generation.
		{"a TPU v4 is bf16-native", capability.Facts{Backend: "xla", Generation: "v4"}, got{BF16: true}},
		{"a TPU v5e adds int8", capability.Facts{Backend: "xla", Generation: "v5e"}, got{BF16: true, Int8: true}},
		{"a TPU v5p has int8", capability.Facts{Backend: "xla", Generation: "v5p"}, got{BF16: true, Int8: true}},
		{"a TPU v6e has int8", capability.Facts{Backend: "xla", Generation: "v6e"}, got{BF16: true, Int8: true}},
		{"a TPU7x adds fp8", capability.Facts{Backend: "xla", Generation: "7x"}, got{BF16: true, Int8: true, FP8: true}},

		// AMD ROCm by gfx target.
		{"an MI50 (gfx906) has fp16, int8 and 4-bit weights but no bf16", capability.Facts{Backend: "rocm", Generation: "gfx906"}, got{Int4: true, FP16: true, Int8: true}},
		{"an MI100 (gfx908) adds bf16", capability.Facts{Backend: "rocm", Generation: "gfx908"}, got{Int4: true, FP16: true, BF16: true, Int8: true}},
		{"an MI210 (gfx90a) has bf16 and int8", capability.Facts{Backend: "rocm", Generation: "gfx90a"}, got{Int4: true, FP16: true, BF16: true, Int8: true}},
		{"an MI300X (gfx942) adds fp8", capability.Facts{Backend: "rocm", Generation: "gfx942"}, got{Int4: true, FP16: true, BF16: true, Int8: true, FP8: true}},
		{"an MI355X (gfx950) has fp8", capability.Facts{Backend: "rocm", Generation: "gfx950"}, got{Int4: true, FP16: true, BF16: true, Int8: true, FP8: true}},
		{"an RX 5700 (gfx1010) lacks int8 dot products", capability.Facts{Backend: "rocm", Generation: "gfx1010"}, got{FP16: true}},
		{"an RX 6800 (gfx1030) has int8 but no bf16", capability.Facts{Backend: "rocm", Generation: "gfx1030"}, got{Int4: true, FP16: true, Int8: true}},
		{"an RX 7900 (gfx1100) adds bf16", capability.Facts{Backend: "rocm", Generation: "gfx1100"}, got{Int4: true, FP16: true, BF16: true, Int8: true}},
		{"an R9700 (gfx1201) adds fp8", capability.Facts{Backend: "rocm", Generation: "gfx1201"}, got{Int4: true, FP16: true, BF16: true, Int8: true, FP8: true}},
		{"an RX 470 (gfx803) has fp16 only", capability.Facts{Backend: "rocm", Generation: "gfx803"}, got{FP16: true}},
		{"an unknown gfx target has fp16 only", capability.Facts{Backend: "rocm"}, got{FP16: true}},

		// Intel XPU by family.
		{"a Data Center Max has bf16 and int8", capability.Facts{Backend: "xpu", Generation: "max"}, got{FP16: true, BF16: true, Int8: true}},
		{"an Arc A770 has bf16 and int8", capability.Facts{Backend: "xpu", Generation: "arc"}, got{FP16: true, BF16: true, Int8: true}},
		{"a Flex 170 has bf16 and int8", capability.Facts{Backend: "xpu", Generation: "flex"}, got{FP16: true, BF16: true, Int8: true}},
		{"a Battlemage has bf16 and int8", capability.Facts{Backend: "xpu", Generation: "battlemage"}, got{FP16: true, BF16: true, Int8: true}},
		{"an unknown Intel GPU has fp16 only", capability.Facts{Backend: "xpu", Generation: "integrated"}, got{FP16: true}},

		// AWS Neuron by generation.
		{"an Inferentia1 has fp16 and bf16", capability.Facts{Backend: "neuron", Generation: "inf1"}, got{FP16: true, BF16: true}},
		{"an Inferentia2 adds int8", capability.Facts{Backend: "neuron", Generation: "inf2"}, got{FP16: true, BF16: true, Int8: true}},
		{"a Trainium1 has int8 but no fp8", capability.Facts{Backend: "neuron", Generation: "trn1"}, got{FP16: true, BF16: true, Int8: true}},
		{"a Trainium2 adds fp8", capability.Facts{Backend: "neuron", Generation: "trn2"}, got{FP16: true, BF16: true, Int8: true, FP8: true}},

		{"an unknown backend has nothing", capability.Facts{Backend: "quantum"}, got{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, eval(tt.facts)); diff != "" {
				t.Errorf("Evaluate(%+v) (-want +got):\n%s", tt.facts, diff)
			}
		})
	}
}

func TestEvaluateGivesAReasonForEveryGrant(t *testing.T) {
	s := capability.Evaluate(capability.Facts{Backend: "rocm", Generation: "gfx942"})
	for _, p := range []capability.Precision{capability.FP16, capability.BF16, capability.Int8, capability.FP8} {
		if !s.Has(p) || s.Reasons[p] == "" {
			t.Errorf("%s: has=%v reason=%q", p, s.Has(p), s.Reasons[p])
		}
	}
	if !s.Has(capability.FP32) || s.Has("fp64") {
		t.Error("fp32 is always supported; unknown names never are")
	}
}

func TestRulesNameKnownBackendsAndPrecisions(t *testing.T) {
	precisions := map[capability.Precision]bool{capability.FP16: true, capability.BF16: true, capability.Int8: true, capability.Int4: true, capability.FP8: true}
	for _, r := range capability.Rules {
		if !r.Backend.Known() || !precisions[r.Precision] || r.Why == "" || r.Holds == nil {
			t.Errorf("malformed rule %+v", r)
		}
	}
}

func TestRequirement(t *testing.T) {
	if got := capability.Requirement("mps", capability.BF16); got == "" {
		t.Error("no requirement text for bf16 on MPS")
	}
	if got := capability.Requirement("xla", capability.FP16); got != "" {
		t.Errorf("TPU has no fp16 rule, got %q", got)
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"8.9", 8, 9, true}, {"14.2.1", 14, 2, true}, {"15", 15, 0, true}, {" 12.3 ", 12, 3, true},
		{"", 0, 0, false}, {"x.1", 0, 0, false}, {"1.y", 0, 0, false},
	}
	for _, tt := range tests {
		ma, mi, ok := capability.ParseVersion(tt.in)
		if ma != tt.major || mi != tt.minor || ok != tt.ok {
			t.Errorf("ParseVersion(%q) = %d, %d, %v; want %d, %d, %v", tt.in, ma, mi, ok, tt.major, tt.minor, tt.ok)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	f.Add("14.2.1")
	f.Add("..")
	f.Fuzz(func(t *testing.T, s string) { capability.ParseVersion(s) })
}

func FuzzEvaluate(f *testing.F) {
	f.Add("rocm", "gfx90a", "", "")
	f.Add("cuda", "", "8.9", "")
	f.Add("mps", "apple", "", "14.0")
	f.Fuzz(func(t *testing.T, b, gen, cc, osv string) {
		capability.Evaluate(capability.Facts{Backend: backend.Backend(b), Generation: gen, ComputeCapability: cc, OSVersion: osv})
	})
}
