package oomsim

import (
	"slices"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
)

// The band holds devctl's own error on measured runs of the same kind:
// from estimate / (1 + p90) to estimate / (1 + p10), wider for training
// than for a serving engine, whose start-up allocation is its own rule.
func TestBandHoldsTheErrorSpread(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 5504, Vocab: 32000, Gated: true}}
	for _, p := range []Plan{
		{Model: m, Mode: LoRA, Precision: capability.BF16, Stack: StackHF, SeqLen: 1024, Backend: "cuda"},
		{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, SeqLen: 1024, Backend: "cuda", DeviceBytes: 24 << 30},
		{Model: m, Mode: Inference, Precision: capability.Int4, Stack: StackLlamaCpp, SeqLen: 4096, Backend: "cuda"},
		{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackHF, SeqLen: 1024, Backend: "cuda"},
	} {
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		band := EstimateBand(p, b, Pinned{})
		lo, hi := errorSpread(withDefaults(p))
		if want := int64(float64(b.TotalBytes) / (1 + lo)); band.HighBytes < want {
			t.Errorf("%s %s: band tops at %d, below the p10 error's %d", p.Mode, p.Stack, band.HighBytes, want)
		}
		if want := int64(float64(b.TotalBytes) / (1 + hi)); band.LowBytes > want {
			t.Errorf("%s %s: band starts at %d, above the p90 error's %d", p.Mode, p.Stack, band.LowBytes, want)
		}
	}
	// The band says what gives its bottom and its top: a serving engine
	// has no assumption to flip, so both are devctl's own error.
	p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, SeqLen: 1024, Backend: "cuda", DeviceBytes: 24 << 30}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if band := EstimateBand(p, b, Pinned{}); band.LowBy != SpreadWhat || band.HighBy != SpreadWhat {
		t.Errorf("vLLM band: bottom by %q, top by %q; want devctl's own error for both", band.LowBy, band.HighBy)
	}
	train, _ := errorSpread(Plan{Mode: Training})
	serve, _ := errorSpread(Plan{Mode: Inference, Stack: StackVLLM})
	if train >= serve {
		t.Errorf("training's p10 %.3f is not below a serving engine's %.3f", train, serve)
	}
}

// Model parallelism splits the states over tensor × pipeline degrees and
// ZeRO shares them out over the data-parallel replicas left; tensor
// parallelism also splits the activations, pipelining does not (1F1B's
// first stage holds one micro-batch's worth of every block), and expert
// parallelism splits a mixture of experts' routed experts.
// llama8B is a Llama-3-8B-shaped model for the parallelism tests.
var llama8B = Model{Name: "m", Params: 8_000_000_000,
	Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true}}

// validEstimate validates a plan and estimates it, failing the test on
// either error.
func validEstimate(t *testing.T, p Plan) Breakdown {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestModelParallelDegrees(t *testing.T) {
	m := llama8B
	est := func(p Plan) Breakdown {
		t.Helper()
		p.Model, p.Mode, p.Precision, p.SeqLen, p.Devices, p.Recompute = m, Training, capability.BF16, 4096, 8, RecomputeNone
		if p.SequenceParallel == "" {
			p.SequenceParallel = SwitchOn
		}
		return validEstimate(t, p)
	}
	all := est(Plan{Sharding: ShardTP})
	tp8 := est(Plan{Sharding: ShardTP, TensorParallel: 8})
	if all.TotalBytes != tp8.TotalBytes {
		t.Errorf("tp over every device %d bytes, tensor-parallel 8 of 8 %d: want the same", all.TotalBytes, tp8.TotalBytes)
	}
	tp2 := est(Plan{Sharding: ShardTP, TensorParallel: 2})
	if got, want := tp2.OptimizerBytes, 4*tp8.OptimizerBytes; got != want {
		t.Errorf("tensor-parallel 2: optimizer %d, want 4 × tensor-parallel 8's %d", got, want)
	}
	if got, want := tp2.ActivationsBytes, 4*tp8.ActivationsBytes; got < want*99/100 || got > want*101/100 {
		t.Errorf("tensor-parallel 2: activations %d, want about 4 × tensor-parallel 8's %d", got, want)
	}
	// Without sequence parallelism the norms' and linear layers' inputs
	// are whole on every device: more than a quarter of TP 2's, less than
	// the whole model's.
	tp8off := est(Plan{Sharding: ShardTP, TensorParallel: 8, SequenceParallel: SwitchOff})
	if tp8off.ActivationsBytes <= tp8.ActivationsBytes || tp8off.ActivationsBytes >= tp2.ActivationsBytes {
		t.Errorf("tensor-parallel 8 without sequence parallelism: activations %d, want between TP 8's %d and TP 2's %d", tp8off.ActivationsBytes, tp8.ActivationsBytes, tp2.ActivationsBytes)
	}
	// TP 2 with ZeRO-3 over the 4 replicas: the states as ZeRO-3 over 8.
	tp2z3 := est(Plan{Sharding: ShardZeRO3, TensorParallel: 2})
	z3 := est(Plan{Sharding: ShardZeRO3})
	if tp2z3.OptimizerBytes != z3.OptimizerBytes || tp2z3.ActivationsBytes >= z3.ActivationsBytes {
		t.Errorf("tp 2 + ZeRO-3: optimizer %d (ZeRO-3 alone %d), activations %d (ZeRO-3 alone %d): want the same states, fewer activations",
			tp2z3.OptimizerBytes, z3.OptimizerBytes, tp2z3.ActivationsBytes, z3.ActivationsBytes)
	}
	// Four pipeline stages: a quarter of the states, the activations of
	// one micro-batch through every block (and no loss on the first).
	pp4 := est(Plan{Sharding: ShardTP, TensorParallel: 1, PipelineStages: 4})
	none := est(Plan{Sharding: ShardNone, Devices: 1})
	if got, want := pp4.OptimizerBytes, none.OptimizerBytes/4; got < want*99/100 || got > want*101/100 {
		t.Errorf("4 stages: optimizer %d, want a quarter of one device's %d", got, want)
	}
	// The first stage: one micro-batch's worth of every block and no
	// loss; or, when it holds more, the last: a quarter of the blocks and
	// the loss.
	near := func(got, want int64) bool { return got >= want*99/100 && got <= want*101/100 }
	first := pp4.LogitsBytes == 0 && near(pp4.ActivationsBytes, none.ActivationsBytes)
	last := near(pp4.LogitsBytes, none.LogitsBytes) && near(pp4.ActivationsBytes, none.ActivationsBytes/4)
	if !first && !last {
		t.Errorf("4 stages: activations %d, logits %d; want the first stage's %d and no logits, or the last's %d and %d",
			pp4.ActivationsBytes, pp4.LogitsBytes, none.ActivationsBytes, none.ActivationsBytes/4, none.LogitsBytes)
	}
	if err := (Plan{Model: m, Devices: 8, TensorParallel: 3}).Validate(); err == nil {
		t.Error("tensor-parallel 3 of 8 devices validated")
	}
	// Expert parallelism: a mixture of experts' routed experts over 8.
	moe := Model{Name: "moe", Params: 30_000_000_000, ActiveParams: 3_000_000_000, Experts: 128, ExpertsPerToken: 8, Arch: m.Arch}
	plan := func(ep int) Breakdown {
		b, err := Estimate(Plan{Model: moe, Mode: Training, Precision: capability.BF16, SeqLen: 1024, Devices: 8, Sharding: ShardTP, TensorParallel: 1, ExpertParallel: ep})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	x := moe.ExpertParams()
	if got, want := plan(8).OptimizerBytes, int64((30e9-x+x/8)*8); got < want*99/100 || got > want*101/100 {
		t.Errorf("expert-parallel 8: optimizer %d, want the dense part whole and an eighth of the %.0f expert parameters: %d", got, x, want)
	}
}

// Context parallelism: each device keeps its share of every sequence's
// tokens (the activations and logits of seq/cp), and the model states are
// sharded over every device as before.
func TestContextParallel(t *testing.T) {
	m := llama8B
	est := func(seq, cp int) Breakdown {
		t.Helper()
		return validEstimate(t, Plan{Model: m, Mode: Training, Precision: capability.BF16, SeqLen: seq, Devices: 8, Sharding: ShardZeRO3,
			Attention: AttentionFlash, Recompute: RecomputeFull, ContextParallel: cp})
	}
	cp4, local := est(65536, 4), est(16384, 1)
	if cp4.ActivationsBytes != local.ActivationsBytes || cp4.LogitsBytes != local.LogitsBytes {
		t.Errorf("65536 tokens over cp 4: activations %d, logits %d; want 16384 tokens' %d and %d",
			cp4.ActivationsBytes, cp4.LogitsBytes, local.ActivationsBytes, local.LogitsBytes)
	}
	if cp4.WeightsBytes != local.WeightsBytes || cp4.OptimizerBytes != local.OptimizerBytes {
		t.Errorf("cp 4: weights %d, optimizer %d; want ZeRO-3 over all 8 devices: %d, %d",
			cp4.WeightsBytes, cp4.OptimizerBytes, local.WeightsBytes, local.OptimizerBytes)
	}
	if err := (Plan{Model: m, Mode: Training, Devices: 8, TensorParallel: 2, ContextParallel: 8}).Validate(); err == nil {
		t.Error("tensor-parallel 2 × context-parallel 8 on 8 devices validated")
	}
	if got := (Plan{Model: m, Mode: Inference, Devices: 8, ContextParallel: 8}).ContextDegree(); got != 1 {
		t.Errorf("inference context degree %d, want 1", got)
	}
}

// Megatron-Core keeps grouped k and v unexpanded (TransformerEngine's
// fused attention), reduces gradients in its own contiguous buffer (no
// DDP bucket copy) and adapts every Linear under LoRA.
func TestMegatronProfile(t *testing.T) {
	p := withDefaults(Plan{Model: Model{Name: "m", Params: 1e9}, Mode: LoRA, Precision: capability.BF16, Stack: StackMegatron})
	if p.Attention != AttentionFlash || p.LoRATargets != LoRAAllLinear {
		t.Errorf("megatron defaults: attention %s, LoRA targets %s", p.Attention, p.LoRATargets)
	}
	for _, name := range []string{"megatron-lm", "NeMo", "megatron-bridge", "mcore", "ms-swift-megatron"} {
		if st, ok := ParseStack(name); !ok || st != StackMegatron {
			t.Errorf("ParseStack(%q) = %s, %v", name, st, ok)
		}
	}
	// Its vocab-parallel cross-entropy, its default: the bf16 logits and
	// one fp32 copy, softmax and gradient written in place: 6 bytes a
	// logit, where transformers' loss keeps 14, as does a loop of one's
	// own calling F.cross_entropy on a Megatron model's logits (full-ce).
	if q := withDefaults(Plan{Model: p.Model, Mode: Training, Precision: capability.BF16, Stack: StackMegatron}); q.Loss != LossVocabParallel {
		t.Errorf("megatron's default loss %q, want %q", q.Loss, LossVocabParallel)
	}
	arch := &Arch{Layers: 2, KVLayers: 2, Hidden: 64, Heads: 1, Vocab: 1000}
	for _, c := range []struct {
		stack Stack
		loss  Loss
		want  float64
	}{{StackMegatron, LossVocabParallel, 6}, {StackMegatron, LossFull, 14}, {StackHF, LossFull, 14}} {
		s := resolve(Plan{Model: p.Model, Mode: Training, Precision: capability.BF16, Stack: c.stack, Loss: c.loss})
		if got := lossBuffers(s, arch, 10); got != c.want*1000*10 {
			t.Errorf("%s %s loss over 10 tokens of a 1000-word vocabulary: %.0f bytes, want %.0f", c.stack, c.loss, got, c.want*1000*10)
		}
	}
	if got := ddpBuckets(resolve(Plan{Model: p.Model, Mode: Training, Stack: StackMegatron, Devices: 8}), 1000); got != 0 {
		t.Errorf("megatron over 8 replicas: %d bytes of DDP buckets, want none", got)
	}
}

// Gemma 4's full-attention layers cache keys and values at their own
// width (fewer, wider heads) and for every token; its sliding layers at
// theirs, for the window transformers keeps.
func TestKVCacheFullLayersOwnWidth(t *testing.T) {
	a := &Arch{Layers: 6, KVLayers: 6, Hidden: 1024, Heads: 8, KVHeads: 4, HeadDim: 128, FFN: 4096, Vocab: 1000,
		SlidingWindow: 512, SlidingLayers: 5, FullKVHeads: 1, FullHeadDim: 256}
	p := Plan{Model: Model{Name: "g", Params: 1e8, Arch: a}, Mode: Inference, Precision: capability.BF16, Stack: StackHF}
	got := kvCache(a, p, 1, 4096)
	want := sat(2 * (1*256*4096 + 5*4*128*512) * 2.0)
	if got != want {
		t.Errorf("kv cache %d bytes, want %d (one full layer of 1 × 256 over 4096 tokens, five sliding of 4 × 128 over 512)", got, want)
	}
}

// An encoder trains under a task head: no vocabulary logits, and a note
// that says so; a decoder of the same shape keeps them.
func TestEncoderTaskHead(t *testing.T) {
	enc := &Arch{Layers: 12, Hidden: 768, Heads: 12, KVHeads: 12, HeadDim: 64, FFN: 3072, Vocab: 30522}
	dec := *enc
	dec.KVLayers = 12
	est := func(a *Arch) Breakdown {
		t.Helper()
		return validEstimate(t, Plan{Model: Model{Name: "m", Params: 110_000_000, Arch: a}, Mode: Training, Precision: capability.FP32, BatchSize: 8, SeqLen: 512})
	}
	e, d := est(enc), est(&dec)
	if e.LogitsBytes != 0 || d.LogitsBytes == 0 {
		t.Errorf("logits: encoder %d (want 0), decoder %d (want the vocabulary's)", e.LogitsBytes, d.LogitsBytes)
	}
	if !slices.ContainsFunc(e.Notes, func(n string) bool { return strings.Contains(n, "task head") }) {
		t.Errorf("encoder notes %q, want the task head said", e.Notes)
	}
}

// An evaluation forward between steps: the weights and states beside one
// block's working set, transformers' KV cache and the batch's logits with the loss's copies (10 B
// a bf16 logit in transformers' loss, 2 B under Unsloth's in-place
// kernel); when it is larger than the step, it is the peak.
func TestEvaluationForward(t *testing.T) {
	m := llama8B
	plan := func(stack Stack, eval int) Breakdown {
		t.Helper()
		return validEstimate(t, Plan{Model: m, Mode: QLoRA, Precision: capability.Int4, Stack: stack, BatchSize: 1, SeqLen: 2048,
			Recompute: RecomputeFull, EvalBatch: eval})
	}
	none, hf := plan(StackHF, 0), plan(StackHF, 8)
	if none.EvalBytes != 0 {
		t.Errorf("no evaluation: %d eval bytes", none.EvalBytes)
	}
	logits := int64(8 * 2048 * 128256 * 10)
	if hf.EvalBytes < logits || hf.PeakAllocatedBytes != hf.WeightsBytes+hf.OptimizerBytes+hf.EvalBytes || hf.OverlapBytes >= 0 {
		t.Errorf("eval at 8: %d eval bytes (want at least the logits' %d), peak %d (want weights + states + eval), overlap %d (want negative)",
			hf.EvalBytes, logits, hf.PeakAllocatedBytes, hf.OverlapBytes)
	}
	// transformers evaluates with use_cache: every layer's keys and
	// values for the batch (Llama-3-8B: 32 layers × 8 KV heads × 128 × 2
	// a token), fp32 after prepare_model_for_kbit_training (4 B).
	kv := int64(8 * 2048 * 32 * 8 * 128 * 2 * 4)
	if hf.EvalBytes < logits+kv {
		t.Errorf("eval at 8: %d eval bytes, want the logits' %d and the KV cache's %d", hf.EvalBytes, logits, kv)
	}
	if u := plan(StackUnsloth, 8); u.EvalBytes >= hf.EvalBytes {
		t.Errorf("unsloth's in-place loss: eval %d bytes, want less than transformers' %d", u.EvalBytes, hf.EvalBytes)
	}
	if err := (Plan{Model: m, Mode: Training, EvalBatch: -1}).Validate(); err == nil {
		t.Error("evaluation batch -1 validated")
	}
}
