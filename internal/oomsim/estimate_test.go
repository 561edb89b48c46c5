package oomsim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
	"github.com/google/go-cmp/cmp"
)

// gib rounds bytes to GiB with two decimals, as accelerate and DeepSpeed print.
func gib(b int64) float64 { return math.Round(float64(b)/float64(GiB)*100) / 100 }

func mib(b int64) float64 { return math.Round(float64(b)/float64(MiB)*100) / 100 }

// bert-base-cased as accelerate builds it: 108,310,272 parameters plus
// 8,192 bytes of int64 buffers (position_ids, token_type_ids).
var bertBaseCased = Model{Name: "bert-base-cased", Params: 108_310_272, BufferBytes: 8192,
	// BertEmbeddings with its buffers, as accelerate's no_split unit:
	// 90,669,056 bytes in fp32 (tests/test_cli.py).
	LargestLayerParams: 90_669_056 / 4}

// Source: huggingface/accelerate docs usage_guides/model_size_estimator.md
// and tests/test_cli.py::ModelEstimatorTester (memory.md §1). The docs'
// "418.18 MB" float32 total is a typo for 413.18 (their own later example).
func TestAccelerateReproducesBertBaseCasedTable(t *testing.T) {
	cases := []struct {
		name               string
		precision          capability.Precision
		totalMiB, trainMiB float64
		trainNA            bool
		largestMiB         float64
	}{
		{"float32 total 413.18 MB and training 1.61 GB", capability.FP32, 413.18, 1.61 * 1024, false, 86.47},
		{"float16 total 206.59 MB and training 826.36 MB", capability.FP16, 206.59, 826.36, false, 43.23},
		{"int8 total 103.29 MB and training N/A in the current code", capability.Int8, 103.29, 0, true, 21.62},
		{"int4 total 51.65 MB and training N/A in the current code", capability.Int4, 51.65, 0, true, 10.81},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Plan{Model: bertBaseCased, Mode: Inference, Precision: c.precision, Convention: Accelerate}
			b, err := conventionOf(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := mib(b.ModelStatesBytes); got != c.totalMiB {
				t.Errorf("total = %.2f MiB, want %.2f", got, c.totalMiB)
			}
			if got := mib(b.LargestLayerBytes); got != c.largestMiB {
				t.Errorf("largest layer = %.2f MiB, want %.2f", got, c.largestMiB)
			}
			p.Mode = Training
			b, err = conventionOf(p)
			if c.trainNA {
				if !errors.Is(err, ErrNotApplicable) {
					t.Fatalf("training at %s: err = %v, want ErrNotApplicable", c.precision, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := mib(b.ModelStatesBytes)
			if c.precision == capability.FP32 {
				got = gib(b.ModelStatesBytes) * 1024
			}
			if got != c.trainMiB {
				t.Errorf("training = %.2f MiB, want %.2f", got, c.trainMiB)
			}
		})
	}
}

func TestAccelerateExactBytes(t *testing.T) {
	b, err := conventionOf(Plan{Model: bertBaseCased, Precision: capability.FP32, Convention: Accelerate})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{433_249_280, 90_669_056}, []int64{b.WeightsBytes, b.LargestLayerBytes}); diff != "" {
		t.Errorf("bert-base-cased fp32 total and largest layer (-want +got):\n%s", diff)
	}
	// timm/resnet50.a1_in1k: 25,557,032 params + 212,904 B of BatchNorm buffers.
	r, err := conventionOf(Plan{Model: Model{Name: "resnet50", Params: 25_557_032, BufferBytes: 212_904}, Precision: capability.FP32, Convention: Accelerate})
	if err != nil {
		t.Fatal(err)
	}
	if r.WeightsBytes != 102_441_032 {
		t.Errorf("resnet50 total = %d, want 102,441,032 (accelerate tests/test_cli.py)", r.WeightsBytes)
	}
}

// Source: transformers docs main_classes/deepspeed.md, T0_3B with
// estimate_zero3_model_states_mem_needs_all_live (memory.md §2):
// P = 2,783,959,040, largest layer 65,798,144 (the shared embedding).
func TestDeepSpeedZeRO3ReproducesT0_3B(t *testing.T) {
	t0 := Model{Name: "T0_3B", Params: 2_783_959_040, LargestLayerParams: 65_798_144}
	cases := []struct {
		name          string
		offload       Offload
		offloadParams bool
		gpus          int
		cpu, gpu      float64
	}{
		{"params and optimizer offloaded on 1 GPU", "cpu", true, 1, 70.00, 0.25},
		{"params and optimizer offloaded on 2 GPUs", "cpu", true, 2, 70.00, 0.25},
		{"optimizer offloaded on 1 GPU", "cpu", false, 1, 62.23, 5.43},
		{"optimizer offloaded on 2 GPUs", "cpu", false, 2, 62.23, 2.84},
		{"nothing offloaded on 1 GPU", "none", false, 1, 0.37, 46.91},
		{"nothing offloaded on 2 GPUs", "none", false, 2, 0.74, 23.58},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := conventionOf(Plan{Model: t0, Mode: Training, Precision: capability.BF16, Convention: DeepSpeed, ZeROStage: 3,
				Devices: c.gpus, Offload: c.offload, OffloadParams: c.offloadParams})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]float64{c.cpu, c.gpu}, []float64{gib(b.HostBytes), gib(b.ModelStatesBytes)}); diff != "" {
				t.Errorf("CPU/GPU GiB (-want +got):\n%s", diff)
			}
		})
	}
}

// Source: DeepSpeed docs memory.rst, t5-3b on 8 GPUs with ZeRO-2
// (P = 2,851,598,336). The docs print 15.93 GB for the no-offload row,
// from the formula before PR #5099; the current code gives 11.29 GB.
func TestDeepSpeedZeRO2ReproducesT5_3B(t *testing.T) {
	t5 := Model{Name: "t5-3b", Params: 2_851_598_336}
	cases := []struct {
		name     string
		offload  Offload
		legacy   bool
		cpu, gpu float64
	}{
		{"optimizer offloaded", "cpu", false, 127.48, 5.31},
		{"no offload with the current formula", "none", false, 127.48, 11.29},
		{"no offload with the pre-2024 formula the docs print", "none", true, 127.48, 15.93},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := conventionOf(Plan{Model: t5, Mode: Training, Precision: capability.FP16, Convention: DeepSpeed, ZeROStage: 2,
				Devices: 8, Offload: c.offload, ZeRO2Legacy: c.legacy})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]float64{c.cpu, c.gpu}, []float64{gib(b.HostBytes), gib(b.ModelStatesBytes)}); diff != "" {
				t.Errorf("CPU/GPU GiB (-want +got):\n%s", diff)
			}
		})
	}
}

// Source: huggingface/blog llama31.md KV-cache table (capability.FP16, "GB" = GiB,
// 1k = 1024, 16k = 16,000, 128k = 128,000 tokens); llama.cpp measured
// allocations at ctx 2048 (HF discussion dranger003/c4ai-command-r-v01-iMat.GGUF/6).
func TestKVCacheMatchesPublishedFigures(t *testing.T) {
	llama3_8b := &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128}
	llama3_70b := &Arch{Layers: 80, KVLayers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128}
	llama2_7b := &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128}
	cases := []struct {
		name   string
		arch   *Arch
		tokens int
		want   float64 // GiB, as printed
		tol    float64
	}{
		{"Llama 3.1 8B at 1k tokens is 0.125 GB", llama3_8b, 1024, 0.125, 1e-9},
		{"Llama 3.1 8B at 16k tokens is 1.95 GB", llama3_8b, 16_000, 1.95, 0.005},
		{"Llama 3.1 8B at 128k tokens is 15.62 GB", llama3_8b, 128_000, 15.62, 0.006},
		{"Llama 3.1 70B at 1k tokens is 0.313 GB", llama3_70b, 1024, 0.313, 0.001},
		{"Llama 3.1 70B at 16k tokens is 4.88 GB", llama3_70b, 16_000, 4.88, 0.005},
		{"Llama 3.1 70B at 128k tokens is 39.06 GB", llama3_70b, 128_000, 39.06, 0.005},
		{"llama.cpp Llama-3-8B f16 at ctx 2048 is 256 MiB", llama3_8b, 2048, 0.25, 1e-9},
		{"llama.cpp Llama-3-70B f16 at ctx 2048 is 640 MiB", llama3_70b, 2048, 0.625, 1e-9},
		{"Llama-2-7B at 4096 tokens is 2.0 GiB", llama2_7b, 4096, 2.0, 1e-9},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := float64(KVCache(c.arch, capability.FP16, 1, c.tokens)) / float64(GiB)
			if math.Abs(got-c.want) > c.tol {
				t.Errorf("KV cache = %.4f GiB, want %.3f", got, c.want)
			}
		})
	}
	if got := KVCache(llama2_7b, capability.BF16, 1, 1); got != 524_288 {
		t.Errorf("Llama-2-7B KV per token = %d, want 524,288 B", got)
	}
	// vLLM log (vllm-project/vllm#12330): 5691 blocks of 16 tokens = 11.12 GiB.
	if got := gib(KVCache(llama3_8b, capability.BF16, 1, 5691*16)); got != 11.12 {
		t.Errorf("vLLM Llama-3-8B 5691 blocks = %.2f GiB, want 11.12", got)
	}
}

// Source: transformers tests/quantization/bnb (bloom-1b7), memory.md §6.
// get_memory_footprint counts 1 B per int8 weight and 0.5 B per 4-bit
// weight, without quantisation constants; devctl adds them, so the test
// removes them again before comparing.
func TestQuantisedWeightsMatchBitsandbytesFootprints(t *testing.T) {
	const q = int64(1_207_959_552) // 24 layers × 12·2048² Linear weights
	bloom := Model{Name: "bloom-1b7", Params: 1_722_408_960, UnquantizedParams: 1_722_408_960 - q,
		Arch: &Arch{Layers: 24, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 250880}}
	fp16 := WeightBytes(bloom, bloom.Params, capability.FP16)
	int8 := WeightBytes(bloom, bloom.Params, capability.Int8) - 4*(q/2048)
	int4 := WeightBytes(bloom, bloom.Params, capability.Int4) - 4*(q/64)
	if diff := cmp.Diff([]int64{3_444_817_920, 2_236_858_368, 1_632_878_592}, []int64{fp16, int8, int4}); diff != "" {
		t.Errorf("bloom-1b7 fp16/int8/int4 footprints (-want +got):\n%s", diff)
	}
	if r := float64(fp16) / float64(int8); math.Abs(r-1.540025) > 1e-6 {
		t.Errorf("fp16/int8 ratio = %.7f, want 1.540025 (test_mixed_int8.py)", r)
	}
	if r := float64(fp16) / float64(int4); math.Abs(r-2.109659552692574) > 1e-12 {
		t.Errorf("fp16/int4 ratio = %.15f, want 2.109659552692574 (test_4bit.py)", r)
	}
	// load_in_4bit's default (no double quantisation): 4 bits and an fp32
	// absmax per 64 weights = 0.5625 B/param (QLoRA §3).
	bare := Model{Params: 1_000_000_000}
	if got := float64(WeightBytes(bare, bare.Params, capability.Int4)) / 1e9; got != 0.5625 {
		t.Errorf("NF4 = %.5f B/param, want 0.5625", got)
	}
}

// Published fits / does-not-fit facts (memory.md §7).
func TestKnownVerdicts(t *testing.T) {
	llama2_7b := Model{Name: "llama-2-7b", Params: 6_738_415_616, HeadParams: 131_072_000,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 11008, Vocab: 32000}}
	llama3_8b := Model{Name: "llama-3-8b", Params: 8_030_261_248, HeadParams: 525_336_576,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256}}
	t4 := GiB * 1475 / 100
	a100 := GiB * 7915 / 100
	cases := []struct {
		name   string
		plan   Plan
		budget int64
		fits   bool
	}{
		{"Llama-2-7B full fine-tune with AdamW on one A100-80GB does not fit (llama-cookbook#413)",
			Plan{Model: llama2_7b, Mode: Training, Precision: capability.BF16, SeqLen: 512, Backend: "cuda"}, a100, false},
		{"Meta-Llama-3-8B bf16 inference on a T4 does not fit (llama3#95)",
			Plan{Model: llama3_8b, Mode: Inference, Precision: capability.BF16, SeqLen: 512, Backend: "cuda"}, t4, false},
		{"Llama-2-7B fp16 inference on a T4 fits at a short context",
			Plan{Model: llama2_7b, Mode: Inference, Precision: capability.FP16, SeqLen: 512, Backend: "cuda"}, t4, true},
		{"Llama-2-7B fp16 inference on a T4 does not fit at 4096 tokens",
			Plan{Model: llama2_7b, Mode: Inference, Precision: capability.FP16, SeqLen: 4096, Backend: "cuda"}, t4, false},
		{"Meta-Llama-3-8B 4-bit inference on a T4 fits (llama3#95)",
			Plan{Model: llama3_8b, Mode: Inference, Precision: capability.Int4, SeqLen: 2048, Backend: "cuda"}, t4, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Estimate(c.plan)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.TotalBytes <= c.budget; got != c.fits {
				t.Errorf("fits = %v (total %.2f GiB, budget %.2f GiB), want %v", got, float64(b.TotalBytes)/float64(GiB), float64(c.budget)/float64(GiB), c.fits)
			}
		})
	}
}

func TestEleutherAIModelStates(t *testing.T) {
	m := Model{Name: "150M", Params: 150_000_000}
	cases := []struct {
		name string
		plan Plan
		want int64
	}{
		{"fp16 weights are 2 bytes per parameter", Plan{Mode: Inference, Precision: capability.FP16}, 300_000_000},
		{"mixed-precision AdamW is 16 bytes per parameter", Plan{Mode: Training, Precision: capability.BF16}, 2_400_000_000},
		{"fp32 AdamW is 16 bytes per parameter", Plan{Mode: Training, Precision: capability.FP32}, 2_400_000_000},
		{"mixed-precision 8-bit AdamW is 10 bytes per parameter", Plan{Mode: Training, Precision: capability.BF16, Optimizer: AdamW8bit}, 1_500_000_000},
		{"ZeRO-2 over 4 devices shards gradients and optimizer", Plan{Mode: Training, Precision: capability.BF16, Sharding: ShardZeRO2, Devices: 4}, 300_000_000 + 300_000_000/4 + 1_800_000_000/4},
		{"ZeRO-3 over 4 devices shards everything", Plan{Mode: Training, Precision: capability.BF16, Sharding: ShardZeRO3, Devices: 4}, 600_000_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.plan.Model, c.plan.Convention = m, EleutherAI
			b, err := conventionOf(c.plan)
			if err != nil {
				t.Fatal(err)
			}
			if b.ModelStatesBytes != c.want {
				t.Errorf("model states = %d, want %d", b.ModelStatesBytes, c.want)
			}
		})
	}
}

// conventionOf is a published convention's own breakdown of p (what
// Estimate attaches as Published), for the reproduction tests.
func conventionOf(p Plan) (Breakdown, error) {
	p = withDefaults(p)
	var b Breakdown
	var err error
	switch p.Convention {
	case Accelerate:
		b, err = accelerate(p)
	case DeepSpeed:
		b, err = deepspeed(p)
	default:
		b, err = eleutherai(p)
	}
	b.ModelStatesBytes = add(b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes)
	b.TotalBytes = b.ModelStatesBytes
	return b, err
}

// Full training sharded over several devices takes full checkpointing when
// the recompute is unstated, and the band shows the plan without it; a
// stated recompute, one device, or LoRA keep their own.
func TestShardedRecipeCheckpoints(t *testing.T) {
	m := Model{Name: "7B", Params: 6_738_415_616, Arch: &Arch{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 11008, Vocab: 32000}}
	p := WithDefaults(Plan{Model: m, Mode: Training, Precision: capability.BF16, BatchSize: 1, SeqLen: 4096, Devices: 8, Sharding: ShardZeRO3, Stack: StackDeepSpeed})
	if p.Recompute != RecomputeFull {
		t.Fatalf("sharded full training: recompute %q, want full", p.Recompute)
	}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	band := EstimateBand(p, b, Pinned{})
	if band.HighBytes <= b.TotalBytes || !strings.Contains(strings.Join(band.DependsOn, " "), "checkpointed") {
		t.Errorf("band %+v does not show the plan without checkpointing", band)
	}
	for _, q := range []Plan{
		{Model: m, Mode: Training, Precision: capability.BF16, SeqLen: 4096, Devices: 8, Sharding: ShardZeRO3, Stack: StackDeepSpeed, Recompute: RecomputeNone},
		{Model: m, Mode: Training, Precision: capability.BF16, SeqLen: 4096, Devices: 1, Stack: StackDeepSpeed},
		{Model: m, Mode: Training, Precision: capability.BF16, SeqLen: 4096, Devices: 8, Sharding: ShardZeRO2, Stack: StackDeepSpeed},
	} {
		if got := WithDefaults(q).Recompute; got != RecomputeNone {
			t.Errorf("%d devices, sharding %q, recompute %q: got %q, want none", q.Devices, q.Sharding, q.Recompute, got)
		}
	}
}

// Expandable segments leave no allocator slack on CUDA (the flag, or
// torchtitan's launcher); ROCm keeps it.
func TestExpandableSegmentsNoSlack(t *testing.T) {
	m := Model{Name: "7B", Params: 6_738_415_616, Arch: &Arch{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 11008, Vocab: 32000}}
	base := Plan{Model: m, Mode: Training, Precision: capability.BF16, BatchSize: 2, SeqLen: 4096, Devices: 8, Sharding: ShardZeRO3, Backend: "cuda"}
	for _, q := range []Plan{
		func() Plan { p := base; p.Stack = StackFSDP; p.ExpandableSegments = true; return p }(),
		func() Plan { p := base; p.Stack = StackTorchtitan; return p }(),
	} {
		b, err := Estimate(WithDefaults(q))
		if err != nil {
			t.Fatal(err)
		}
		if b.AllocatorBytes != 0 || b.ReservedBytes != b.PeakAllocatedBytes {
			t.Errorf("%s expandable=%v: allocator %d, reserved %d, allocated %d", q.Stack, q.ExpandableSegments, b.AllocatorBytes, b.ReservedBytes, b.PeakAllocatedBytes)
		}
	}
	p := base
	p.Stack, p.Backend = StackTorchtitan, "rocm"
	if b, err := Estimate(WithDefaults(p)); err != nil || b.AllocatorBytes == 0 {
		t.Errorf("ROCm keeps the slack: %d (%v)", b.AllocatorBytes, err)
	}
	p.Stack, p.Backend = StackFSDP, "cuda"
	if b, err := Estimate(WithDefaults(p)); err != nil || b.AllocatorBytes == 0 {
		t.Errorf("fsdp without expandable segments keeps the slack: %d (%v)", b.AllocatorBytes, err)
	}
}
