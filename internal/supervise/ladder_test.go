package supervise

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/explain"
)

// Supports as internal/capability's table gives them: an Ampere GPU, a
// TPU v4 (bf16, no int8), a TPU v6e (bf16 and int8), an M-series Mac on
// macOS 14, an MI250 (gfx90a), a CPU with bf16 and VNNI.
var (
	ampere = capability.Support{FP16: true, BF16: true, Int8: true, Int4: true}
	tpuV4  = capability.Support{BF16: true}
	tpuV6e = capability.Support{BF16: true, Int8: true}
	mac14  = capability.Support{FP16: true, BF16: true}
	mi250  = capability.Support{FP16: true, BF16: true, Int8: true}
	cpuAVX = capability.Support{BF16: true, Int8: true}
)

var (
	cuda0 = Candidate{ID: "cuda:0", Backend: "cuda", Support: ampere, Env: []envvar.Var{{Name: "CUDA_VISIBLE_DEVICES", Value: "0"}, {Name: "PYTORCH_CUDA_ALLOC_CONF", Value: "expandable_segments:True"}}}
	cuda1 = Candidate{ID: "cuda:1", Backend: "cuda", Support: ampere, Env: []envvar.Var{{Name: "CUDA_VISIBLE_DEVICES", Value: "1"}}}
	bare0 = Candidate{ID: "cuda:0", Backend: "cuda", Support: ampere} // no recommended env: the allocator step is needed
	rocm0 = Candidate{ID: "rocm:0", Backend: "rocm", Support: mi250}
	mps   = Candidate{ID: "mps", Backend: "mps", Support: mac14, Env: []envvar.Var{{Name: "PYTORCH_ENABLE_MPS_FALLBACK", Value: "1"}}}
	mpsNo = Candidate{ID: "mps", Backend: "mps", Support: mac14}
	xla0  = Candidate{ID: "xla:0-7", Backend: "xla", Support: tpuV4, Env: []envvar.Var{{Name: "PJRT_DEVICE", Value: "TPU"}}}
	xla6  = Candidate{ID: "xla:0-7", Backend: "xla", Support: tpuV6e, Env: []envvar.Var{{Name: "PJRT_DEVICE", Value: "TPU"}}}
	cpu   = Candidate{ID: "cpu", Backend: "cpu", Support: cpuAVX, Env: []envvar.Var{{Name: "JAX_PLATFORMS", Value: "cpu"}}}
)

const off = "the CPU rung is off (device.fallback_enabled is false, or --allow-cpu=false)"

// walk feeds the same category to the ladder until it gives up and returns
// the step ids taken and the final reason.
func walk(t *testing.T, cfg LadderConfig, c explain.Category, inherited []string) ([]string, string, *Ladder) {
	t.Helper()
	l, err := NewLadder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 20; i++ {
		s, ok, why := l.Next(c, inherited)
		if !ok {
			return ids, why, l
		}
		ids = append(ids, s.ID)
	}
	t.Fatal("the ladder never ends")
	return nil, "", nil
}

func TestLadderOrder(t *testing.T) {
	batch := &IntVar{"BATCH_SIZE", 8}
	accum := &IntVar{"GRAD_ACCUM", 1}
	prec := &StrVar{"PRECISION", "fp32"}
	tests := []struct {
		name      string
		cfg       LadderConfig
		cat       explain.Category
		inherited []string
		want      []string
		why       string
	}{
		// CUDA.
		{"CUDA OOM: allocator, batch halved to 1, precision down to 4-bit, then the CPU",
			LadderConfig{Devices: []Candidate{bare0, cpu}, Batch: batch, Accum: accum, Precision: prec, AllowCPU: true}, explain.CategoryOutOfMemory, nil,
			[]string{StepAllocator, StepHalveBatch, StepHalveBatch, StepHalveBatch, StepLowerPrecision, StepLowerPrecision, StepLowerPrecision, StepCPU}, "the batch is 1, the precision is the lowest cpu supports; already on the CPU"},
		{"the allocator step is skipped when recommend's env already set it",
			LadderConfig{Devices: []Candidate{cuda0}, Batch: &IntVar{"BS", 2}}, explain.CategoryOutOfMemory, nil,
			[]string{StepHalveBatch}, "the batch is 1; " + off},
		{"the allocator step is skipped when the user's own setting has it",
			LadderConfig{Devices: []Candidate{bare0}}, explain.CategoryOutOfMemory, []string{"PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128,expandable_segments:True"},
			nil, "no --batch-env or --precision-env to change; " + off},
		{"OOM without knobs and with the CPU rung off stops after the allocator",
			LadderConfig{Devices: []Candidate{bare0, cpu}}, explain.CategoryOutOfMemory, nil,
			[]string{StepAllocator}, "no --batch-env or --precision-env to change; " + off},
		{"JAX on a GPU: preallocation off, fraction 0.75 then 0.60, then the batch",
			LadderConfig{Devices: []Candidate{cuda0}, Batch: &IntVar{"BS", 2}}, explain.CategoryXLAResourceExhausted, []string{"XLA_PYTHON_CLIENT_MEM_FRACTION=0.90"},
			[]string{StepXLANoPrealloc, StepXLAMemFraction, StepXLAMemFraction, StepHalveBatch}, "the batch is 1; " + off},
		{"JAX on a GPU with JAX's default fraction (0.75) lowers it once",
			LadderConfig{Devices: []Candidate{cuda0}}, explain.CategoryXLAResourceExhausted, nil,
			[]string{StepXLANoPrealloc, StepXLAMemFraction}, "no --batch-env or --precision-env to change; " + off},
		{"a launch failure tries the next GPU, then the CPU",
			LadderConfig{Devices: []Candidate{cuda0, cuda1, cpu}, AllowCPU: true}, explain.CategoryCUDALaunchFailure, nil,
			[]string{StepNextDevice, StepCPU}, "no other device to try"},
		{"a driver mismatch skips every GPU of the backend",
			LadderConfig{Devices: []Candidate{cuda0, cuda1, xla0, cpu}}, explain.CategoryCUDADriverMismatch, nil,
			[]string{StepNextDevice}, "no other device to try (" + off + ")"},

		// ROCm: no CUDA allocator step; JAX's GPU variables apply.
		{"ROCm OOM: no allocator step; the batch, the precision (bf16, 8-bit; no 4-bit in the table), the CPU",
			LadderConfig{Devices: []Candidate{rocm0, cpu}, Batch: &IntVar{"BS", 2}, Precision: prec, AllowCPU: true}, explain.CategoryOutOfMemory, nil,
			[]string{StepHalveBatch, StepLowerPrecision, StepLowerPrecision, StepCPU}, "the batch is 1, the precision is the lowest cpu supports; already on the CPU"},
		{"JAX on ROCm: the GPU allocator variables",
			LadderConfig{Devices: []Candidate{rocm0}}, explain.CategoryXLAResourceExhausted, nil,
			[]string{StepXLANoPrealloc, StepXLAMemFraction}, "no --batch-env or --precision-env to change; " + off},

		// TPU: never the GPU variables; a smaller batch and what the chip computes in.
		{"TPU RESOURCE_EXHAUSTED: no JAX GPU variables; the batch, then bf16 (a v4 has no int8), then the CPU and its int8",
			LadderConfig{Devices: []Candidate{xla0, cpu}, Batch: &IntVar{"BS", 4}, Precision: prec, AllowCPU: true}, explain.CategoryXLAResourceExhausted, nil,
			[]string{StepHalveBatch, StepHalveBatch, StepLowerPrecision, StepCPU, StepLowerPrecision}, "the batch is 1, the precision is the lowest cpu supports; already on the CPU"},
		{"TPU v6e OOM: bf16, then int8 (its int8 matrix units)",
			LadderConfig{Devices: []Candidate{xla6}, Precision: prec}, explain.CategoryOutOfMemory, nil,
			[]string{StepLowerPrecision, StepLowerPrecision}, "the precision is the lowest xla:0-7 supports; " + off},
		{"TPU without knobs: nothing to change on the chip",
			LadderConfig{Devices: []Candidate{xla0}}, explain.CategoryXLAResourceExhausted, nil,
			nil, "no --batch-env or --precision-env to change; " + off},
		{"a TPU that cannot start moves to the next backend",
			LadderConfig{Devices: []Candidate{xla0, cpu}, AllowCPU: true}, explain.CategoryXLATPUInit, nil,
			[]string{StepCPU}, "no other device to try"},

		// MPS.
		{"MPS unsupported op: the MPS fallback, then the CPU",
			LadderConfig{Devices: []Candidate{mpsNo, cpu}, AllowCPU: true}, explain.CategoryMPSUnsupportedOp, nil,
			[]string{StepMPSFallback, StepCPU}, "mps_unsupported_op on cpu: PYTORCH_ENABLE_MPS_FALLBACK applies to MPS only"},
		{"MPS with recommend's fallback already set goes straight to the CPU step",
			LadderConfig{Devices: []Candidate{mps, cpu}}, explain.CategoryMPSUnsupportedOp, nil,
			nil, "PYTORCH_ENABLE_MPS_FALLBACK=1 was already set; " + off},
		{"MPS OOM: no allocator step; the batch",
			LadderConfig{Devices: []Candidate{mps}, Batch: &IntVar{"BS", 2}}, explain.CategoryOutOfMemory, nil,
			[]string{StepHalveBatch}, "the batch is 1; " + off},
		{"an unsupported-operator failure on a GPU is not MPS's: PYTORCH_ENABLE_MPS_FALLBACK is not set",
			LadderConfig{Devices: []Candidate{cuda0, cpu}, AllowCPU: true}, explain.CategoryMPSUnsupportedOp, nil,
			nil, "mps_unsupported_op on cuda:0: PYTORCH_ENABLE_MPS_FALLBACK applies to MPS only"},

		// The CPU.
		{"OOM on the CPU itself has no allocator or CPU step",
			LadderConfig{Devices: []Candidate{cpu}, Batch: &IntVar{"BS", 2}, AllowCPU: true}, explain.CategoryOutOfMemory, nil,
			[]string{StepHalveBatch}, "the batch is 1; already on the CPU"},
		{"JAX on the CPU: no GPU variables",
			LadderConfig{Devices: []Candidate{cpu}, Batch: &IntVar{"BS", 2}}, explain.CategoryXLAResourceExhausted, nil,
			[]string{StepHalveBatch}, "the batch is 1; already on the CPU"},

		// Bugs and unknowns.
		{"a dtype mismatch is a bug in the program: nothing to try",
			LadderConfig{Devices: []Candidate{cuda0, cpu}, AllowCPU: true}, explain.CategoryDTypeMismatch, nil,
			nil, "dtype_mismatch is not a failure a changed environment can fix"},
		{"an unknown failure is not retried",
			LadderConfig{Devices: []Candidate{cuda0, cpu}, AllowCPU: true}, explain.CategoryUnknown, nil,
			nil, "unknown is not a failure a changed environment can fix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why, _ := walk(t, tt.cfg, tt.cat, tt.inherited)
			if d := cmp.Diff(tt.want, got); d != "" || why != tt.why {
				t.Errorf("steps (-want +got):\n%s\nwhy %q, want %q", d, why, tt.why)
			}
		})
	}
}

func TestLadderKeepsTheEffectiveBatch(t *testing.T) {
	l, err := NewLadder(LadderConfig{Devices: []Candidate{cuda0}, Batch: &IntVar{"BATCH_SIZE", 32}, Accum: &IntVar{"GRAD_ACCUM", 2}})
	if err != nil {
		t.Fatal(err)
	}
	s, ok, _ := l.Next(explain.CategoryOutOfMemory, nil)
	if !ok {
		t.Fatal("no step")
	}
	want := Step{ID: StepHalveBatch, Why: "halve the batch (32 to 16), accumulate 4 steps to keep the effective batch of 64",
		Set: []envvar.Var{{Name: "BATCH_SIZE", Value: "16"}, {Name: "GRAD_ACCUM", Value: "4"}}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("step (-want +got):\n%s", d)
	}
}

func TestLadderPrecisionSpellings(t *testing.T) {
	turing := capability.Support{FP16: true, Int8: true, Int4: true}
	for _, tc := range []struct {
		name  string
		start string
		sup   capability.Support
		want  []string
	}{
		{"fp32 on Ampere", "fp32", ampere, []string{"bf16", "8bit", "4bit"}},
		{"fp32 on Turing (no bf16)", "fp32", turing, []string{"fp16", "8bit", "4bit"}},
		{"torch spellings stay torch spellings", "float32", ampere, []string{"bfloat16", "int8", "int4"}},
		{"bf16 on Ampere", "bf16", ampere, []string{"8bit", "4bit"}},
		{"4bit is the bottom", "4bit", ampere, nil},
		{"a TPU v4 stops at bf16", "fp32", tpuV4, []string{"bf16"}},
		{"a device with only fp32 has nothing lower", "fp32", capability.Support{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := Candidate{ID: "cuda:0", Backend: "cuda", Support: tc.sup, Env: cuda0.Env}
			l, err := NewLadder(LadderConfig{Devices: []Candidate{dev}, Precision: &StrVar{"P", tc.start}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				s, ok, _ := l.Next(explain.CategoryOutOfMemory, nil)
				if !ok {
					break
				}
				got = append(got, s.Set[0].Value)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("precisions (-want +got):\n%s", d)
			}
		})
	}
}

func TestLadderRefusesBadKnobs(t *testing.T) {
	for name, cfg := range map[string]LadderConfig{
		"no device":               {},
		"a zero batch":            {Devices: []Candidate{cpu}, Batch: &IntVar{"BS", 0}},
		"a negative accumulation": {Devices: []Candidate{cpu}, Accum: &IntVar{"GA", -1}},
		"an unknown precision":    {Devices: []Candidate{cpu}, Precision: &StrVar{"P", "fp8"}},
	} {
		if _, err := NewLadder(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The environment: the user's variables win over the device's, until the
// ladder switches device; devctl's recovery changes always win.
func TestLadderEnv(t *testing.T) {
	inherited := []string{"HOME=/home/u", "CUDA_VISIBLE_DEVICES=3", "BATCH_SIZE=64"}
	l, err := NewLadder(LadderConfig{Devices: []Candidate{cuda0, cpu}, Batch: &IntVar{"BATCH_SIZE", 8}, AllowCPU: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HOME=/home/u", "CUDA_VISIBLE_DEVICES=3", "BATCH_SIZE=8", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}
	if d := cmp.Diff(want, l.Env(inherited)); d != "" {
		t.Errorf("first attempt env (-want +got):\n%s", d)
	}
	for {
		s, ok, _ := l.Next(explain.CategoryOutOfMemory, inherited)
		if !ok || s.ID == StepCPU {
			break
		}
	}
	got := strings.Join(l.Env(inherited), " ")
	want2 := "HOME=/home/u CUDA_VISIBLE_DEVICES= BATCH_SIZE=1 JAX_PLATFORMS=cpu HIP_VISIBLE_DEVICES="
	if got != want2 {
		t.Errorf("env on the CPU:\n got %s\nwant %s", got, want2)
	}
}

// Whatever the knobs and the sequence of failures, the ladder never
// panics, always ends, and keeps its variables well-formed.
func FuzzLadder(f *testing.F) {
	f.Add(32, 1, "fp32", true, []byte{0, 0, 1, 2, 3, 4})
	f.Add(1, 0, "", false, []byte{5, 6, 7})
	f.Add(1<<20, 3, "float32", true, []byte{1, 1, 1, 1, 1, 1, 1, 1})
	cats := []explain.Category{explain.CategoryOutOfMemory, explain.CategoryXLAResourceExhausted, explain.CategoryDeviceMismatch,
		explain.CategoryDTypeMismatch, explain.CategoryUnsupportedDType, explain.CategoryMPSPlaceholderStorage, explain.CategoryMPSUnsupportedOp,
		explain.CategoryCUDADriverMismatch, explain.CategoryNoGPUFound, explain.CategoryCUDALaunchFailure, explain.CategoryCUDNNError,
		explain.CategoryNCCLError, explain.CategoryXLATPUInit, explain.CategoryROCmHIPError, explain.CategoryOther, explain.CategoryUnknown}
	f.Fuzz(func(t *testing.T, batch, accum int, prec string, allowCPU bool, seq []byte) {
		cfg := LadderConfig{Devices: []Candidate{cuda0, cuda1, mps, xla0, cpu}, AllowCPU: allowCPU}
		if batch != 0 {
			cfg.Batch = &IntVar{"BATCH_SIZE", batch}
		}
		if accum != 0 {
			cfg.Accum = &IntVar{"GRAD_ACCUM", accum}
		}
		if prec != "" {
			cfg.Precision = &StrVar{"PRECISION", prec}
		}
		l, err := NewLadder(cfg)
		if err != nil {
			return // refused knobs are reported, not run
		}
		steps := 0
		for _, b := range seq {
			c := cats[int(b)%len(cats)]
			s, ok, why := l.Next(c, []string{"A=1", "=bad", "noequals"})
			if !ok {
				if why == "" {
					t.Fatalf("%s: stopped without a reason", c)
				}
				continue
			}
			steps++
			if s.ID == "" || s.Why == "" {
				t.Fatalf("%s: step %+v without an id or a reason", c, s)
			}
		}
		if steps > 60 {
			t.Fatalf("%d steps: the ladder does not end", steps)
		}
		for _, kv := range l.Env(nil) {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				t.Fatalf("malformed variable %q", kv)
			}
		}
	})
}
