package oomsim

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/google/go-cmp/cmp"
)

// parts is the byte figures of a Breakdown, without notes and sources.
type parts struct {
	Weights, Gradients, Optimizer, Activations, Logits, KVCache, Buffers, Host int64
}

func partsOf(b Breakdown) parts {
	return parts{b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes, b.ActivationsBytes, b.LogitsBytes, b.KVCacheBytes, b.BuffersBytes, b.HostBytes}
}

// The figures below are worked by hand from the terms peak.go documents,
// on shapes small enough to check with a pencil.
func TestEstimateTerms(t *testing.T) {
	bare := Model{Name: "1M", Params: 1_000_000}
	tiny := Model{Name: "tiny", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	tests := []struct {
		name string
		plan Plan
		want parts
	}{
		{
			name: "AMP keeps fp32 weights and their 16-bit autocast copies, fp32 gradients and two fp32 Adam states; foreach AdamW's step holds one state-sized temporary",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.BF16, Mixed: MixedAMP},
			want: parts{Weights: 6_000_000, Gradients: 4_000_000, Optimizer: 8_000_000, Buffers: 4_000_000},
		},
		{
			name: "pure bf16 keeps weights, gradients and both Adam states in bf16",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.BF16, Mixed: MixedPure},
			want: parts{Weights: 2_000_000, Gradients: 2_000_000, Optimizer: 4_000_000, Buffers: 2_000_000},
		},
		{
			name: "torchtune's fused AdamW makes no step temporary",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.BF16, Stack: StackTorchtune},
			want: parts{Weights: 2_000_000, Gradients: 2_000_000, Optimizer: 4_000_000},
		},
		{
			name: "a paged optimizer's states are in unified memory, outside the device's counters",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.BF16, Mixed: MixedPure, Optimizer: PagedAdamW},
			want: parts{Weights: 2_000_000, Gradients: 2_000_000},
		},
		{
			name: "DeepSpeed keeps 16-bit parameters and gradients and 12 bytes of fp32 master and Adam states per parameter",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.BF16, Stack: StackDeepSpeed},
			want: parts{Weights: 2_000_000, Gradients: 2_000_000, Optimizer: 12_000_000},
		},
		{
			name: "ZeRO-3 over 4 devices shards weights, gradients, states and the step temporary",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.BF16, Mixed: MixedPure, Sharding: ShardZeRO3, Devices: 4},
			// two gathered blocks without a shape: 2 × 2 bytes × the largest layer (1/50 of the model)
			want: parts{Weights: 500_000, Gradients: 500_000, Optimizer: 1_000_000, Buffers: 500_000 + 80_000},
		},
		{
			name: "inference without a shape takes activations as 20% of the weights",
			plan: Plan{Model: bare, Mode: Inference, Precision: capability.FP16},
			want: parts{Weights: 2_000_000, Activations: 400_000},
		},
		{
			name: "LoRA adapters without a shape are 0.5% of the model, fp32 (PEFT) with two fp32 Adam states",
			plan: Plan{Model: bare, Mode: LoRA, Precision: capability.FP16},
			want: parts{Weights: 2_000_000 + 4*5_000, Gradients: 4 * 5_000, Optimizer: 8 * 5_000},
		},
		{
			name: "an eager prefill keeps a gated MLP's three intermediates per prompt token and the last position's fp32 logits; the KV cache is 2·L·kv·hd per token",
			plan: Plan{Model: tiny, Mode: Inference, Precision: capability.FP16, SeqLen: 1024},
			want: parts{
				Weights: 2_000_000,
				// act(gate), up and their product: 3 × ffn 16-bit values per token
				Activations: 3 * 1024 * 512 * 2,
				Logits:      1000 * 4,
				KVCache:     2 * 2 * 2 * 64 * 1024 * 2,
			},
		},
		{
			name: "a graph-planning stack (llama.cpp) holds a block's whole working set for one 512-token micro-batch",
			plan: Plan{Model: tiny, Mode: Inference, Precision: capability.FP16, SeqLen: 1024, Stack: StackLlamaCpp},
			want: parts{
				Weights: 2_000_000,
				// (3h + q + 2kv + q + 3·ffn) 16-bit values per token
				Activations: 512 * (3*128 + 128 + 2*128 + 128 + 3*512) * 2,
				Logits:      1000 * 4,
				KVCache:     2 * 2 * 2 * 64 * 1024 * 2,
			},
		},
		{
			// transformers' device_map splits by layers: each device runs
			// its blocks over the whole batch (layerSplit).
			name: "serving split over 4 devices by layers divides the weights and the KV cache, not a block's working set",
			plan: Plan{Model: tiny, Mode: Inference, Precision: capability.FP16, SeqLen: 1024, Sharding: ShardZeRO3, Devices: 4},
			want: parts{
				Weights:     2_000_000 / 4,
				Activations: 3 * 1024 * 512 * 2,
				Logits:      1000 * 4,
				KVCache:     2 * 2 * 2 * 64 * 1024 * 2 / 4,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Estimate(tt.plan)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, partsOf(b)); diff != "" {
				t.Errorf("Estimate (-want +got):\n%s", diff)
			}
		})
	}
}

// A training step saves, per token and block (layerSaved), in 16-bit values
// for this shape (h 128, q 128, kv 128, ffn 512, gated):
//
//	full fine-tune: norms 4 (two fp32 inputs) + 2 (the normalised tensors
//	                the trainable norm weights scale) + attention
//	                q+2kv+q = 512 + MLP 4·ffn = 2048 + Linear inputs
//	                h+q+h = 384                                   -> 2950
//	LoRA on q,v:    norms 4 + attention 512 + MLP 3·ffn = 1536 + the
//	                adapted projections' input h = 128            -> 2180
//	  with dropout: q and v each keep a dropped-out copy of the input
//	                and its one-byte mask: 2·1.5·h = 384 for h     -> 2436
//	  litgpt:       one dropout for the fused qkv adapter: 1.5·h  -> 2244
//	compiled:       norms 2 + attention 512 + MLP 3·ffn + inputs 384 -> 2434
//
// and the loss keeps 14 bytes per logit (bf16 logits, the fp32 upcast's
// log-softmax, and the fp32 gradient in and out), 4 for litgpt's chunks.
func TestTrainingActivationsPerBlock(t *testing.T) {
	tiny := Model{Name: "tiny", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	const tokens = 4 * 256
	final := 3 * 128 // the final norm and the LM head's input
	// Per block and token, in bf16 values: the two norms' fp32 inputs (2
	// values each) and, with trainable weights, their normalised outputs
	// (6 × 128 = 768; 4 × 128 with frozen ones; a fused norm's input, 2 ×
	// 128), q, k, v and the attention output (512), the gated MLP's four
	// intermediates (2048) and the projections' inputs (384): 3712.
	tests := []struct {
		name   string
		plan   Plan
		act    int64
		logits int64
	}{
		{"a full fine-tune saves every block's tensors; the loss 14 B per logit",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF},
			(2*3712 + int64(final)) * tokens * 2, 14 * 1000 * tokens},
		{"LoRA keeps nothing for frozen Linears; peft's per-module dropout keeps a copy and a mask per adapter",
			Plan{Model: tiny, Mode: LoRA, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF},
			(2*2944 + int64(final)) * tokens * 2, 14 * 1000 * tokens},
		{"without dropout the adapters share the one normalised input (LLaMA-Factory's lora_dropout 0)",
			Plan{Model: tiny, Mode: LoRA, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackLlamaFactory, LoRATargets: LoRAQV, Recompute: RecomputeNone},
			(2*2688 + int64(final)) * tokens * 2, 14 * 1000 * tokens},
		{"litgpt's fused qkv adapter has one dropout for q and v",
			Plan{Model: tiny, Mode: LoRA, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackLitGPT},
			(2*2752 + int64(final)) * tokens * 2, 4 * 1000 * tokens},
		{"torch.compile fuses the norms and silu·up, and the loss's upcast into its kernel",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF, Compiled: true},
			(2*2688 + int64(final)) * tokens * 2, 4 * 1000 * tokens},
		{"Liger's RMSNorm and SwiGLU keep what compile's fused ones do; its fused linear cross-entropy two hidden-sized rows a token and the head's fp32 weight gradient, made in the forward",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF, FusedKernels: true, Loss: LossFused},
			(2*2688 + int64(final)) * tokens * 2, 2*128*tokens*2 + 1000*128*4},
		{"pure bf16: the head's gradient in bf16",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackLitGPT, FusedKernels: true, Loss: LossFused},
			-1, 2*128*tokens*2 + 1000*128*2},
		{"DeepSpeed's 16-bit parameters: the head's gradient in bf16, on one device too",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackDeepSpeed, FusedKernels: true, Loss: LossFused},
			-1, 2*128*tokens*2 + 1000*128*2},
		{"LoRA's frozen head has no gradient",
			Plan{Model: tiny, Mode: LoRA, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF, FusedKernels: true, Loss: LossFused},
			-1, 2 * 128 * tokens * 2},
		{"torchtitan's per-op selective checkpointing keeps the input, the attention output and every second matmul's output",
			// h + q + (wq q + wv kv + w1 f + w2 h) = 128+128+128+128+512+128
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackFSDP, Recompute: RecomputeSelective},
			(2*1152 + int64(final)) * tokens * 2, 14 * 1000 * tokens},
		{"checkpointing keeps each block's input, and for the recompute one block's saves and its MLP's gate and up gradients",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF, Recompute: RecomputeFull},
			(2*128 + 3712 + 2*512 + int64(final)) * tokens * 2, 14 * 1000 * tokens},
		{"a checkpoint spanning 2 blocks keeps one input for the pair and recomputes both blocks at once",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF, Recompute: RecomputeFull, RecomputeLayers: 2},
			(128 + 2*3712 + 2*512 + int64(final)) * tokens * 2, 14 * 1000 * tokens},
		{"a group larger than the model is the whole model",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF, Recompute: RecomputeFull, RecomputeLayers: 8},
			(128 + 2*3712 + 2*512 + int64(final)) * tokens * 2, 14 * 1000 * tokens},
		{"litgpt's chunked loss keeps the bf16 logits and bf16 log-softmax",
			Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackLitGPT},
			(2*3712 + int64(final)) * tokens * 2, 4 * 1000 * tokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Estimate(tt.plan)
			if err != nil {
				t.Fatal(err)
			}
			if tt.act < 0 {
				tt.act = b.ActivationsBytes // not what the case is about
			}
			if b.ActivationsBytes != tt.act || b.LogitsBytes != tt.logits {
				t.Errorf("activations %d, logits %d; want %d, %d", b.ActivationsBytes, b.LogitsBytes, tt.act, tt.logits)
			}
		})
	}
}

// The counters: the training peak is the states plus the larger of the
// forward's saved tensors and the step's gradients, the allocator adds its
// slack on what is not a model state, and the device holds the runtime on top.
func TestCounters(t *testing.T) {
	tiny := Model{Name: "tiny", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	b, err := Estimate(Plan{Model: tiny, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256, Stack: StackHF, Backend: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	peak := b.WeightsBytes + b.OptimizerBytes + max(b.ActivationsBytes+b.LogitsBytes, b.GradientsBytes+b.BuffersBytes)
	if b.PeakAllocatedBytes != peak {
		t.Errorf("peak allocated %d, want %d", b.PeakAllocatedBytes, peak)
	}
	transient := peak - b.WeightsBytes - b.GradientsBytes - b.OptimizerBytes
	if want := peak + sat(float64(transient)*allocatorSlackTraining); b.ReservedBytes != want || b.AllocatorBytes != want-peak {
		t.Errorf("reserved %d allocator %d, want %d and %d", b.ReservedBytes, b.AllocatorBytes, want, want-peak)
	}
	if b.TotalBytes != b.ReservedBytes+runtimes["cuda"].context {
		t.Errorf("total %d, want reserved + the CUDA context", b.TotalBytes)
	}
}

// A serving engine takes its share of the device, and a KV cache that does
// not fit what its share leaves makes the device it would need larger.
func TestServingEngine(t *testing.T) {
	tiny := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	dev := 24 * GiB
	p := Plan{Model: tiny, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, SeqLen: 4096, DeviceBytes: dev, Backend: "cuda"}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := sat(0.9*float64(dev)) + runtimes["cuda"].context; b.TotalBytes != want {
		t.Errorf("total %d, want 90%% of the device plus the context (%d)", b.TotalBytes, want)
	}
	p.BatchSize = 64 // 64 × 4096 tokens × 128 KiB: 32 GiB of KV cache
	b, err = Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if b.TotalBytes <= dev {
		t.Errorf("total %d does not exceed the device although the KV cache cannot fit", b.TotalBytes)
	}
}

// PEFT prints "trainable params: 13,631,488" for Llama-3-8B with r=16 on
// q_proj, k_proj, v_proj and o_proj: grouped-query k and v are 1024 wide.
func TestLoRAParamsCountsGroupedQueryProjections(t *testing.T) {
	llama3 := Model{Params: 8_030_261_248, Arch: &Arch{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128}}
	if diff := cmp.Diff(int64(13_631_488), loraParams(llama3, LoRAQKVO, 16)); diff != "" {
		t.Errorf("loraParams (-want +got):\n%s", diff)
	}
	// PEFT's default for Llama (q_proj, v_proj): 6,815,744 at r=16 ("trainable params: 6,815,744").
	if diff := cmp.Diff(int64(6_815_744), loraParams(llama3, LoRAQV, 16)); diff != "" {
		t.Errorf("loraParams q,v (-want +got):\n%s", diff)
	}
}

// --weight-bits replaces the format's bits for the quantised Linears; the
// embeddings and head keep 16 bits.
func TestWeightBits(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000, UnquantizedParams: 200_000}
	b, err := Estimate(Plan{Model: m, Mode: Inference, Precision: capability.Int4, Quant: QuantGPTQ, WeightBits: 5.69, SeqLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := sat(800_000*5.69/8 + 2*200_000); b.WeightsBytes != want {
		t.Errorf("weights %d, want %d", b.WeightsBytes, want)
	}
}

// A GGUF file quantises every matrix and llama.cpp keeps token_embd on the
// host: Llama-3-8B's Q4_K_M (4.58 GiB file, 4.90 bits over 8.03B
// parameters) puts (8.03B - 128,256 x 4,096) x 4.90 bits on the GPU, 4.28
// GiB, against the 4,403.49 MiB (4.30 GiB) "CUDA0 model buffer size" its
// load log prints. A tied head (no HeadParams) is duplicated onto the GPU.
// mlx quantises the embeddings too: Qwen3-4B at 4 bits with a scale and
// bias per 64 (4.5 bits) is 4.02B x 4.5 / 8 = 2.26 GB, the size of
// mlx-community's Qwen3-4B-4bit.
func TestQuantisedEmbeddings(t *testing.T) {
	llama3 := Model{Params: 8_030_261_248, HeadParams: 128_256 * 4096, Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 128_256}}
	for _, st := range []Stack{StackLlamaCpp, StackOllama} {
		b, err := Estimate(Plan{Model: llama3, Mode: Inference, Stack: st, Precision: capability.Int4, WeightBits: 4.90, SeqLen: 1})
		if err != nil {
			t.Fatal(err)
		}
		if want := sat((8_030_261_248 - 128_256*4096) * 4.90 / 8); b.WeightsBytes != want {
			t.Errorf("%s: weights %d, want %d (the quantisation format is the stack's: GGUF)", st, b.WeightsBytes, want)
		}
	}
	tied := llama3
	tied.HeadParams = 0
	b, err := Estimate(Plan{Model: tied, Mode: Inference, Stack: StackLlamaCpp, Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.90, SeqLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := sat(8_030_261_248 * 4.90 / 8); b.WeightsBytes != want {
		t.Errorf("tied: weights %d, want %d", b.WeightsBytes, want)
	}
	// Gemma 3 4B's SigLIP tower (419,816,304 parameters) is its own f16
	// mmproj file beside the quantised language model.
	gemma3 := Model{Params: 4_300_079_472, VisionParams: 419_816_304, Arch: &Arch{Layers: 34, KVLayers: 34, Hidden: 2560, Heads: 8, KVHeads: 4, HeadDim: 256, Vocab: 262_208}}
	b, err = Estimate(Plan{Model: gemma3, Mode: Inference, Stack: StackOllama, Precision: capability.Int4, WeightBits: 4.85, SeqLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := sat((4_300_079_472-419_816_304)*4.85/8 + 2*419_816_304); b.WeightsBytes != want {
		t.Errorf("gemma3 with its vision tower: weights %d, want %d", b.WeightsBytes, want)
	}
	qwen3 := Model{Params: 4_022_468_096, Arch: &Arch{Layers: 36, KVLayers: 36, Hidden: 2560, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 151_936}}
	b, err = Estimate(Plan{Model: qwen3, Mode: Inference, Stack: StackMLX, Precision: capability.Int4, SeqLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := sat(4_022_468_096 * 4.5 / 8); b.WeightsBytes != want {
		t.Errorf("mlx: weights %d, want %d", b.WeightsBytes, want)
	}
}

// mlx-lm's generate runs the model over what its 2,048-token prefill steps
// leave of the prompt and slices the last position's logits afterwards:
// a 2,048-token prompt to Qwen3-4B computes 2,048 x 151,936 16-bit logits
// (0.58 GiB); a 4,100-token one leaves 4 tokens for the last call.
func TestMLXLastChunkLogits(t *testing.T) {
	qwen3 := Model{Params: 4_022_468_096, Arch: &Arch{Layers: 36, KVLayers: 36, Hidden: 2560, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 9728, Vocab: 151_936, Gated: true}}
	for _, c := range []struct{ prompt, want int }{{2048, 2048}, {4100, 4}, {100, 100}} {
		b, err := Estimate(Plan{Model: qwen3, Mode: Inference, Stack: StackMLX, Precision: capability.BF16, SeqLen: c.prompt + 128, PromptLen: c.prompt})
		if err != nil {
			t.Fatal(err)
		}
		if want := sat(float64(c.want) * 151_936 * 2); b.LogitsBytes != want {
			t.Errorf("prompt %d: logits %d, want %d", c.prompt, b.LogitsBytes, want)
		}
	}
}

// mlx evaluates a prompt chunk's attention with its fused Metal kernel
// only for head sizes 64, 72, 80, 96 and 128; at 256 (Qwen3.5/3.6, Gemma)
// the unfused fallback holds the chunk's scores against every key: mlx-lm
// #1480's Qwen3.6-35B-A3B at a 192,000-token prompt holds 2,048 × 192,000
// × 16 heads × 2 bytes beside the cache. mlx-lm before 0.24.1 masked each
// chunk with an array mlx's fused kernel refused, so every head size was
// unfused then. --prefill-chunk sizes the chunk.
func TestMLXUnfusedPromptAttention(t *testing.T) {
	arch := func(headDim int) *Arch {
		return &Arch{Layers: 40, KVLayers: 10, Hidden: 2048, Heads: 16, KVHeads: 2, HeadDim: headDim, FFN: 512, Vocab: 248_320, Gated: true}
	}
	act := func(p Plan) int64 {
		t.Helper()
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		return b.ActivationsBytes
	}
	const prompt = 192_000
	base := Plan{Mode: Inference, Stack: StackMLX, Precision: capability.Int4, SeqLen: prompt}
	for _, c := range []struct {
		headDim int
		version string
		chunk   int
		scores  float64
	}{
		{256, "", 0, 16 * 2048 * prompt * 2},
		{256, "", 1024, 16 * 1024 * prompt * 2},
		{128, "", 0, 0},
		{96, "", 0, 0},
		{128, "0.22.1", 0, 16 * 2048 * prompt * 2},
		{128, "0.24.1", 0, 0},
	} {
		p := base
		p.Model = Model{Params: 35_000_000_000, Arch: arch(c.headDim)}
		p.StackVersion, p.PrefillChunk = c.version, c.chunk
		fused := p
		fused.Stack = StackLlamaCpp // the same graph accounting, attention fused
		fused.PrefillChunk = c.chunk
		if c.chunk == 0 {
			fused.PrefillChunk = 2048
		}
		if got, want := act(p)-act(fused), sat(c.scores); got != want {
			t.Errorf("head %d, mlx-lm %q, chunk %d: unfused scores %d, want %d", c.headDim, c.version, c.chunk, got, want)
		}
	}
	// Other stacks have no mlx fallback; and the chunk is a local engine's.
	p := base
	p.Model = Model{Params: 35_000_000_000, Arch: arch(256)}
	p.Stack, p.PrefillChunk = StackVLLM, 1024
	if got := prefillChunk(p); got != 8192 {
		t.Errorf("vLLM's chunk is its prefill budget (--max-num-batched-tokens), not --prefill-chunk: %d", got)
	}
}

// DeepSeek-V3's latent (kv_lora_rank 512 + rope 64) over 61 layers is
// 70,272 B per token in 16 bits where the engine caches it; transformers
// keeps every head's keys and values; llama.cpp kept the rank again as V
// before its V-less cache.
func TestLatentKVCache(t *testing.T) {
	a := &Arch{Layers: 61, KVLayers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 128, Vocab: 129_280, LatentKV: 576, LatentRank: 512}
	m := Model{Params: 671_000_000_000, Arch: a}
	for _, c := range []struct {
		stack   Stack
		version string
		perTok  float64
	}{
		{StackVLLM, "0.8.5", 61 * 576 * 2},
		{StackVLLM, "0.6.6", 2 * 61 * 128 * 128 * 2},
		{StackSGLang, "", 61 * 576 * 2},
		{StackLlamaCpp, "b6000", 61 * 1088 * 2},
		{StackLlamaCpp, "b8000", 61 * 576 * 2},
		{StackOllama, "0.12.0", 61 * 1088 * 2},
		{StackHF, "", 2 * 61 * 128 * 128 * 2},
	} {
		p := Plan{Model: m, Mode: Inference, Stack: c.stack, StackVersion: c.version, Precision: capability.BF16}
		if got, want := kvCache(a, p, 1, 1000), sat(1000*c.perTok); got != want {
			t.Errorf("%s %s: KV cache %d, want %d", c.stack, c.version, got, want)
		}
	}
}

// What 4-bit LoRA stores besides the 4-bit Linears depends on the stack:
// peft's prepare_model_for_kbit_training (transformers recipes, axolotl)
// casts the 16-bit rest to fp32; torchtune keeps it 16-bit; litgpt's
// Lightning plugin quantises the output head too. Sharded QLoRA skips the
// cast (TRL does not call prepare_model_for_kbit_training for it).
func TestQLoRAStoredWeightsByStack(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000, HeadParams: 128_000, UnquantizedParams: 256_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	stored := func(stack Stack, sharding Sharding) int64 {
		return storedWeights(m, withDefaults(Plan{Model: m, Mode: QLoRA, Stack: stack, Sharding: sharding, Devices: 2}))
	}
	bits := quantBits(capability.Int4, "", m)
	dq := 4 + 8.0/64 + 32.0/16384 // double-quantised NF4
	// torchtune stores torchao's NF4Tensor, double-quantised, and keeps
	// the rest in bf16.
	if got, want := stored(StackTorchtune, ShardNone), sat(744_000*dq/8+2*256_000); got != want {
		t.Errorf("torchtune: %d bytes, want %d", got, want)
	}
	plain := sat(744_000*bits/8 + 2*256_000) // load_in_4bit's NF4, 16-bit rest
	if got := stored(StackHF, ShardNone) - plain; got != 2*256_000 {
		t.Errorf("hf stores %d bytes more than plain NF4 with a 16-bit rest, want the fp32 rest: %d", got, 2*256_000)
	}
	if got := stored(StackHF, ShardZeRO3); got != plain {
		t.Errorf("sharded hf QLoRA: %d bytes, want %d (no fp32 cast)", got, plain)
	}
	if got, want := stored(StackLitGPT, ShardNone), sat(872_000*bits/8+2*128_000); got != want {
		t.Errorf("litgpt: %d bytes, want %d (the head in 4 bits)", got, want)
	}
	// axolotl quantises the block constants again (4 + 8/64 + 32/16384
	// bits) and casts the embeddings and head back to 16 bits.
	if got, want := stored(StackAxolotl, ShardNone), sat(744_000*(4+8.0/64+32.0/16384)/8+2*256_000); got != want {
		t.Errorf("axolotl: %d bytes, want %d (double quantisation, 16-bit rest)", got, want)
	}
}

// Replicated training through torch DDP holds a flat copy of the gradients
// in its buckets; one device, sharded training and DeepSpeed do not.
func TestDDPBucketsCopyTheGradients(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	peak := func(stack Stack, devices int, sharding Sharding) Breakdown {
		b, err := Estimate(Plan{Model: m, Mode: Training, Precision: capability.BF16, Stack: stack, Devices: devices, Sharding: sharding, SeqLen: 64})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, two := peak(StackHF, 1, ShardNone), peak(StackHF, 2, ShardNone)
	if got := two.PeakAllocatedBytes - one.PeakAllocatedBytes; got != one.GradientsBytes {
		t.Errorf("DDP on 2 devices adds %d bytes, want the gradients' %d", got, one.GradientsBytes)
	}
	if got := two.BuffersBytes - one.BuffersBytes; got != one.GradientsBytes {
		t.Errorf("DDP buckets shown as %d buffer bytes, want %d", got, one.GradientsBytes)
	}
	for _, stack := range []Stack{StackDeepSpeed, StackFSDP, StackTorchtune} {
		if a, b := peak(stack, 1, ShardNone), peak(stack, 2, ShardNone); a.PeakAllocatedBytes != b.PeakAllocatedBytes {
			t.Errorf("%s builds no DDP buckets: %d on one device, %d on two", stack, a.PeakAllocatedBytes, b.PeakAllocatedBytes)
		}
	}
}

// peft's prepare_model_for_kbit_training turns gradient checkpointing on
// for 8-bit LoRA as for QLoRA; 16-bit LoRA keeps the stack's default.
func TestKbitLoRACheckpointsByDefault(t *testing.T) {
	for _, tt := range []struct {
		mode Mode
		prec capability.Precision
		want Recompute
	}{
		{QLoRA, capability.Int4, RecomputeFull},
		{LoRA, capability.Int8, RecomputeFull},
		{LoRA, capability.BF16, RecomputeNone},
	} {
		if got := withDefaults(Plan{Mode: tt.mode, Precision: tt.prec, Stack: StackHF}).Recompute; got != tt.want {
			t.Errorf("%s at %s: recompute %q, want %q", tt.mode, tt.prec, got, tt.want)
		}
	}
}

// mlx's fast attention has no backward on Apple GPUs: the gradient of one
// block's attention is recomputed unfused, with b·heads·s² probabilities,
// their gradient and the scores' gradient alive at once.
func TestMLXAttentionBackwardIsUnfused(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	act := func(stack Stack) int64 {
		b, err := Estimate(Plan{Model: m, Mode: LoRA, Precision: capability.BF16, Stack: stack, BatchSize: 2, SeqLen: 256, LoRARank: 8,
			LoRATargets: LoRAQV, LoRALayers: 2, Recompute: RecomputeNone, Loss: LossChunked})
		if err != nil {
			t.Fatal(err)
		}
		return b.ActivationsBytes
	}
	// Against torchtune's profile (also 16-bit adapters without dropout,
	// SDPA): the difference is the three score-sized arrays, less what
	// torchtune's unfused RMSNorms keep beyond mx.fast.rms_norm's 16-bit
	// input (their fp32 inputs: two more hidden-sized units per token and
	// block).
	scores, norms := int64(3*2*256*2*256*2), int64(2*128*(2*256)*2*2)
	if got, want := act(StackMLX)-act(StackTorchtune), scores-norms; got != want {
		t.Errorf("mlx keeps %d more bytes than a fused backward, want %d", got, want)
	}
}

// torchtune's LoRA recipes adapt q and v before v0.5.0 and add the output
// projection and the MLP from it.
func TestTorchtuneLoRATargetsByRelease(t *testing.T) {
	for v, want := range map[string]LoRATargets{"0.4.0": LoRAQV, "0.3": LoRAQV, "0.5.0": LoRAAllLinear, "": LoRAAllLinear} {
		if got := withDefaults(Plan{Mode: LoRA, Precision: capability.BF16, Stack: StackTorchtune, StackVersion: v}).LoRATargets; got != want {
			t.Errorf("torchtune %q: targets %s, want %s", v, got, want)
		}
	}
}

// Unsloth's LoRA kernels save, per token and block: two 16-bit norm inputs,
// q, k, v and the attention output (o_proj's input), the qkv and MLP
// kernels' inputs and the MLP's gate and up: 2 + 512 + 128 + 128 + 2·512.
func TestUnslothLoRAKernelsSaveLess(t *testing.T) {
	tiny := Model{Name: "tiny", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	s := resolve(withDefaults(Plan{Model: tiny, Mode: LoRA, Precision: capability.BF16, Stack: StackUnsloth}))
	if got, want := layerSaved(s, tiny.Arch, true, 256), 2.0+512+128+128+2*512; got != want {
		t.Errorf("unsloth saves %g values per token and block, want %g", got, want)
	}
}

// generate() over a cache returned as new tuples (transformers before
// 4.42, remote-code Qwen-1/ChatGLM) holds the previous step's cache beside
// the new one; the DynamicCache generate() creates from 4.42 replaces each
// layer's tensor in place.
func TestTupleKVCacheDoublesTheDecodePeak(t *testing.T) {
	arch := &Arch{Layers: 16, KVLayers: 16, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 256, Vocab: 1000, Gated: true}
	peak := func(family, version string) Breakdown {
		b, err := Estimate(Plan{Model: Model{Name: "m", Family: family, Params: 1_000_000, Arch: arch}, Mode: Inference,
			Precision: capability.BF16, Stack: StackHF, StackVersion: version, BatchSize: 8, SeqLen: 4096,
			Attention: AttentionSDPA}) // fused, as transformers 4.35 had it with BetterTransformer: the cache is what is tested
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The prefill's working set and the logits are not held together.
	sum := func(b Breakdown) int64 {
		return b.WeightsBytes + b.KVCacheBytes + max(b.ActivationsBytes, b.LogitsBytes) + b.BuffersBytes
	}
	now := peak("llama", "4.46.0")
	if now.PeakAllocatedBytes != sum(now) {
		t.Errorf("DynamicCache: peak %d, want the parts %d", now.PeakAllocatedBytes, sum(now))
	}
	for _, old := range []Breakdown{peak("llama", "4.35.2"), peak("llama", "4.41.2"), peak("qwen", "4.46.0"), peak("chatglm", "")} {
		want := max(sum(old), old.WeightsBytes+2*old.KVCacheBytes+old.BuffersBytes)
		if old.PeakAllocatedBytes != want || want == sum(old) {
			t.Errorf("tuple cache: peak %d, want weights + two caches %d (parts %d)", old.PeakAllocatedBytes, want, sum(old))
		}
	}
}

// Unsloth before 2024.11 kept the 16-bit logits for its cross-entropy
// kernel; since, its fused loss computes fp32 logits and their gradient a
// chunk at a time within 1 GB (target_gb).
func TestUnslothLogitsByRelease(t *testing.T) {
	big := Model{Name: "big-vocab", Params: 1_000_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 256_000, Gated: true}}
	logits := func(v string) int64 {
		b, err := Estimate(Plan{Model: big, Mode: QLoRA, Stack: StackUnsloth, StackVersion: v, BatchSize: 2, SeqLen: 4096})
		if err != nil {
			t.Fatal(err)
		}
		return b.LogitsBytes
	}
	tokens := int64(2 * 4096)
	if got, want := logits("2024.10.0"), 2*int64(big.Arch.Vocab)*tokens; got != want {
		t.Errorf("unsloth 2024.10: logits %d bytes, want the 16-bit logits %d", got, want)
	}
	rows := 2 * int64(big.Arch.Hidden) * tokens * 2
	if got, want := logits("2025.3.14"), int64(1e9)+rows; got != want {
		t.Errorf("unsloth 2025.3: logits %d bytes, want the 1 GB chunk budget and the hidden rows' gradient %d", got, want)
	}
}

// ZeRO through a transformers-based stack is DeepSpeed: 16-bit parameters
// and gradients on the device, the fp32 master and Adam states sharded
// (2 + 2/n + 12/n bytes per parameter at stage 2), not autocast's fp32
// weights with their 16-bit copy.
func TestZeROWithTheTrainerKeepsDeepSpeedStates(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	for _, stack := range []Stack{StackHF, StackAuto, StackDeepSpeed, StackTRL} {
		b, err := Estimate(Plan{Model: m, Mode: Training, Precision: capability.BF16, Stack: stack, Devices: 4, Sharding: ShardZeRO2, SeqLen: 64})
		if err != nil {
			t.Fatal(err)
		}
		if b.WeightsBytes != 2e9 || b.GradientsBytes != 2e9/4 || b.OptimizerBytes != 12e9/4 {
			t.Errorf("%s ZeRO-2 on 4: weights %d, gradients %d, optimizer %d; want 2e9, 5e8, 3e9", stack, b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes)
		}
	}
}

// DeepSpeed's ZeRO optimizer copies a rank's 16-bit gradient partition to
// fp32 at the step, for the optimizer to read beside the fp32 master: a
// parameter group's at stages 1 and 2 (stage_1_and_2.py, step), a
// sub-group's of at most sub_group_size (1e9) elements at stage 3
// (stage3.py, _prepare_fp32_grad_for_sub_group), and steps that group
// alone, so a foreach AdamW's temporary (the Trainer's own optimizer,
// which ZeRO wraps) covers the same group. With the states on the host
// the step runs there and nothing is copied on the device.
func TestZeROStepCopiesGradientsToFP32(t *testing.T) {
	// Llama-3-8B's shapes, with a round parameter count.
	arch := &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128_256, Gated: true}
	est := func(params int64, sh Sharding, off Offload, devices int, prec capability.Precision, stack Stack) (Breakdown, int64) {
		t.Helper()
		p := Plan{Model: Model{Name: "m", Params: params, Arch: arch}, Mode: Training, Precision: prec, Stack: stack, Devices: devices, Sharding: sh, Offload: off, SeqLen: 64}
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		s := resolve(withDefaults(p))
		return b, gatherBuffers(s, p.Model) + zeroBucket(s, p.Model)
	}
	for _, c := range []struct {
		params  int64
		sh      Sharding
		off     Offload
		prec    capability.Precision
		devices int
		stack   Stack
		want    float64
	}{
		{8_000_000_000, ShardZeRO2, OffloadNone, capability.BF16, 8, StackDeepSpeed, 4 * 1e9},
		{8_000_000_000, ShardZeRO1, OffloadNone, capability.FP16, 4, StackDeepSpeed, 4 * 2e9},
		{8_000_000_000, ShardZeRO3, OffloadNone, capability.BF16, 4, StackDeepSpeed, 4 * 1e9}, // 2e9 a rank, one sub-group of 1e9 at a time
		{8_000_000_000, ShardZeRO3, OffloadCPU, capability.BF16, 8, StackDeepSpeed, 0},
		// Through the Trainer, whose own foreach AdamW ZeRO wraps: its
		// state-sized temporary over the same group beside the copy.
		{8_000_000_000, ShardZeRO3, OffloadNone, capability.BF16, 4, StackHF, 4*1e9 + 4*1e9},
		{8_000_000_000, ShardZeRO2, OffloadNone, capability.BF16, 8, StackHF, 4*1e9 + 4*1e9},
	} {
		b, gathered := est(c.params, c.sh, c.off, c.devices, c.prec, c.stack)
		if got := b.BuffersBytes - gathered; got != sat(c.want) {
			t.Errorf("%s %s %s offload %s on %d: buffers %d beside the gathered blocks and the gradient bucket, want the step's %.0f", c.stack, c.sh, c.prec, c.off, c.devices, got, c.want)
		}
	}
}

// ZeRO-1 shards the optimizer states only: every device keeps whole
// gradients (2 + 2 + 12/n bytes per parameter through DeepSpeed). With the
// states offloaded, stage 1 still accumulates whole gradients on the
// device (stage 2 sends them to the host bucket by bucket). Megatron's
// distributed optimizer, stage 1 in shape, keeps ZeRO-2's totals as devctl
// counts its fp32 main parameters with the weights.
func TestZeROStageOneKeepsWholeGradients(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	est := func(stack Stack, sh Sharding, off Offload, devices int) Breakdown {
		t.Helper()
		b, err := Estimate(Plan{Model: m, Mode: Training, Precision: capability.BF16, Stack: stack, Devices: devices, Sharding: sh, Offload: off, SeqLen: 64})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if b := est(StackDeepSpeed, ShardZeRO1, OffloadNone, 4); b.WeightsBytes != 2e9 || b.GradientsBytes != 2e9 || b.OptimizerBytes != 12e9/4 {
		t.Errorf("DeepSpeed ZeRO-1 on 4: weights %d, gradients %d, optimizer %d; want 2e9, 2e9, 3e9", b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes)
	}
	if b := est(StackHF, ShardZeRO1, OffloadNone, 4); b.GradientsBytes != 2e9 || b.OptimizerBytes != 12e9/4 {
		t.Errorf("the Trainer's ZeRO-1 on 4: gradients %d, optimizer %d; want DeepSpeed's 2e9 and 3e9", b.GradientsBytes, b.OptimizerBytes)
	}
	one, two := est(StackDeepSpeed, ShardZeRO1, OffloadCPU, 1), est(StackDeepSpeed, ShardZeRO2, OffloadCPU, 1)
	if one.GradientsBytes != 2e9 || two.GradientsBytes >= one.GradientsBytes || one.OptimizerBytes != 0 {
		t.Errorf("offloaded on one device: stage 1 gradients %d (want the whole 2e9), stage 2 %d (want less), stage 1 optimizer %d (want 0)",
			one.GradientsBytes, two.GradientsBytes, one.OptimizerBytes)
	}
	if a, b := est(StackMegatron, ShardZeRO1, OffloadNone, 4), est(StackMegatron, ShardZeRO2, OffloadNone, 4); a.TotalBytes != b.TotalBytes {
		t.Errorf("Megatron ZeRO-1 %d bytes, ZeRO-2 %d: want the distributed optimizer's totals either way", a.TotalBytes, b.TotalBytes)
	}
}

// flash-attention takes grouped k and v as they are; PyTorch's SDPA gets
// them expanded where the stack calls repeat_kv (transformers' sdpa path).
func TestFlashAttentionKeepsGroupedKV(t *testing.T) {
	gqa := &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 4, KVHeads: 1, HeadDim: 32, FFN: 512, Vocab: 1000, Gated: true}
	saved := func(a Attention) float64 {
		return layerSaved(resolve(withDefaults(Plan{Model: Model{Params: 1e6, Arch: gqa}, Mode: Training, Precision: capability.BF16, Stack: StackHF, Attention: a})), gqa, false, 256)
	}
	// q 128, kv 32: SDPA through repeat_kv saves k and v at 128 each.
	if got := saved(AttentionSDPA) - saved(AttentionFlash); got != 2*(128-32) {
		t.Errorf("sdpa saves %g more values per token than flash, want %d", got, 2*(128-32))
	}
	for in, want := range map[string]Attention{"flash_attention_2": AttentionFlash, "FA2": AttentionFlash, "xformers": AttentionSDPA, "sdpa": AttentionSDPA, "eager": AttentionEager} {
		if got, ok := ParseAttention(in); !ok || got != want {
			t.Errorf("ParseAttention(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := ParseAttention("paged"); ok {
		t.Error("ParseAttention accepted an unknown kernel")
	}
}

// Preference objectives: paired ones (DPO, ORPO, SimPO) run the chosen and
// the rejected completion, twice the sequences; DPO and KTO keep a frozen
// reference copy in full training (fp32 under autocast, as TRL's
// create_reference_model copies the model), none under LoRA (the base with
// the adapters disabled is the reference).
func TestPreferenceObjectives(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	est := func(mode Mode, o Objective) Breakdown {
		b, err := Estimate(Plan{Model: m, Mode: mode, Precision: capability.BF16, Stack: StackHF, Objective: o, BatchSize: 2, SeqLen: 128})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sft := est(Training, ObjectiveSFT)
	if dpo := est(Training, ObjectiveDPO); dpo.WeightsBytes-sft.WeightsBytes != 4*1_000_000 || dpo.LogitsBytes != 2*sft.LogitsBytes {
		t.Errorf("dpo: weights +%d (want the fp32 reference, 4e6), logits %d (want twice %d)", dpo.WeightsBytes-sft.WeightsBytes, dpo.LogitsBytes, sft.LogitsBytes)
	}
	if kto := est(Training, ObjectiveKTO); kto.LogitsBytes != sft.LogitsBytes || kto.WeightsBytes == sft.WeightsBytes {
		t.Errorf("kto: logits %d (want %d: unpaired), weights %d (want a reference beside %d)", kto.LogitsBytes, sft.LogitsBytes, kto.WeightsBytes, sft.WeightsBytes)
	}
	if orpo := est(Training, ObjectiveORPO); orpo.WeightsBytes != sft.WeightsBytes || orpo.ActivationsBytes <= sft.ActivationsBytes {
		t.Errorf("orpo: weights %d (want %d: no reference), activations %d (want more than %d)", orpo.WeightsBytes, sft.WeightsBytes, orpo.ActivationsBytes, sft.ActivationsBytes)
	}
	if cpo, orpo := est(Training, ObjectiveCPO), est(Training, ObjectiveORPO); cpo.TotalBytes != orpo.TotalBytes {
		t.Errorf("cpo: %d bytes, want ORPO's %d (paired, no reference)", cpo.TotalBytes, orpo.TotalBytes)
	}
	if l, ld := est(LoRA, ObjectiveSFT), est(LoRA, ObjectiveDPO); ld.WeightsBytes != l.WeightsBytes || ld.LogitsBytes != 2*l.LogitsBytes {
		t.Errorf("lora dpo: weights %d (want %d: no copy), logits %d (want twice %d)", ld.WeightsBytes, l.WeightsBytes, ld.LogitsBytes, l.LogitsBytes)
	}
	if err := (Plan{Model: m, Objective: "ppo"}).Validate(); err == nil {
		t.Error("an unknown objective passed Validate")
	}
}

// --prompt-len: the prefill works on the prompt, the KV cache holds the
// whole sequence, and transformers before 4.45 keeps the prompt's logits.
func TestPromptLenSizesThePrefill(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	est := func(prompt int) Breakdown {
		b, err := Estimate(Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackHF, StackVersion: "4.40", SeqLen: 1024, PromptLen: prompt})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	all, short := est(0), est(256)
	if short.KVCacheBytes != all.KVCacheBytes {
		t.Errorf("KV cache %d with a 256-token prompt, want the whole sequence's %d", short.KVCacheBytes, all.KVCacheBytes)
	}
	if short.LogitsBytes*4 != all.LogitsBytes || short.ActivationsBytes >= all.ActivationsBytes {
		t.Errorf("prompt 256 of 1024: logits %d (want a quarter of %d), prefill %d (want less than %d)", short.LogitsBytes, all.LogitsBytes, short.ActivationsBytes, all.ActivationsBytes)
	}
	if err := (Plan{Model: m, SeqLen: 10, PromptLen: 11}).Validate(); err == nil {
		t.Error("a prompt longer than the sequence passed Validate")
	}
}

// LoRA under ZeRO-3/FSDP shards the frozen base and the adapters with their
// gradients and states; ZeRO-2 shards only gradients and states, the frozen
// base stays whole on every device.
func TestShardedLoRA(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	est := func(sh Sharding, d int) Breakdown {
		b, err := Estimate(Plan{Model: m, Mode: LoRA, Precision: capability.BF16, Stack: StackHF, Sharding: sh, Devices: d, SeqLen: 64})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one, z2, z3 := est(ShardNone, 1), est(ShardZeRO2, 4), est(ShardZeRO3, 4)
	if z2.WeightsBytes != one.WeightsBytes || z2.GradientsBytes*4 != one.GradientsBytes || z2.OptimizerBytes*4 != one.OptimizerBytes {
		t.Errorf("ZeRO-2: weights %d (want %d), gradients %d, states %d (want a quarter of %d, %d)", z2.WeightsBytes, one.WeightsBytes, z2.GradientsBytes, z2.OptimizerBytes, one.GradientsBytes, one.OptimizerBytes)
	}
	if z3.WeightsBytes*4 != one.WeightsBytes || z3.OptimizerBytes*4 != one.OptimizerBytes {
		t.Errorf("ZeRO-3: weights %d, states %d; want a quarter of %d, %d", z3.WeightsBytes, z3.OptimizerBytes, one.WeightsBytes, one.OptimizerBytes)
	}
	if tp := est(ShardTP, 4); tp.WeightsBytes*4 != one.WeightsBytes {
		t.Errorf("tensor parallel: weights %d, want a quarter of %d", tp.WeightsBytes, one.WeightsBytes)
	}
}

// A checkpointed run frees the loss's buffers in the loss's backward,
// before it recomputes the first block: its peak holds the checkpoints and
// the larger of the loss buffers and the recompute, not both.
func TestCheckpointedPeakHoldsLossOrRecompute(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000,
		Arch: &Arch{Layers: 4, KVLayers: 4, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	for _, mode := range []Mode{LoRA, QLoRA} { // full training overlaps the step too (trainingPeak)
		b, err := Estimate(Plan{Model: m, Mode: mode, Precision: capability.BF16, Stack: StackHF, Recompute: RecomputeFull, BatchSize: 4, SeqLen: 256})
		if err != nil {
			t.Fatal(err)
		}
		s := resolve(withDefaults(Plan{Model: m, Mode: mode, Precision: capability.BF16, Stack: StackHF, Recompute: RecomputeFull, BatchSize: 4, SeqLen: 256}))
		_, logits, recompute := trainingActivations(s, m.Arch, 4*256, mode != Training)
		if recompute == 0 || b.OverlapBytes != -sat(min(logits, recompute)) {
			t.Errorf("%s: overlap %d, want minus the smaller of loss %g and recompute %g", mode, b.OverlapBytes, logits, recompute)
		}
	}
}

// A model family added once generate() kept a DynamicCache (4.42) never
// ran with tuple caches, whatever release a plan states; one added before
// did, under the releases before 4.42 (Qwen2 from 4.37, the zerollama
// table's transformers 4.38.2).
func TestTupleCacheTakesTheFamilysRelease(t *testing.T) {
	for _, tt := range []struct {
		family, version string
		want            bool
	}{
		{"qwen2", "4.38.2", true}, {"qwen2", "4.42.0", false}, {"gemma2", "4.41.0", false}, {"gemma3", "4.35.0", false},
		{"llama", "4.35.0", true}, {"llama", "", false}, {"qwen", "4.46.0", true},
	} {
		p := Plan{Model: Model{Family: tt.family}, Stack: StackHF, StackVersion: tt.version}
		if got := tupleKVCache(p); got != tt.want {
			t.Errorf("%s at transformers %q: tuple cache %v, want %v", tt.family, tt.version, got, tt.want)
		}
	}
}

// TRL's defaults by release: gradient checkpointing from v0.22, the
// chunked_nll loss (no materialised logits) from v1.7.
func TestTRLReleases(t *testing.T) {
	for _, tt := range []struct {
		version string
		rc      Recompute
		loss    Loss
	}{{"0.21.0", RecomputeNone, LossFull}, {"0.22.0", RecomputeFull, LossFull}, {"1.6.0", RecomputeFull, LossFull}, {"1.7.0", RecomputeFull, LossFused}, {"", RecomputeFull, LossFused}} {
		p := withDefaults(Plan{Mode: LoRA, Precision: capability.BF16, Stack: StackTRL, StackVersion: tt.version})
		if p.Recompute != tt.rc || p.Loss != tt.loss {
			t.Errorf("trl %q: recompute %s, loss %s; want %s, %s", tt.version, p.Recompute, p.Loss, tt.rc, tt.loss)
		}
	}
	if p := withDefaults(Plan{Mode: LoRA, Precision: capability.BF16, Stack: StackTRL, StackVersion: "1.7.0", Loss: LossFull, Recompute: RecomputeNone}); p.Loss != LossFull || p.Recompute != RecomputeNone {
		t.Errorf("trl: the plan's own loss and recompute were overridden: %s, %s", p.Loss, p.Recompute)
	}
	// TRL's chunked loss (--kernels chunked-ce) is chunked_nll at any release: it never
	// materialises the logits.
	if p := withDefaults(Plan{Mode: LoRA, Precision: capability.BF16, Stack: StackTRL, StackVersion: "1.6.0", Loss: LossChunked}); p.Loss != LossFused {
		t.Errorf("trl --loss chunked: planned as %s, want TRL's chunked_nll (%s)", p.Loss, LossFused)
	}
}

// llama.cpp without flash attention reserves a chunk's f32 scores and
// softmax against the whole context.
func TestLlamaCppEagerScoresSpanTheContext(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	est := func(a Attention) int64 {
		b, err := Estimate(Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackLlamaCpp, Attention: a, SeqLen: 8192})
		if err != nil {
			t.Fatal(err)
		}
		return b.ActivationsBytes
	}
	if got, want := est(AttentionEager)-est(AttentionSDPA), int64(2*512*8192*2*4); got != want {
		t.Errorf("eager llama.cpp adds %d bytes, want heads × n_ubatch × n_ctx × f32 × 2 = %d", got, want)
	}
}

// Each serving engine's rule gives the KV cache a different share
// (servingDefaults, docs/recommend.md "Serving engines"): for a 2 GiB model
// on a 24 GiB device, vLLM holds 0.9 of the device, SGLang its fraction of
// the device plus activations and graphs, lmdeploy the weights plus 0.8 of
// what they leave, TensorRT-LLM 0.9 of what weights and activations leave;
// what is free is read once the CUDA context (ctx) exists.
func TestServingEngineRules(t *testing.T) {
	tiny := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	dev := 24 * GiB
	held := func(st Stack, version string) (Breakdown, float64, float64, float64) {
		t.Helper()
		p := Plan{Model: tiny, Mode: Inference, Precision: capability.BF16, Stack: st, StackVersion: version, SeqLen: 4096, DeviceBytes: dev, Backend: "cuda"}
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		return b, float64(b.WeightsBytes), float64(b.ActivationsBytes), float64(b.BuffersBytes)
	}
	ctx := float64(runtimes["cuda"].context)
	near := func(name string, got int64, want float64) {
		t.Helper()
		if math.Abs(float64(got)-want) > float64(MiB) {
			t.Errorf("%s: held %.2f GiB, want %.2f GiB", name, float64(got)/float64(GiB), want/float64(GiB))
		}
	}
	b, _, _, _ := held(StackTGI, "")
	near("tgi v3", b.PeakAllocatedBytes, 0.9*float64(dev))
	b, w, a, g := held(StackTGI, "2.3.0")
	near("tgi v2", b.PeakAllocatedBytes, w+a+g+0.95*(float64(dev)-ctx-w-a))
	b, w, a, g = held(StackSGLang, "")
	share, _ := sglangDefaults(Plan{DeviceBytes: dev})
	near("sglang", b.PeakAllocatedBytes, share*float64(dev)+a+g)
	b, w, a, g = held(StackLMDeploy, "")
	near("lmdeploy", b.PeakAllocatedBytes, w+0.8*(float64(dev)-ctx-w)+a)
	if g != 0 {
		t.Errorf("lmdeploy: %.2f GiB of CUDA graphs, TurboMind captures none", g/float64(GiB))
	}
	b, w, a, g = held(StackLMDeploy, "0.2.1")
	near("lmdeploy 0.2.1", b.PeakAllocatedBytes, w+0.5*float64(dev)+a+g)
	b, w, a, g = held(StackTRTLLM, "")
	near("tensorrt-llm", b.PeakAllocatedBytes, w+a+g+0.9*(float64(dev)-ctx-w-a))
	if b.KVCacheBytes <= 0 {
		t.Errorf("tensorrt-llm: no KV cache")
	}
}

// SGLang's default mem_fraction_static (server_args.py): (memory −
// reserved)/memory from 0.4.7.post1, the tensor-parallel table before.
func TestSGLangDefaultFraction(t *testing.T) {
	for _, c := range []struct {
		gib     int64
		version string
		devices int
		want    float64
		chunk   int
	}{
		{80, "", 1, 0.836, 8192},     // 512 + 1.5×8192 + 2×256 + 128 MiB = 13,440 of 81,920
		{24, "", 1, 0.847, 2048},     // 512 + 3,072 + 48 + 128 = 3,760 of 24,576
		{80, "0.4.0", 8, 0.81, 8192}, // the 0.4.0 table, tp 8
		{16, "0.4.1", 1, 0.88, 2048}, // under 25 GB the prefill chunk is 2,048 from 0.4.0
		{2, "", 1, 0, 2048},          // the reserve is larger than the device: nothing left
	} {
		p := Plan{DeviceBytes: c.gib * GiB, StackVersion: c.version, Devices: c.devices}
		if c.devices > 1 {
			p.Sharding = ShardTP
		}
		share, chunk := sglangDefaults(p)
		if math.Abs(share-c.want) > 0.0005 || chunk != c.chunk {
			t.Errorf("%d GiB, %q, tp %d: %.3f and chunk %d, want %.3f and %d", c.gib, c.version, c.devices, share, chunk, c.want, c.chunk)
		}
	}
}

// transformers runs a family with SDPA from the release that gave its
// modeling file _supports_sdpa; before, and for families that never got it,
// eager attention and its b × heads × s² scores.
func TestTransformersAttentionByRelease(t *testing.T) {
	for _, c := range []struct {
		stack   Stack
		family  string
		version string
		eager   bool
	}{
		{StackHF, "llama", "4.35.2", true},
		{StackHF, "llama", "4.36.0", false},
		{StackHF, "bert", "4.40.2", true},
		{StackHF, "bert", "4.41.0", false},
		{StackHF, "gemma2", "4.46.1", true}, // eager by default for soft-capping, v4.45-v4.47
		{StackHF, "gemma2", "4.48.0", false},
		{StackHF, "bloom", "", true},
		{StackHF, "falcon", "4.33.0", false},
		{StackHF, "chatglm", "4.30.0", false}, // its remote code calls SDPA
		{StackAuto, "opt", "4.45.2", true},
		{StackDeepSpeed, "gpt2", "4.41.2", true},
		{StackTRL, "bert", "0.21", false},      // TRL's release says nothing of transformers'
		{StackAxolotl, "llama", "4.35", false}, // its configs ask for flash attention
		{StackTorchtune, "bert", "0.4", false},
	} {
		p := WithDefaults(Plan{Model: Model{Family: c.family, Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: c.stack, StackVersion: c.version})
		if got := p.Attention == AttentionEager; got != c.eager {
			t.Errorf("%s %s %q: attention %s, want eager=%v", c.stack, c.family, c.version, p.Attention, c.eager)
		}
	}
}

// Ollama's defaults by release: flash attention off before v0.12.4, on
// for its allow-list until v0.13.4, auto after; num_ctx 2048, then 4096,
// then by the GPUs' memory from v0.15.5.
func TestOllamaDefaults(t *testing.T) {
	for _, c := range []struct {
		family, version string
		eager           bool
	}{
		{"llama", "0.12.3", true}, {"qwen3", "0.12.4", false}, {"llama", "0.12.4", true},
		{"gemma3", "0.12.5", true}, {"gemma3", "0.12.6", false}, {"llama", "0.13.4", false}, {"llama", "", false},
	} {
		p := Plan{Model: Model{Family: c.family}, Stack: StackOllama, StackVersion: c.version}
		if got := ollamaEager(p); got != c.eager {
			t.Errorf("ollama %s %s: eager %v, want %v", c.version, c.family, got, c.eager)
		}
	}
	if ollamaEager(Plan{Stack: StackLlamaCpp, StackVersion: "0.1"}) {
		t.Error("llama.cpp itself takes the attention it is given")
	}
	for _, c := range []struct {
		version     string
		gib         int64
		maxPos, ctx int
	}{
		{"0.6.6", 24, 0, 2048}, {"0.10.0", 24, 0, 4096}, {"", 16, 0, 4096}, {"", 24, 0, 32768},
		{"", 48, 0, 262144}, {"", 48, 131072, 131072},
	} {
		p := Plan{Stack: StackOllama, StackVersion: c.version, DeviceBytes: c.gib * GiB, Devices: 1}
		if got := OllamaContext(p, c.maxPos); got != c.ctx {
			t.Errorf("ollama %q on %d GiB (max %d): num_ctx %d, want %d", c.version, c.gib, c.maxPos, got, c.ctx)
		}
	}
}

func TestReleaseBelow(t *testing.T) {
	for _, c := range []struct {
		v, want string
		below   bool
	}{
		{"0.2.1", "0.2.2", true}, {"0.2.2", "0.2.2", false}, {"v0.4.7.post1", "0.4.7", false}, {"0.4.6.post5", "0.4.7", true},
		{"3.3.4", "3.0.0", false}, {"2.4", "3.0.0", true}, {"", "1.0", false}, {"main", "1.0", false}, {"4.41.0.dev0", "4.41", false},
	} {
		if got := releaseBelow(c.v, c.want); got != c.below {
			t.Errorf("releaseBelow(%q, %q) = %v, want %v", c.v, c.want, got, c.below)
		}
	}
}

// Eager attention keeps, per score, transformers' fp32 softmax output and
// its cast for the product with v; attention dropout in training keeps
// its one-byte mask and its output instead of the cast; a plain PyTorch
// loop's softmax stays in the compute dtype.
func TestEagerScoreBytes(t *testing.T) {
	llm := &Arch{Layers: 2, Hidden: 128, Heads: 2, HeadDim: 64, FFN: 512, Vocab: 1000}
	bert := *llm
	bert.AttnDropout = 0.1
	for _, c := range []struct {
		name  string
		arch  *Arch
		stack Stack
		prec  capability.Precision
		mode  Mode
		want  float64
	}{
		{"bf16 LLM under transformers", llm, StackHF, capability.BF16, Training, 4 + 2},
		{"fp32 LLM under transformers", llm, StackHF, capability.FP32, Training, 4},
		{"fp32 BERT with dropout", &bert, StackHF, capability.FP32, Training, 4 + 1 + 4},
		{"bf16 BERT with dropout", &bert, StackHF, capability.BF16, Training, 4 + 1 + 2},
		{"bf16 plain PyTorch with dropout", &bert, StackPyTorch, capability.BF16, Training, 2 + 1 + 2},
		{"bf16 plain PyTorch, no dropout", llm, StackPyTorch, capability.BF16, Training, 2},
	} {
		s := resolve(withDefaults(Plan{Model: Model{Params: 1e6, Arch: c.arch}, Mode: c.mode, Precision: c.prec, Stack: c.stack, Attention: AttentionEager}))
		if got := eagerScoreBytes(s, c.arch); got != c.want {
			t.Errorf("%s: %g bytes per score, want %g", c.name, got, c.want)
		}
	}
}

// FSDP keeps its root unit (embeddings and head) gathered from the forward
// to the backward beside two blocks in flight; DeepSpeed ZeRO-3 releases
// every parameter after use.
func TestFSDPRootUnitStaysGathered(t *testing.T) {
	arch := &Arch{Layers: 4, KVLayers: 4, Hidden: 256, Heads: 4, KVHeads: 4, HeadDim: 64, FFN: 1024, Vocab: 10000, Gated: true}
	m := Model{Name: "m", Params: 20_000_000, HeadParams: 2_560_000, Arch: arch}
	outside := float64(arch.Vocab*arch.Hidden) + float64(m.HeadParams)
	block := (float64(m.Params) - outside) / 4
	for _, c := range []struct {
		stack Stack
		want  int64
	}{
		{StackFSDP, sat(4*block + 2*outside*(1-1.0/4))},
		{StackDeepSpeed, sat(4 * block)},
	} {
		s := resolve(withDefaults(Plan{Model: m, Mode: Training, Precision: capability.BF16, Stack: c.stack, Sharding: ShardZeRO3, Devices: 4}))
		if got := gatherBuffers(s, m); got != c.want {
			t.Errorf("%s: gathered %d bytes, want %d", c.stack, got, c.want)
		}
	}
}

// transformers v5 loads checkpoints in their own dtype, so the Trainer
// trains 16-bit weights without an fp32 master copy; before v5, and when
// the release is not stated, the plan keeps autocast over fp32 weights.
func TestTransformersV5TrainsPure16Bit(t *testing.T) {
	for _, c := range []struct {
		version string
		shard   Sharding
		want    MixedPrecision
	}{
		{"5.2.0", ShardNone, MixedPure},
		{"4.57.1", ShardNone, MixedAMP},
		{"", ShardNone, MixedAMP},
		{"5.2.0", ShardZeRO3, MixedAMP}, // DeepSpeed's fp32 partitions
	} {
		p := WithDefaults(Plan{Model: Model{Family: "llama", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: StackHF, StackVersion: c.version, Sharding: c.shard, Devices: 4})
		if p.Mixed != c.want {
			t.Errorf("transformers %q, %s: %s, want %s", c.version, c.shard, p.Mixed, c.want)
		}
	}
}

// axolotl loads the model in bfloat16 when bf16 is on (normalize_config's
// cfg.torch_dtype, passed to from_pretrained), so its full fine-tunes
// train 16-bit weights with no fp32 master copy; under DeepSpeed ZeRO the
// optimizer keeps its own fp32 partitions.
func TestAxolotlTrainsPure16Bit(t *testing.T) {
	for _, c := range []struct {
		shard   Sharding
		devices int
		want    MixedPrecision
	}{
		{ShardNone, 1, MixedPure},
		{ShardNone, 4, MixedPure},
		{ShardZeRO3, 1, MixedPure}, // no DeepSpeed partitions on one device
		{ShardZeRO2, 4, MixedAMP},
		{ShardZeRO3, 4, MixedAMP},
	} {
		p := WithDefaults(Plan{Model: Model{Family: "llama", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: StackAxolotl, Sharding: c.shard, Devices: c.devices})
		if p.Mixed != c.want {
			t.Errorf("%s over %d: %s, want %s", c.shard, c.devices, p.Mixed, c.want)
		}
	}
	// Its fsdp_config shards with PyTorch FSDP, which keeps the bf16 it loaded.
	fsdp := WithDefaults(Plan{Model: Model{Family: "llama", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: StackAxolotl, Sharding: ShardZeRO3, Devices: 4, FSDP: true})
	if fsdp.Mixed != MixedPure {
		t.Errorf("FSDP over 4: %s, want %s", fsdp.Mixed, MixedPure)
	}
	b, err := Estimate(Plan{Model: Model{Family: "llama", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: StackAxolotl})
	if err != nil {
		t.Fatal(err)
	}
	if b.WeightsBytes != 2e9 || b.GradientsBytes != 2e9 || b.OptimizerBytes != 4e9 {
		t.Errorf("weights %d, gradients %d, optimizer %d; want 16-bit weights, gradients and Adam moments", b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes)
	}
}

// ms-swift loads the model in its config's dtype and trains it there: no
// fp32 master copy but under DeepSpeed ZeRO or accelerate's FSDP; gradient
// checkpointing on; LoRA on every Linear from 3.0, on the attention's
// projections before (read from transformers' release, 4.48 and later
// being 3.0's time).
func TestMSSwiftDefaults(t *testing.T) {
	for _, c := range []struct {
		shard   Sharding
		devices int
		fsdp    bool
		want    MixedPrecision
	}{
		{ShardNone, 1, false, MixedPure},
		{ShardNone, 4, false, MixedPure},
		{ShardZeRO2, 4, false, MixedAMP},
		{ShardZeRO3, 4, false, MixedAMP},
		{ShardZeRO3, 4, true, MixedAMP}, // accelerate upcasts under FSDP; only axolotl's keeps 16 bits
	} {
		p := WithDefaults(Plan{Model: Model{Family: "qwen2", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: StackMSSwift, Sharding: c.shard, Devices: c.devices, FSDP: c.fsdp})
		if p.Mixed != c.want {
			t.Errorf("%s over %d (fsdp %v): %s, want %s", c.shard, c.devices, c.fsdp, p.Mixed, c.want)
		}
		if p.Recompute != RecomputeFull {
			t.Errorf("recompute %s, want full (gradient_checkpointing True)", p.Recompute)
		}
	}
	for _, c := range []struct {
		version string
		want    LoRATargets
	}{
		{"", LoRAAllLinear},
		{"4.57.1", LoRAAllLinear},
		{"4.48.0", LoRAAllLinear},
		{"4.47.1", LoRAQKVO}, // ms-swift 2.x: the model type's DEFAULT (q, k, v)
		{"4.38.2", LoRAQKVO},
	} {
		p := WithDefaults(Plan{Model: Model{Family: "qwen2", Params: 1e9}, Mode: LoRA, Precision: capability.BF16, Stack: StackMSSwift, StackVersion: c.version})
		if p.LoRATargets != c.want {
			t.Errorf("transformers %q: targets %s, want %s", c.version, p.LoRATargets, c.want)
		}
	}
	if st, ok := ParseStack("swift"); !ok || st != StackMSSwift {
		t.Errorf("ParseStack(swift) = %s, %v", st, ok)
	}
	if st, ok := ParseStack("ms-swift-megatron"); !ok || st != StackMegatron {
		t.Errorf("ParseStack(ms-swift-megatron) = %s, %v", st, ok)
	}
}

// NeMo Automodel trains the checkpoint's dtype under FSDP2: 16-bit weights,
// gradients and Adam states sharded, with no fp32 master, whatever the
// sharding; its LoRA adapters take the base weight's dtype.
func TestAutomodelTrainsCheckpointDtype(t *testing.T) {
	for _, c := range []struct {
		shard     Sharding
		devices   int
		recompute Recompute
	}{{ShardNone, 1, RecomputeNone}, {ShardZeRO2, 8, RecomputeNone}, {ShardZeRO3, 8, RecomputeFull}} { // FULL_SHARD: the sharded recipes' checkpointing (ShardedRecipe)
		p := WithDefaults(Plan{Model: Model{Family: "llama", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: StackAutomodel, Sharding: c.shard, Devices: c.devices})
		if p.Mixed != MixedPure || p.Recompute != c.recompute || p.Attention != AttentionFlash {
			t.Errorf("%s over %d: mixed %s, recompute %s, attention %s; want pure, %s, flash", c.shard, c.devices, p.Mixed, p.Recompute, p.Attention, c.recompute)
		}
	}
	b, err := Estimate(Plan{Model: Model{Family: "llama", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: StackAutomodel, Sharding: ShardZeRO3, Devices: 8})
	if err != nil {
		t.Fatal(err)
	}
	if b.GradientsBytes != 2e9/8 || b.OptimizerBytes != 4e9/8 {
		t.Errorf("gradients %d, optimizer %d; want 16-bit gradients and Adam moments sharded 8 ways", b.GradientsBytes, b.OptimizerBytes)
	}
	if !StackAutomodel.ShardsLikeFSDP() {
		t.Error("NeMo Automodel shards with FSDP2")
	}
	for _, name := range []string{"automodel", "nemo-automodel", "NeMo_Automodel"} {
		if st, ok := ParseStack(name); !ok || st != StackAutomodel {
			t.Errorf("ParseStack(%s) = %s, %v", name, st, ok)
		}
	}
	for _, name := range []string{"olmo-core", "lingua", "fms-fsdp"} {
		if st, ok := ParseStack(name); !ok || st != StackFSDP {
			t.Errorf("ParseStack(%s) = %s, %v; want fsdp", name, st, ok)
		}
	}
}

// llm-foundry shards FSDP over fp32 master weights, checkpoints, and MPT's
// fused cross-entropy keeps the 16-bit logits and their 16-bit gradient.
func TestLLMFoundryDefaults(t *testing.T) {
	p := WithDefaults(Plan{Model: Model{Family: "mpt", Params: 7e9}, Mode: Training, Precision: capability.BF16, Stack: StackLLMFoundry, Sharding: ShardZeRO3, Devices: 8})
	if p.Mixed != MixedAMP || p.Recompute != RecomputeFull || p.Attention != AttentionFlash || p.Loss != LossChunked {
		t.Errorf("mixed %s, recompute %s, attention %s, loss %s; want amp, full, flash, chunked (4 B a logit)", p.Mixed, p.Recompute, p.Attention, p.Loss)
	}
	if !StackLLMFoundry.ShardsLikeFSDP() {
		t.Error("llm-foundry shards with FSDP")
	}
	if st, ok := ParseStack("llmfoundry"); !ok || st != StackLLMFoundry {
		t.Errorf("ParseStack(llmfoundry) = %s, %v", st, ok)
	}
	arch := &Arch{Layers: 2, KVLayers: 2, Hidden: 64, Heads: 1, Vocab: 1000}
	s := resolve(WithDefaults(Plan{Model: Model{Family: "mpt", Params: 1e6}, Mode: Training, Precision: capability.BF16, Stack: StackLLMFoundry}))
	if got := lossBuffers(s, arch, 10); got != 4*1000*10 {
		t.Errorf("loss over 10 tokens of a 1000-word vocabulary: %.0f bytes, want 40000 (4 B a logit)", got)
	}
}

// xtuner (v0.1) trains through DeepSpeed as deepspeed does, with
// activation checkpointing on and flash attention.
func TestXTunerDefaults(t *testing.T) {
	p := WithDefaults(Plan{Model: Model{Family: "llama", Params: 7e9}, Mode: Training, Precision: capability.BF16, Stack: StackXTuner, Sharding: ShardZeRO2, Devices: 8})
	if p.Mixed != MixedAMP || p.Recompute != RecomputeFull || p.Attention != AttentionFlash {
		t.Errorf("mixed %s, recompute %s, attention %s; want amp, full, flash", p.Mixed, p.Recompute, p.Attention)
	}
	if !ProfileOf(StackXTuner).DeepSpeed || !ProfileOf(StackDeepSpeed).DeepSpeed || ProfileOf(StackHF).DeepSpeed {
		t.Error("xtuner and deepspeed run DeepSpeed's engine; hf only under --zero-stage")
	}
	// One device: DeepSpeed's fp32 master partitions and fused Adam, as deepspeed.
	for _, st := range []Stack{StackDeepSpeed, StackXTuner} {
		b, err := Estimate(Plan{Model: Model{Family: "llama", Params: 1e9}, Mode: Training, Precision: capability.BF16, Stack: st, Recompute: RecomputeNone})
		if err != nil {
			t.Fatal(err)
		}
		if b.WeightsBytes+b.GradientsBytes+b.OptimizerBytes != 16e9 {
			t.Errorf("%s: states %d, want 16 bytes a parameter", st, b.WeightsBytes+b.GradientsBytes+b.OptimizerBytes)
		}
	}
}

// LoRA on every Linear of a mixture of experts adapts each routed expert's
// projections where transformers keeps them as nn.Linear modules (before
// v5), never fused experts (v5, gpt-oss, Llama 4), nor under a stack with
// its own adapters.
func TestLoRAOnLinearExperts(t *testing.T) {
	// Mixtral's shape: 32 layers of 4096, 8 experts of 14336, top-2.
	a := &Arch{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 2 * 14336, ExpertFFN: 14336, Vocab: 32000, Gated: true}
	expert := int64(32 * 8 * 3 * 4096 * 14336)
	m := Model{Family: "mixtral", Params: 46_702_792_704, ActiveParams: 46_702_792_704 - expert*6/8, Experts: 8, ExpertsPerToken: 2, Arch: a}
	want := 16.0 * (4096 + 14336) * 32 * 8 * 3
	if got := expertLoRAParams(m, 16); math.Abs(got-want) > want*1e-6 {
		t.Errorf("expert adapters %.0f, want %.0f", got, want)
	}
	for _, c := range []struct {
		stack   Stack
		version string
		family  string
		want    bool
	}{
		{StackHF, "4.44.2", "mixtral", true},
		{StackHF, "", "mixtral", true},
		{StackLlamaFactory, "4.57.1", "qwen3_moe", true},
		{StackHF, "5.1.0", "mixtral", false},
		{StackHF, "4.57.1", "gpt_oss", false},
		{StackHF, "4.53.0", "llama4_text", false},
		{StackAxolotl, "4.53.0", "llama4_text", true}, // its linearized Llama 4 checkpoints
		{StackUnsloth, "2025.11.1", "qwen3_moe", false},
	} {
		mm := m
		mm.Family = c.family
		if got := linearExperts(Plan{Model: mm, Stack: c.stack, StackVersion: c.version}); got != c.want {
			t.Errorf("%s %q %s: linear experts %v, want %v", c.stack, c.version, c.family, got, c.want)
		}
	}
	b := func(targets LoRATargets) Breakdown {
		out, err := Estimate(Plan{Model: m, Mode: LoRA, Precision: capability.BF16, Stack: StackHF, StackVersion: "4.44.2", LoRATargets: targets, LoRARank: 16, BatchSize: 1, SeqLen: 512})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	all, qkvo := b(LoRAAllLinear), b(LoRAQKVO)
	if extra := all.GradientsBytes - qkvo.GradientsBytes; float64(extra) < 4*want {
		t.Errorf("all-linear adds %d bytes of adapter gradients over qkvo, want at least the experts' %.0f (fp32)", extra, 4*want)
	}
}

// llama.cpp ran without flash attention unless -fa was given before build
// b6327; since, flash_attn_type defaults to auto.
func TestLlamaCppFlashAttentionByBuild(t *testing.T) {
	for _, c := range []struct {
		stack   Stack
		version string
		eager   bool
	}{
		{StackLlamaCpp, "b5000", true}, {StackLlamaCpp, "6326", true}, {StackLlamaCpp, "b6327", false},
		{StackLlamaCpp, "", false}, {StackLlamaCpp, "1.80", false}, {StackVLLM, "b5000", false},
	} {
		if got := llamaCppEager(Plan{Stack: c.stack, StackVersion: c.version}); got != c.eager {
			t.Errorf("%s %q: eager %v, want %v", c.stack, c.version, got, c.eager)
		}
	}
}

// Ollama served 4 requests at once by default from v0.2.0, 2 from v0.6.7
// and 1 from v0.10.0 (when their KV caches fit).
func TestOllamaParallelByRelease(t *testing.T) {
	for _, c := range []struct {
		version string
		want    int
	}{{"0.1.48", 1}, {"0.2.0", 4}, {"0.6.6", 4}, {"0.6.7", 2}, {"0.9.6", 2}, {"0.10.0", 1}, {"", 1}} {
		if got := OllamaParallel(Plan{Stack: StackOllama, Mode: Inference, StackVersion: c.version}); got != c.want {
			t.Errorf("ollama %q: %d slots, want %d", c.version, got, c.want)
		}
	}
	if got := OllamaParallel(Plan{Stack: StackLlamaCpp, Mode: Inference, StackVersion: "0.5.0"}); got != 1 {
		t.Errorf("llama.cpp: %d slots, want 1", got)
	}
	// mllama, Qwen3-VL and the hybrid recurrent models get one slot
	// whatever the release's default (server/sched.go).
	if got := OllamaParallel(Plan{Stack: StackOllama, Mode: Inference, StackVersion: "0.5.0", Model: Model{Family: "mllama"}}); got != 1 {
		t.Errorf("ollama 0.5.0 mllama: %d slots, want 1", got)
	}
}

// Ollama's scheduler serves these architectures one request at a time,
// and only Ollama does.
func TestOllamaOneSlotArchitectures(t *testing.T) {
	for _, c := range []struct {
		stack  Stack
		family string
		want   bool
	}{
		{StackOllama, "qwen3_next", true}, {StackOllama, "qwen3_5", true}, {StackOllama, "qwen3_5_moe", true},
		{StackOllama, "qwen3_vl", true}, {StackOllama, "mllama", true}, {StackOllama, "lfm2", true}, {StackOllama, "nemotron_h", true},
		{StackOllama, "qwen3", false}, {StackOllama, "llama", false}, {StackLlamaCpp, "qwen3_next", false}, {StackVLLM, "qwen3_5", false},
	} {
		if got := OllamaOneSlot(Plan{Stack: c.stack, Model: Model{Family: c.family}}); got != c.want {
			t.Errorf("%s %s: one slot %v, want %v", c.stack, c.family, got, c.want)
		}
	}
}

// On unified memory (Apple silicon, MI300A) the host's memory is the
// device's: the ladder never offloads to it, and says why.
func TestLadderDoesNotOffloadOnUnifiedMemory(t *testing.T) {
	m := Model{Name: "m", Params: 8_000_000_000, Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true}}
	p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, SeqLen: 2048, Backend: backend.MPS}
	for _, unified := range []bool{false, true} {
		d := Device{Name: "apple", Backend: backend.MPS, BudgetBytes: 10 * GiB, Available: 1, Unified: unified,
			Support: capability.Evaluate(capability.Facts{Backend: backend.MPS, OSVersion: "15.0", Generation: "apple"})}
		tr, err := Ladder(p, d, LadderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		offloaded := false
		for _, s := range tr.Steps {
			if s.Action == "offload to CPU" {
				offloaded = true
			}
		}
		said := slices.ContainsFunc(tr.Skipped, func(s string) bool { return strings.Contains(s, "unified memory") })
		if offloaded == unified || said != unified {
			t.Errorf("unified %v: offload step %v, skip reason given %v", unified, offloaded, said)
		}
	}
}

// On a device smaller than SGLang's reserve the engine cannot start: the
// plan does not fit and names a device that holds weights, cache and the
// reserve, never a negative share.
func TestSGLangOnATinyDevice(t *testing.T) {
	tiny := Model{Name: "tiny", Params: 500_000_000,
		Arch: &Arch{Layers: 24, KVLayers: 24, Hidden: 896, Heads: 14, KVHeads: 2, HeadDim: 64, FFN: 4864, Vocab: 151936, Gated: true}}
	p := WithDefaults(Plan{Model: tiny, Mode: Inference, Precision: capability.BF16, Stack: StackSGLang, SeqLen: 4096, DeviceBytes: 2 * GiB, Backend: "cuda"})
	if p.Prealloc < 0 {
		t.Fatalf("share %g", p.Prealloc)
	}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if b.TotalBytes <= 2*GiB || b.TotalBytes > 8*GiB {
		t.Errorf("total %.2f GiB, want more than the 2 GiB device and a sane device size", float64(b.TotalBytes)/float64(GiB))
	}
}

// Releases come from flags, probes and corpora: any text compares without
// panicking, and a release is never below itself.
func FuzzReleaseBelow(f *testing.F) {
	for _, seed := range []string{"4.44.2", "v0.4.7.post1", "0.10.0rc1", "", "b6327", "..", "1.2.3.4.5", "007"} {
		f.Add(seed, "0.2.2")
	}
	f.Fuzz(func(t *testing.T, v, want string) {
		_ = releaseBelow(v, want)
		if releaseBelow(v, v) {
			t.Errorf("%q is below itself", v)
		}
	})
}

// vLLM's start-up profile: the larger of the forward of its token budget
// and the dummy sampler run over max_num_seqs, both by device and release
// (vllmBatchDefaults). Llama-3.1-8B's shape on an H100 under 0.19 is the
// llm-d-planner log's "1.89 GiB for peak activation" to within 4%.
func TestVLLMProfilePeak(t *testing.T) {
	llama := Model{Name: "llama-3.1-8b", Params: 8_030_261_248,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true}}
	for _, c := range []struct {
		name, device, version string
		mem                   int64
		seq                   int
		tokens, seqs          int
	}{
		{"h100 0.19", "NVIDIA H100 80GB HBM3", "0.19.0", 79 * GiB, 8192, 8192, 1024},
		{"h100 0.8", "NVIDIA H100 80GB HBM3", "0.8.5", 79 * GiB, 8192, 8192, 256},
		{"a100 80GB keeps the small defaults", "NVIDIA A100-SXM4-80GB", "0.19.0", 79 * GiB, 8192, 2048, 256},
		{"rtx 3090", "NVIDIA GeForce RTX 3090", "", 23 * GiB, 8192, 2048, 256},
		{"v0 forwards max_model_len", "NVIDIA GeForce RTX 3090", "0.6.4", 23 * GiB, 29000, 29000, 256},
		{"v0 chunks past 32k", "NVIDIA GeForce RTX 3090", "0.6.4", 23 * GiB, 65536, 2048, 256},
	} {
		p := Plan{Model: llama, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, StackVersion: c.version,
			SeqLen: c.seq, DeviceBytes: c.mem, DeviceName: c.device, Backend: "cuda"}
		tokens, seqs := vllmBatchDefaults(p)
		if tokens != c.tokens || seqs != c.seqs {
			t.Errorf("%s: defaults %d tokens, %d sequences; want %d, %d", c.name, tokens, seqs, c.tokens, c.seqs)
		}
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		forward := float64(c.tokens) * (3*14336 + 4*4096) * 2
		sampler := 16 * float64(c.seqs) * 128256
		if want := max(forward, sampler); math.Abs(float64(b.ActivationsBytes)-want) > float64(MiB) {
			t.Errorf("%s: activations %.2f GiB, want %.2f GiB", c.name, float64(b.ActivationsBytes)/float64(GiB), want/float64(GiB))
		}
	}
}

// An encoder–decoder vision model's profile runs the vision encoder over
// one largest image per max_num_seqs sequence: 256 images at vLLM's
// default, 16 at --max-num-seqs 16, whole on each of 4 tensor-parallel
// ranks (vllm-project/vllm#12126's log: 36.63 GiB of activation peak at
// 128 sequences for Llama 3.2 11B Vision; devctl plans 37.34).
func TestVLLMProfilesAnImagePerSequence(t *testing.T) {
	const perImage = 313_264_128
	m := Model{Name: "mllama", Params: 10_670_220_835, VisionParams: 895_028_755,
		Arch: &Arch{Layers: 40, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true, ImageProfileBytes: perImage}}
	for _, c := range []struct {
		seqs, devices int
	}{{0, 1}, {16, 1}, {16, 4}, {128, 1}} {
		p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, StackVersion: "0.6.2",
			SeqLen: 4096, MaxNumSeqs: c.seqs, DeviceBytes: 79 * GiB, DeviceName: "NVIDIA A100-SXM4-80GB", Backend: "cuda", Devices: c.devices}
		if c.devices > 1 {
			p.Sharding, p.TensorParallel = ShardTP, c.devices
		}
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		seqs := c.seqs
		if seqs == 0 {
			seqs = 256
		}
		if want := int64(seqs) * perImage; b.ActivationsBytes != want {
			t.Errorf("%d sequences on %d devices: activations %.2f GiB, want %.2f", seqs, c.devices, float64(b.ActivationsBytes)/float64(GiB), float64(want)/float64(GiB))
		}
		if !slices.ContainsFunc(b.Notes, func(n string) bool { return strings.Contains(n, "lower --max-num-seqs") }) {
			t.Errorf("%d sequences: no note on the image profile: %q", seqs, b.Notes)
		}
	}
}

// The ladder's first change for such a model on an 80 GB card is fewer
// sequences: 256 → 128 fits (vLLM's advice is 16; halving stops at the
// first that fits).
func TestLadderLowersMaxNumSeqsForAnImageProfile(t *testing.T) {
	m := Model{Name: "mllama", Params: 10_670_220_835, VisionParams: 895_028_755,
		Arch: &Arch{Layers: 40, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true, ImageProfileBytes: 313_264_128}}
	p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, StackVersion: "0.6.2",
		SeqLen: 4096, DeviceBytes: 79 * GiB, DeviceName: "NVIDIA A100-SXM4-80GB", Backend: "cuda"}
	tr, err := Ladder(p, Device{Name: "a100", Backend: "cuda", BudgetBytes: 79 * GiB, Available: 1}, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Fits || len(tr.Steps) != 1 || tr.Steps[0].Action != "fewer sequences" || tr.Final.MaxNumSeqs != 128 {
		t.Errorf("ladder %+v, want one step to --max-num-seqs 128", tr.Steps)
	}
	p.Model.Arch = &Arch{Layers: 40, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true}
	p.Model.Params = 70_000_000_000
	tr, err = Ladder(p, Device{Name: "a100", Backend: "cuda", BudgetBytes: 79 * GiB, Available: 1}, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range tr.Steps {
		if st.Action == "fewer sequences" {
			t.Errorf("a text model's ladder lowers --max-num-seqs: %+v", tr.Steps)
		}
	}
}

// TGI captures CUDA graphs by default from v2.0.0 (#1703); before, none:
// no graph buffers beside its KV cache. lmdeploy's TurboMind never does.
func TestServingGraphBuffersByRelease(t *testing.T) {
	m := Model{Name: "llama-2-7b", Params: 6_738_415_616,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 11008, Vocab: 32000, Gated: true}}
	for _, c := range []struct {
		stack   Stack
		version string
		want    int64
	}{
		{StackTGI, "1.4", 0}, {StackTGI, "1.1.0", 0}, {StackTGI, "2.0.0", GiB}, {StackTGI, "", GiB}, {StackTGI, "3.3.4", GiB},
		{StackVLLM, "0.6.2", GiB}, {StackLMDeploy, "0.6.0", 0},
	} {
		b, err := Estimate(Plan{Model: m, Mode: Inference, Precision: capability.FP16, Stack: c.stack, StackVersion: c.version,
			SeqLen: 4096, DeviceBytes: 22 * GiB, DeviceName: "NVIDIA A10G", Backend: "cuda"})
		if err != nil {
			t.Fatal(err)
		}
		if b.BuffersBytes != c.want {
			t.Errorf("%s %q: graph buffers %d, want %d", c.stack, c.version, b.BuffersBytes, c.want)
		}
	}
}

// AMP's autocast copies are freed by the backward: the step's peak of live
// tensors holds fp32 weights, gradients, Adam and the foreach temporary,
// while reserved memory keeps the copies' segments.
func TestAutocastCopiesLeaveTheStepPeak(t *testing.T) {
	m := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	p := Plan{Model: m, Mode: Training, Precision: capability.BF16, Mixed: MixedAMP, Stack: StackPyTorch,
		BatchSize: 1, SeqLen: 16, Optimizer: AdamW, Recompute: RecomputeNone, Backend: "cuda"}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	P := float64(m.Params)
	if want := 6 * P; math.Abs(float64(b.WeightsBytes)-want) > float64(MiB) {
		t.Errorf("weights %.2f GiB, want fp32 plus 16-bit copies %.2f GiB", float64(b.WeightsBytes)/float64(GiB), want/float64(GiB))
	}
	step := 4*P + 4*P + 8*P + 4*P // weights, gradients, Adam, foreach temporary
	if math.Abs(float64(b.PeakAllocatedBytes)-step) > float64(MiB) {
		t.Errorf("peak allocated %.2f GiB, want the step's %.2f GiB", float64(b.PeakAllocatedBytes)/float64(GiB), step/float64(GiB))
	}
	if b.ReservedBytes < b.PeakAllocatedBytes+int64(2*P) {
		t.Errorf("reserved %.2f GiB does not keep the copies' 2 GB beside the step's %.2f GiB", float64(b.ReservedBytes)/float64(GiB), step/float64(GiB))
	}
}

// ggml servers (llama.cpp, Ollama's runner) allocate their buffers at their
// sizes and load no PyTorch modules; Ollama also keeps 457 MiB of each GPU
// free when it places layers.
func TestGGMLStacks(t *testing.T) {
	m := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	for _, st := range []Stack{StackLlamaCpp, StackOllama} {
		p := Plan{Model: m, Mode: Inference, Precision: capability.Int4, Quant: QuantGGUF, Stack: st, SeqLen: 4096, Backend: "cuda"}
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		if b.ReservedBytes != b.PeakAllocatedBytes {
			t.Errorf("%s: reserved %d, want the allocated %d (no caching allocator)", st, b.ReservedBytes, b.PeakAllocatedBytes)
		}
		if b.OverheadBytes != bareCUDAContext {
			t.Errorf("%s: runtime %d, want the bare CUDA context %d", st, b.OverheadBytes, bareCUDAContext)
		}
		wantReserve := int64(0)
		if st == StackOllama {
			wantReserve = 457 * MiB
		}
		if b.SchedulerReserveBytes != wantReserve {
			t.Errorf("%s: scheduler reserve %d, want %d", st, b.SchedulerReserveBytes, wantReserve)
		}
		d := Device{Name: "gpu", Backend: "cuda", BudgetBytes: b.TotalBytes + 100*MiB, Available: 1}
		if got, want := Fits(b, d), st != StackOllama; got != want {
			t.Errorf("%s: fits %v with 100 MiB to spare, want %v", st, got, want)
		}
	}
}

// --max-num-seqs and --max-num-batched-tokens replace the engine's
// defaults in its start-up profile; SGLang's default share reserves room
// for the prefill chunk the user gives.
func TestServingProfileTakesTheUsersSettings(t *testing.T) {
	m := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, SeqLen: 4096, DeviceBytes: 79 * GiB,
		DeviceName: "NVIDIA H100 80GB HBM3", Backend: "cuda"}
	if tokens, seqs, ok := ServingProfile(p); !ok || tokens != 8192 || seqs != 1024 {
		t.Errorf("vllm defaults: %d tokens, %d seqs, %v; want 8192, 1024", tokens, seqs, ok)
	}
	p.MaxNumSeqs, p.PrefillTokens = 16, 4096
	if tokens, seqs, _ := ServingProfile(p); tokens != 4096 || seqs != 16 {
		t.Errorf("vllm given: %d tokens, %d seqs; want 4096, 16", tokens, seqs)
	}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := max(4096*(3*8192+4*2048)*2, 16*16*32000.0); math.Abs(float64(b.ActivationsBytes)-want) > float64(MiB) {
		t.Errorf("vllm activations %d, want %.0f", b.ActivationsBytes, want)
	}
	sg := Plan{Stack: StackSGLang, DeviceBytes: 24 * GiB}
	def, _ := sglangDefaults(sg)
	sg.PrefillTokens = 16384
	big, chunk := sglangDefaults(sg)
	if chunk != 16384 || big >= def {
		t.Errorf("sglang: chunk %d, share %.3f (default %.3f); a bigger chunk should reserve more", chunk, big, def)
	}
	if _, _, ok := ServingProfile(Plan{Stack: StackOllama, Mode: Inference}); ok {
		t.Errorf("ollama has no start-up profile")
	}
}

// Engines that hold a sliding-window layer's KV cache to its window:
// transformers and mlx the window, vLLM from 0.10 the window plus its
// prefill budget, llama.cpp and Ollama plus one ubatch; SGLang and older
// releases every token.
func TestSlidingWindowKVCache(t *testing.T) {
	a := &Arch{Layers: 6, KVLayers: 6, Hidden: 1024, Heads: 8, KVHeads: 2, HeadDim: 128, FFN: 4096, Vocab: 32000, Gated: true,
		SlidingWindow: 1024, SlidingLayers: 5}
	m := Model{Name: "swa", Params: 200_000_000, Arch: a}
	perToken := 2.0 * 2 * 128 * 2 // K and V, two heads of 128, 2 bytes
	const seq = 32768
	for _, c := range []struct {
		stack   Stack
		version string
		held    float64 // tokens a sliding layer keeps
	}{
		{StackHF, "", 1024},
		{StackMLX, "", 1024},
		{StackVLLM, "0.19.0", 1024 + 2048},
		{StackVLLM, "0.9.2", seq},
		{StackLlamaCpp, "", 1024 + 512},
		{StackLlamaCpp, "b5000", seq},
		{StackOllama, "0.12.3", 1024 + 512},
		{StackSGLang, "", seq},
	} {
		p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: c.stack, StackVersion: c.version, SeqLen: seq,
			DeviceBytes: 24 * GiB, Backend: "cuda"}
		want := perToken * (1*seq + 5*c.held)
		if got := float64(kvCache(a, p, 1, seq)); math.Abs(got-want) > 1 {
			t.Errorf("%s %s: KV cache %.0f, want %.0f", c.stack, c.version, got, want)
		}
	}
}

// A forward under torch.autocast over fp32 weights keeps the fp32 weights
// and the 16-bit copy autocast caches of each weight a matmul reads (all
// but the input embedding of an untied model) until the region ends; the
// same plan without amp is the 16-bit model, and serving engines have no
// such regime.
func TestInferenceAutocastHoldsBothCopies(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000, HeadParams: 100_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 100, Heads: 2, KVHeads: 2, HeadDim: 50, FFN: 400, Vocab: 1000, Gated: true}}
	plan := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Mixed: MixedAMP, SeqLen: 16}
	b, err := Estimate(plan)
	if err != nil {
		t.Fatal(err)
	}
	if want := sat(4*1_000_000 + 2*(1_000_000-100_000)); b.WeightsBytes != want {
		t.Errorf("autocast weights %d, want %d (fp32 plus the copies of all but the input embedding)", b.WeightsBytes, want)
	}
	if got := WithDefaults(plan).Mixed; got != MixedAMP {
		t.Errorf("the plan lost its regime: %q", got)
	}
	plain := plan
	plain.Mixed = ""
	if b, _ := Estimate(plain); b.WeightsBytes != 2_000_000 {
		t.Errorf("bf16 inference: weights %d, want 2000000", b.WeightsBytes)
	}
	vllm := plan
	vllm.Stack = StackVLLM
	if got := WithDefaults(vllm).Mixed; got != "" {
		t.Errorf("vllm keeps mixed precision %q; a serving engine has no autocast regime", got)
	}
	fp32 := plan
	fp32.Precision = capability.FP32
	if got := WithDefaults(fp32).Mixed; got != "" {
		t.Errorf("fp32 inference keeps mixed precision %q", got)
	}
}

// A KV cache sized by tokens: vLLM's block override and lmdeploy's block
// count allocate exactly that many tokens, whatever the share; SGLang's
// max_total_tokens and TensorRT-LLM's max_tokens_in_paged_kv_cache only cap
// what the share gives. lmdeploy v0.1.0's benchmark of Llama-2-7B with
// cache_max_entry_count=1000 (blocks of 128 tokens) holds 128,000 tokens,
// 62.5 GiB, beside the weights: 78.34 GiB by nvidia-smi (testdata/memory).
func TestServingEngineKVCacheTokens(t *testing.T) {
	tiny := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	perToken := float64(2 * 16 * 16 * 128 * 2) // 131,072 B
	plan := func(st Stack, tokens int) Breakdown {
		t.Helper()
		b, err := Estimate(Plan{Model: tiny, Mode: Inference, Precision: capability.BF16, Stack: st, SeqLen: 4096,
			DeviceBytes: 24 * GiB, Backend: "cuda", KVCacheTokens: tokens})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, st := range []Stack{StackVLLM, StackLMDeploy} {
		b := plan(st, 10_000)
		if want := sat(10_000 * perToken); b.KVCacheBytes != want {
			t.Errorf("%s: KV cache %d, want exactly %d", st, b.KVCacheBytes, want)
		}
		if want := add(b.WeightsBytes, b.ActivationsBytes, b.BuffersBytes, b.KVCacheBytes); b.PeakAllocatedBytes != want {
			t.Errorf("%s: holds %d, want weights, profile, buffers and the counted cache: %d", st, b.PeakAllocatedBytes, want)
		}
		if b := plan(st, 1000); b.KVCacheBytes != sat(4096*perToken) {
			t.Errorf("%s: 1000 tokens cannot hold one 4096-token sequence; want the requested cache (%d), got %d", st, sat(4096*perToken), b.KVCacheBytes)
		}
	}
	// More tokens than the count holds fit no device, however large.
	if b := plan(StackVLLM, 1000); b.TotalBytes <= 24*GiB {
		t.Errorf("vllm: 4096 tokens asked of a 1000-token cache: total %d, want more than the device", b.TotalBytes)
	}
	shared := plan(StackSGLang, 0)
	if b := plan(StackSGLang, 10_000); b.KVCacheBytes != sat(10_000*perToken) {
		t.Errorf("sglang capped at 10,000 tokens: KV cache %d, want %d", b.KVCacheBytes, sat(10_000*perToken))
	}
	if b := plan(StackSGLang, 10_000_000); b.KVCacheBytes != shared.KVCacheBytes {
		t.Errorf("sglang: a cap above the share changes nothing; KV cache %d, want the share's %d", b.KVCacheBytes, shared.KVCacheBytes)
	}
}

// llama.cpp's slots (Ollama's OLLAMA_NUM_PARALLEL) share one KV cache and
// one compute graph reserved for a single ubatch: four slots of 2,048
// tokens hold the KV cache of 8,192 and the compute buffer of one slot of
// 8,192, not four.
func TestGGMLSlotsShareTheComputeBuffer(t *testing.T) {
	m := Model{Name: "m", Params: 8_000_000_000, Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128_256, Gated: true}}
	plan := func(batch, seq int) Breakdown {
		t.Helper()
		b, err := Estimate(Plan{Model: m, Mode: Inference, Stack: StackOllama, StackVersion: "0.6.0", Precision: capability.Int4, BatchSize: batch, SeqLen: seq})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	four, one := plan(4, 2048), plan(1, 8192)
	if four.KVCacheBytes != one.KVCacheBytes {
		t.Errorf("KV cache: 4 slots of 2048 hold %d, one of 8192 %d", four.KVCacheBytes, one.KVCacheBytes)
	}
	if four.ActivationsBytes != one.ActivationsBytes {
		t.Errorf("compute buffer: 4 slots of 2048 hold %d, one of 8192 %d; want one ubatch's against the shared cache", four.ActivationsBytes, one.ActivationsBytes)
	}
}

// After prepare_model_for_kbit_training the embedding is fp32, so the
// residual stream is, and bitsandbytes' Linear4bit returns its output in
// its input's dtype: 4-bit LoRA through peft keeps fp32 activations, twice
// what the same adapters over 16-bit weights keep. Stacks that skip the
// call (torchtune, sharded QLoRA) keep 16-bit ones.
func TestKbitLoRAKeepsFP32Activations(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000, HeadParams: 128_000, UnquantizedParams: 256_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	act := func(mode Mode, prec capability.Precision, stack Stack, sharding Sharding) int64 {
		b, err := Estimate(Plan{Model: m, Mode: mode, Precision: prec, Stack: stack, Sharding: sharding, Devices: 2, SeqLen: 64, Recompute: RecomputeNone})
		if err != nil {
			t.Fatal(err)
		}
		return b.ActivationsBytes
	}
	for _, stack := range []Stack{StackHF, StackTRL} {
		if q, l := act(QLoRA, capability.Int4, stack, ShardNone), act(LoRA, capability.BF16, stack, ShardNone); q != 2*l {
			t.Errorf("%s: QLoRA keeps %d activation bytes, want twice LoRA's %d", stack, q, l)
		}
		if q, l := act(QLoRA, capability.Int4, stack, ShardZeRO3), act(LoRA, capability.BF16, stack, ShardZeRO3); q != l {
			t.Errorf("%s sharded: QLoRA keeps %d activation bytes, want LoRA's %d (no fp32 cast)", stack, q, l)
		}
	}
	if q, l := act(QLoRA, capability.Int4, StackTorchtune, ShardNone), act(LoRA, capability.BF16, StackTorchtune, ShardNone); q != l {
		t.Errorf("torchtune: QLoRA keeps %d activation bytes, want LoRA's %d", q, l)
	}
}

// vLLM's V1 engine warms its sampler up after sizing the KV cache: the
// profile's dummy sampler run again (16 bytes a logit over max_num_seqs
// rows) must be free beyond its share at start-up, which decides whether a
// near-total gpu_memory_utilization starts ("CUDA out of memory occurred
// when warming up sampler"). V0, which ROCm ran until 0.9, did not.
func TestVLLMSamplerWarmup(t *testing.T) {
	m := Model{Name: "gpt-oss-like", Params: 20_000_000_000,
		Arch: &Arch{Layers: 24, KVLayers: 24, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64, FFN: 2880, Vocab: 201088, Gated: true}}
	p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackVLLM, StackVersion: "0.19.0", SeqLen: 8192,
		DeviceBytes: 79 * GiB, DeviceName: "NVIDIA H100 80GB HBM3", Backend: "cuda", Prealloc: 0.97}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := sat(16 * 1024 * 201088); b.SchedulerReserveBytes != want || b.NeededBytes() <= 79*GiB {
		t.Errorf("V1 at 0.97: reserve %d (want %d), needed %d of %d", b.SchedulerReserveBytes, want, b.NeededBytes(), 79*GiB)
	}
	p.Prealloc = 0.9
	if b, _ := Estimate(p); b.NeededBytes() > 79*GiB {
		t.Errorf("V1 at 0.9 leaves room for the warm-up: needed %d", b.NeededBytes())
	}
	for _, old := range []Plan{
		func() Plan { q := p; q.StackVersion = "0.7.3"; return q }(),
		func() Plan { q := p; q.StackVersion, q.Backend = "0.8.3", "rocm"; return q }(),
	} {
		if b, _ := Estimate(old); b.SchedulerReserveBytes != 0 {
			t.Errorf("V0 (%s on %s) warms nothing up after the cache: reserve %d", old.StackVersion, old.Backend, b.SchedulerReserveBytes)
		}
	}
}

// SGLang starts whatever its pool holds and caps each request there: a
// plan whose requested tokens exceed the pool does not fit those requests,
// and says the server still starts with the pool's tokens.
func TestSGLangCapsRequestsAtItsPool(t *testing.T) {
	m := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 8, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: StackSGLang, SeqLen: 1 << 20, DeviceBytes: 24 * GiB, Backend: "cuda"}
	b, err := Estimate(WithDefaults(p))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(b.Notes, " "), "sglang still starts with a pool of about") || b.TotalBytes <= 24*GiB {
		t.Errorf("a context beyond the pool: total %d, notes %v", b.TotalBytes, b.Notes)
	}
	p.SeqLen = 4096
	if b, _ := Estimate(WithDefaults(p)); strings.Contains(strings.Join(b.Notes, " "), "still starts") {
		t.Errorf("a context the pool holds says nothing of caps: %v", b.Notes)
	}
}

// When no length was asked for, lmdeploy and SGLang start with the context
// their KV cache holds (TurboMind truncates session_len, InternLM/lmdeploy
// #3950); vLLM refuses, and an asked-for length is planned as asked.
func TestEnginesShortenAContextNobodyAskedFor(t *testing.T) {
	m := Model{Name: "tiny", Params: 1_000_000_000,
		Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 8, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}
	for _, c := range []struct {
		stack     Stack
		fromModel bool
		fits      bool
	}{
		{StackLMDeploy, true, true}, {StackSGLang, true, true}, {StackVLLM, true, false},
		{StackLMDeploy, false, false}, {StackSGLang, false, false},
	} {
		p := Plan{Model: m, Mode: Inference, Precision: capability.BF16, Stack: c.stack, SeqLen: 1 << 20, SeqFromModel: c.fromModel, DeviceBytes: 24 * GiB, Backend: "cuda"}
		b, err := Estimate(WithDefaults(p))
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(b.Notes, " ")
		if fits := b.TotalBytes <= 24*GiB; fits != c.fits || strings.Contains(notes, "shortens its context") != c.fits {
			t.Errorf("%s, length from the model %v: total %d of %d, notes %v", c.stack, c.fromModel, b.TotalBytes, 24*GiB, b.Notes)
		}
	}
}

// ZeRO-Offload under DeepSpeed takes the gradients to the host with the
// optimizer states (two blocks' worth wait on the device); FSDP's offload
// keeps its sharded gradients, as the corpus's FSDP rows show.
func TestDeepSpeedOffloadMovesGradientsToTheHost(t *testing.T) {
	plan := func(stack Stack) Breakdown {
		b, err := Estimate(Plan{Model: llama2_7B, Mode: Training, Precision: capability.BF16, Stack: stack, BatchSize: 1, SeqLen: 1024,
			Devices: 2, Sharding: ShardZeRO2, ZeROStage: 2, Offload: OffloadCPU})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got, want := plan(StackDeepSpeed).GradientsBytes, 2*largestLayerBytes(llama2_7B, capability.BF16); got != want {
		t.Errorf("DeepSpeed ZeRO-Offload gradients %d, want two blocks' %d", got, want)
	}
	if got := plan(StackFSDP).GradientsBytes; got <= 2*largestLayerBytes(llama2_7B, capability.BF16) {
		t.Errorf("FSDP offload gradients %d, want the sharded gradients", got)
	}
}

// transformers before 4.45 keeps every prompt position's logits in
// generate(): 16-bit logits and their fp32 copy (6 B a logit in bf16), the
// fp32 logits alone in an fp32 model, whose .float() is the same tensor.
func TestLegacyGenerateLogits(t *testing.T) {
	arch := &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}
	logits := func(prec capability.Precision, version string) int64 {
		b, err := Estimate(Plan{Model: Model{Name: "m", Family: "llama", Params: 1_000_000, Arch: arch}, Mode: Inference,
			Precision: prec, Stack: StackHF, StackVersion: version, BatchSize: 4, SeqLen: 300, PromptLen: 200})
		if err != nil {
			t.Fatal(err)
		}
		return b.LogitsBytes
	}
	for _, c := range []struct {
		prec    capability.Precision
		version string
		want    int64
	}{
		{capability.BF16, "4.44.2", 4 * 200 * 1000 * 6},
		{capability.FP32, "4.44.2", 4 * 200 * 1000 * 4},
	} {
		if got := logits(c.prec, c.version); got != c.want {
			t.Errorf("%s at transformers %s: logits %d, want %d", c.prec, c.version, got, c.want)
		}
	}
	if now := logits(capability.BF16, "4.46.0"); now >= 4*200*1000*6 {
		t.Errorf("transformers 4.46: logits %d, want the last position's only", now)
	}
}

// Fused routed experts stay in 16 bits under bitsandbytes' loading where
// the release says so: transformers 5 (HF stack, stated), Unsloth 2026.3
// to 2026.6; not gpt-oss, not an unstated release, not Unsloth's own
// quantisation from 2026.6.
func TestFusedExpertsStay16UnderBitsandbytes(t *testing.T) {
	arch := &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}
	moe := Model{Name: "m", Family: "qwen3_moe", Params: 30_000_000_000, ActiveParams: 3_000_000_000, Experts: 128, ExpertsPerToken: 8, Arch: arch}
	w := func(m Model, stack Stack, version string) int64 {
		return storedWeights(m, Plan{Model: m, Mode: QLoRA, Precision: capability.Int4, Stack: stack, StackVersion: version})
	}
	quantised := w(moe, StackUnsloth, "2026.6.9")
	experts := int64(moe.ExpertParams())
	for _, c := range []struct {
		stack   Stack
		version string
	}{{StackUnsloth, "2026.4.4"}, {StackUnsloth, "2026.3.1"}} {
		if got := w(moe, c.stack, c.version); got < quantised+experts {
			t.Errorf("%s %s: %d, want the experts (%d) in 16 bits over %d", c.stack, c.version, got, experts, quantised)
		}
	}
	for _, st := range []Stack{StackHF, StackAxolotl, StackLlamaFactory} {
		if v5, v4 := w(moe, st, "5.5.0"), w(moe, st, "4.57.1"); v5 < v4+experts {
			t.Errorf("%s on transformers 5.5: %d, want the experts unquantised beside 4.57's %d", st, v5, v4)
		}
	}
	for _, v := range []string{"2026.2.1", ""} {
		if got := w(moe, StackUnsloth, v); got != quantised {
			t.Errorf("unsloth %q: %d, want the quantised %d", v, got, quantised)
		}
	}
	if got, want := w(moe, StackHF, ""), w(moe, StackHF, "4.57.1"); got != want {
		t.Errorf("transformers of unknown release: %d, want 4.57's %d", got, want)
	}
	oss := moe
	oss.Family = "gpt_oss"
	if w(oss, StackUnsloth, "2026.4.4") != w(oss, StackUnsloth, "2026.6.9") {
		t.Error("gpt-oss: its MXFP4 experts are its own path")
	}
	if fusedExpertsStay16(Plan{Model: moe, Mode: QLoRA, Precision: capability.Int4, Stack: StackHF}) {
		t.Error("transformers of unknown release: the experts were planned in 16 bits")
	}
	l4 := moe
	l4.Family = "llama4_text"
	dbrx := moe
	dbrx.Family = "dbrx"
	// The families fused in every release (fusedInEveryRelease) keep their
	// experts in 16 bits under any stated release; an unstated one stays
	// quantised (axolotl's Gemma 4 QLoRA rows state none and measure the
	// experts quantised).
	for _, m := range []Model{l4, dbrx} {
		for v, want := range map[string]bool{"4.51.3": true, "4.40.0": true, "5.2.0": true, "": false} {
			if got := fusedExpertsStay16(Plan{Model: m, Mode: QLoRA, Precision: capability.Int4, Stack: StackHF, StackVersion: v}); got != want {
				t.Errorf("%s at transformers %q: %v, want %v", m.Family, v, got, want)
			}
		}
	}
	// axolotl's Llama 4 recipes load the experts linearized, one nn.Linear
	// each, which bitsandbytes quantises whatever the release.
	for _, v := range []string{"4.51.3", "4.53.0", "5.2.0", ""} {
		if fusedExpertsStay16(Plan{Model: l4, Mode: QLoRA, Precision: capability.Int4, Stack: StackAxolotl, StackVersion: v}) {
			t.Errorf("axolotl's Llama 4 at transformers %q: experts planned in 16 bits", v)
		}
	}
}

// In eager PyTorch the head runs after the last block has freed its
// intermediates: an inference peak counts the larger of the prefill's working
// set and the logits, not both; a stack that allocates a block's whole graph
// (llama.cpp) keeps its compute buffer as it is.
func TestPrefillAndLogitsAreNotHeldTogether(t *testing.T) {
	arch := &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}
	est := func(stack Stack, version string) Breakdown {
		b, err := Estimate(Plan{Model: Model{Name: "m", Family: "llama", Params: 1_000_000, Arch: arch}, Mode: Inference,
			Precision: capability.BF16, Stack: stack, StackVersion: version, BatchSize: 4, SeqLen: 300, PromptLen: 200})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b := est(StackHF, "4.44.2")
	parts := add(b.WeightsBytes, b.KVCacheBytes, b.ActivationsBytes, b.LogitsBytes, b.BuffersBytes)
	if b.ActivationsBytes == 0 || b.LogitsBytes == 0 || b.PeakAllocatedBytes != parts-min(b.ActivationsBytes, b.LogitsBytes) {
		t.Errorf("hf: peak %d, want %d less the smaller of prefill %d and logits %d", b.PeakAllocatedBytes, parts, b.ActivationsBytes, b.LogitsBytes)
	}
	if b.OverlapBytes != -min(b.ActivationsBytes, b.LogitsBytes) {
		t.Errorf("hf: overlap %d, want -%d", b.OverlapBytes, min(b.ActivationsBytes, b.LogitsBytes))
	}
	g := est(StackLlamaCpp, "")
	if g.PeakAllocatedBytes != add(g.WeightsBytes, g.KVCacheBytes, g.ActivationsBytes, g.LogitsBytes, g.BuffersBytes) {
		t.Errorf("llama.cpp: peak %d, want every part", g.PeakAllocatedBytes)
	}
}

// transformers' Trainer defaults to fused AdamW (no step temporary) from
// 4.54 on PyTorch 2.8; an unknown release of either keeps adamw_torch's
// foreach step, and a pinned optimizer stays as pinned.
func TestTrainerDefaultsToFusedAdamW(t *testing.T) {
	m := Model{Name: "m", Params: 1_000_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	cases := []struct {
		stack         Stack
		hf, torch     string
		opt, wantOpt  Optimizer
		wantTemporary bool
	}{
		{StackHF, "4.56.0", "2.8.0", "", AdamWFused, false},
		{StackLlamaFactory, "4.55.2", "2.9.0.dev20250720+rocm6.4", "", AdamWFused, false},
		{StackHF, "4.53.3", "2.8.0", "", AdamW, true},
		{StackHF, "4.56.0", "2.7.1", "", AdamW, true},
		{StackHF, "", "2.8.0", "", AdamW, true},
		{StackHF, "4.56.0", "", "", AdamW, true},
		{StackHF, "4.56.0", "2.8.0", AdamW, AdamW, true},
		{StackTRL, "1.6", "2.8.0", "", AdamWFused, false},
		{StackTRL, "0.20.0", "2.8.0", "", AdamW, true},
	}
	for _, c := range cases {
		p := withDefaults(Plan{Model: m, Mode: Training, Precision: capability.BF16, Stack: c.stack, StackVersion: c.hf, TorchVersion: c.torch, Optimizer: c.opt, SeqLen: 64})
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		if p.Optimizer != c.wantOpt || (b.BuffersBytes > 0) != c.wantTemporary {
			t.Errorf("%s %s/torch %s, optimizer %q: got %s with %d buffer bytes; want %s, temporary %v", c.stack, c.hf, c.torch, c.opt, p.Optimizer, b.BuffersBytes, c.wantOpt, c.wantTemporary)
		}
	}
}

// DoRA (peft use_dora) trains a magnitude per output feature of each
// adapted Linear: Llama-3-8B at r=16 on q, k, v and o has 13,631,488 LoRA
// parameters and 32 × (4096 + 1024 + 1024 + 4096) = 327,680 magnitudes.
// Without checkpointing every block keeps each adapted Linear's base and
// adapter outputs (2 × 10,240 values a token) and, with lora_dropout on
// (transformers' stacks), the four weights in the compute dtype.
func TestDoRATerms(t *testing.T) {
	arch := &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128_256, Gated: true}
	llama3 := Model{Params: 8_030_261_248, HeadParams: 128_256 * 4096, Arch: arch}
	plan := Plan{Model: llama3, Mode: LoRA, Precision: capability.BF16, BatchSize: 1, SeqLen: 1024, Stack: StackHF,
		LoRARank: 16, LoRATargets: LoRAQKVO, Recompute: RecomputeNone}
	lora, err := Estimate(plan)
	if err != nil {
		t.Fatal(err)
	}
	plan.DoRA = true
	dora, err := Estimate(plan)
	if err != nil {
		t.Fatal(err)
	}
	outs, weights := doraShapes(arch, LoRAQKVO)
	if outs != 10_240 || weights != 2*4096*4096+2*4096*1024 {
		t.Fatalf("doraShapes: %g outputs, %g weight values a block", outs, weights)
	}
	adapterB := float64(lora.GradientsBytes) / 13_631_488 // the adapters' dtype
	if got, want := float64(dora.GradientsBytes-lora.GradientsBytes), 327_680*adapterB; got != want {
		t.Errorf("magnitudes' gradients: %g bytes more, want %g", got, want)
	}
	want := 32 * (2*outs*1024 + weights) * 2 // bf16 values
	if got := float64(dora.ActivationsBytes - lora.ActivationsBytes); got != want {
		t.Errorf("activations: %g bytes more, want %g", got, want)
	}
}

// lmdeploy before v0.1.0 (TurboMind 1.0) takes no share of the device: it
// allocates each sequence's session_len of KV cache as the sequence
// arrives. lmdeploy's quantization doc (v0.0.x) measured 1030 MB a
// sequence for LLaMA-7B's 2048 tokens; from v0.1.0 the cache is a share.
func TestLMDeployTurboMind1AllocatesPerSequence(t *testing.T) {
	arch := &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 11008, Vocab: 32000, Gated: true}
	m := Model{Params: 6_738_415_616, HeadParams: 32000 * 4096, Arch: arch}
	p := Plan{Model: m, Mode: Inference, Precision: capability.FP16, BatchSize: 8, SeqLen: 2048, Stack: StackLMDeploy, StackVersion: "0.0.14",
		Backend: backend.CUDA, DeviceBytes: 80 << 30}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(8 * 2048 * 32 * 2 * 4096 * 2); b.KVCacheBytes != want {
		t.Errorf("KV cache %d, want 8 sessions of 2048 tokens, %d", b.KVCacheBytes, want)
	}
	p.StackVersion = "0.1.0"
	if b, _ = Estimate(p); b.KVCacheBytes != 40<<30 {
		t.Errorf("v0.1.0: KV cache %d, want half the device", b.KVCacheBytes)
	}
}

// The recurrent state is held per sequence whatever its length: in fp32 by
// llama.cpp (Qwen3.6-27B's "RS buffer size = 149.62 MiB" for one sequence),
// in the model's dtype by vLLM; a model without recurrent layers has none.
func TestRecurrentStateBySequence(t *testing.T) {
	a := &Arch{Layers: 64, KVLayers: 16, Hidden: 5120, Heads: 24, KVHeads: 4, HeadDim: 256, StateValues: 39_223_296}
	cpp := Plan{Stack: StackLlamaCpp, Mode: Inference, Precision: capability.Int4}
	kv := attentionCache(a, cpp, 1, 262144)
	if got := kvCache(a, cpp, 1, 262144) - kv; got != 156_893_184 {
		t.Errorf("llama.cpp, one sequence: %d bytes of state, want 156,893,184 (149.62 MiB)", got)
	}
	if got := kvCache(a, cpp, 4, 1) - attentionCache(a, cpp, 4, 1); got != 4*156_893_184 {
		t.Errorf("llama.cpp, four sequences of one token: %d bytes of state, want four sequences' worth", got)
	}
	vllm := Plan{Stack: StackVLLM, Mode: Inference, Precision: capability.BF16}
	if got := kvCache(a, vllm, 1, 1024) - attentionCache(a, vllm, 1, 1024); got != 156_893_184/2 {
		t.Errorf("vllm bf16: %d bytes of state, want %d", got, 156_893_184/2)
	}
	a.StateValues = 0
	if kvCache(a, cpp, 1, 1024) != attentionCache(a, cpp, 1, 1024) {
		t.Error("no recurrent layers: the cache is the attention's alone")
	}
}

// DeepSpeed's ZeRO optimizer allocates its gradient bucket whole: 5e8
// elements at stages 1 and 2 (DeepSpeed's default), hidden_size² at stage
// 3 (the Trainer's "auto"), in the parameters' 16 bits; FSDP, Megatron
// and one device without ZeRO-3 have none.
func TestZeROBucketIsDeepSpeedsReduceBucket(t *testing.T) {
	arch := &Arch{Layers: 4, KVLayers: 4, Hidden: 256, Heads: 4, KVHeads: 4, HeadDim: 64, FFN: 1024, Vocab: 10000, Gated: true}
	m := Model{Name: "m", Params: 20_000_000, Arch: arch}
	for _, c := range []struct {
		stack    Stack
		sharding Sharding
		devices  int
		prec     capability.Precision
		want     int64
	}{
		{StackDeepSpeed, ShardZeRO2, 4, capability.BF16, 1_000_000_000},
		{StackHF, ShardZeRO1, 2, capability.FP16, 1_000_000_000},
		{StackDeepSpeed, ShardZeRO2, 4, capability.FP32, 2_000_000_000},
		{StackDeepSpeed, ShardZeRO3, 4, capability.BF16, 2 * 256 * 256},
		{StackDeepSpeed, ShardZeRO2, 1, capability.BF16, 0},
		{StackFSDP, ShardZeRO3, 4, capability.BF16, 0},
		{StackMegatron, ShardZeRO2, 4, capability.BF16, 0},
	} {
		s := resolve(withDefaults(Plan{Model: m, Mode: Training, Precision: c.prec, Stack: c.stack, Sharding: c.sharding, Devices: c.devices, SeqLen: 64}))
		if got := zeroBucket(s, m); got != c.want {
			t.Errorf("%s %s on %d devices at %s: bucket %d bytes, want %d", c.stack, c.sharding, c.devices, c.prec, got, c.want)
		}
	}
	b, err := Estimate(Plan{Model: m, Mode: Training, Precision: capability.BF16, Stack: StackDeepSpeed, Sharding: ShardZeRO2, Devices: 4, SeqLen: 64})
	if err != nil {
		t.Fatal(err)
	}
	if b.BuffersBytes < 1_000_000_000 {
		t.Errorf("ZeRO-2 buffers %d bytes, want the 1e9-byte bucket among them", b.BuffersBytes)
	}
}

// Serving split by layers (transformers' device_map, llama.cpp's default
// split mode) runs each device's blocks over the whole batch: a block's
// working set is the one-device figure. Tensor parallelism (vLLM) divides
// it by the devices.
func TestLayerSplitKeepsTheBlockWorkingSet(t *testing.T) {
	act := func(stack Stack, devices int) int64 {
		return mustEstimate(t, Plan{Model: oneBillion, Mode: Inference, Precision: capability.BF16, Stack: stack, Devices: devices, Sharding: ShardZeRO3, SeqLen: 4096, BatchSize: 4}).ActivationsBytes
	}
	for _, stack := range []Stack{StackHF, StackLlamaCpp} {
		if one, four := act(stack, 1), act(stack, 4); one != four {
			t.Errorf("%s: activations %d on one device, %d on each of four split by layers", stack, one, four)
		}
	}
	if one, four := act(StackPyTorch, 1), act(StackPyTorch, 4); four*4 > one+4 {
		t.Errorf("a stack without a layer split: activations %d on one device, %d on each of four, want a quarter", one, four)
	}
}

// LoRA over a base loaded in fp32 under 16-bit autocast keeps the frozen
// base at 4 B a parameter; the activations stay those of the 16-bit run.
func TestLoRAOverAnFP32Base(t *testing.T) {
	est := func(mixed MixedPrecision) Breakdown {
		return mustEstimate(t, Plan{Model: oneBillion, Mode: LoRA, Precision: capability.BF16, Mixed: mixed, Stack: StackHF, SeqLen: 1024})
	}
	half, amp := est(""), est(MixedAMP)
	if got, want := amp.WeightsBytes-half.WeightsBytes, int64(2*oneBillion.Params); got < want-want/100 || got > want+want/100 {
		t.Errorf("an fp32 base adds %d bytes of weights, want about 2 B a parameter (%d)", got, want)
	}
	if amp.ActivationsBytes != half.ActivationsBytes {
		t.Errorf("activations %d over an fp32 base, %d over a 16-bit one: want the same", amp.ActivationsBytes, half.ActivationsBytes)
	}
}

// oneBillion is a 1B-parameter Llama-shaped model for the tests above.
var oneBillion = Model{Name: "m", Params: 1_000_000_000,
	Arch: &Arch{Layers: 16, KVLayers: 16, Hidden: 2048, Heads: 16, KVHeads: 16, HeadDim: 128, FFN: 8192, Vocab: 32000, Gated: true}}

// mustEstimate is Estimate for a plan a test expects to be valid.
func mustEstimate(t *testing.T, p Plan) Breakdown {
	t.Helper()
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gpt-oss's GGUF files keep the routed experts in MXFP4 whatever the
// file's type: llama-quantize's MXFP4_MOE stores every other tensor in
// Q8_0, an F16 file (and Ollama's build) in 16 bits. With experts on the
// host, the device's share follows those widths.
func TestGPTOSSGGUFKeepsExpertsInMXFP4(t *testing.T) {
	arch := &Arch{Layers: 4, KVLayers: 4, Hidden: 256, Heads: 4, KVHeads: 2, HeadDim: 64, FFN: 256, Vocab: 1000, Gated: true}
	// 32 experts, 4 active: 32 × 1M expert parameters, 0.1M dense + 0.25M
	// embeddings and 0.25M head.
	m := Model{Name: "gpt-oss", Family: "gpt_oss", Params: 32_600_000, ActiveParams: 4_600_000, HeadParams: 250_000,
		Experts: 32, ExpertsPerToken: 4, Arch: arch}
	experts := m.ExpertParams()
	rest := float64(m.Params) - experts - untiedInputEmbedding(m)
	for _, c := range []struct {
		name string
		p    Plan
		bits float64
	}{
		{"MXFP4 file", Plan{Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.25}, 8.5},
		{"F16 file", Plan{Precision: capability.FP16}, 16},
		{"Q4_K_M file", Plan{Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.85}, 4.85},
	} {
		c.p.Model, c.p.Mode, c.p.Stack = m, Inference, StackLlamaCpp
		if got, want := storedWeights(m, c.p), sat(rest*c.bits/8+experts*4.25/8); got != want {
			t.Errorf("%s: %d bytes, want %d (experts in MXFP4, the rest at %g bits)", c.name, got, want, c.bits)
		}
	}
	// All experts on the host: the device keeps the rest at Q8_0.
	b := mustEstimate(t, Plan{Model: m, Mode: Inference, Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.25, Stack: StackLlamaCpp, CPUMoELayers: 4, SeqLen: 256})
	if got, want := float64(b.WeightsBytes), rest*8.5/8; got < want*0.99 || got > want*1.01 {
		t.Errorf("experts on the host: %g bytes on the device, want the rest at Q8_0, %g", got, want)
	}
	// Another family keeps one rate for every tensor.
	other := m
	other.Family = "qwen3_moe"
	if got, want := storedWeights(other, Plan{Model: other, Mode: Inference, Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.25, Stack: StackLlamaCpp}), sat((float64(m.Params)-untiedInputEmbedding(m))*4.25/8); got != want {
		t.Errorf("qwen3_moe: %d bytes, want one rate, %d", got, want)
	}
}

// Under checkpointing the backward recomputes its last block when nearly
// every gradient has been made: with gradients larger than the forward's
// saves, the peak is the states, the gradients and that block's working set.
func TestCheckpointedBackwardHoldsGradientsAndTheRecomputedBlock(t *testing.T) {
	m := Model{Name: "wide", Params: 200_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000, Gated: true}}
	p := withDefaults(Plan{Model: m, Mode: Training, Precision: capability.BF16, BatchSize: 4, SeqLen: 256,
		Stack: StackTorchtitan, Recompute: RecomputeFull, Backend: "cuda"})
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, recompute := trainingActivations(resolve(p), m.Arch, 4*256, false)
	if recompute <= 0 {
		t.Fatal("no recompute working set")
	}
	// torchtitan's fused AdamW makes no temporaries, and autocast's 16-bit
	// copies of the fp32 weights are gone by the end of the backward.
	states := b.WeightsBytes - sat(autocastCopies(resolve(p), float64(m.Params))) + b.OptimizerBytes + b.BuffersBytes
	if got, want := b.PeakAllocatedBytes-states-b.GradientsBytes, sat(recompute); got != want {
		t.Errorf("peak above the states and gradients %d, want the recomputed block's %d", got, want)
	}
}

// Megatron's DistributedDataParallel allocates its contiguous gradient
// buffer when it wraps the model and zeroes it in place each step: the
// gradients are held beside the forward's activations, as with gradient
// accumulation, where other stacks set them to None between steps.
func TestMegatronHoldsItsGradientBufferThroughTheForward(t *testing.T) {
	m := Model{Name: "m", Params: 100_000_000,
		Arch: &Arch{Layers: 4, KVLayers: 4, Hidden: 512, Heads: 8, KVHeads: 8, HeadDim: 64, FFN: 2048, Vocab: 32000, Gated: true}}
	plan := func(st Stack) Breakdown {
		b, err := Estimate(withDefaults(Plan{Model: m, Mode: Training, Precision: capability.BF16, BatchSize: 8, SeqLen: 2048, Stack: st, Backend: "cuda"}))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mg := plan(StackMegatron)
	if mg.ActivationsBytes+mg.LogitsBytes <= mg.GradientsBytes {
		t.Fatalf("activations %d and logits %d do not exceed the gradients %d: the case does not test the forward's peak", mg.ActivationsBytes, mg.LogitsBytes, mg.GradientsBytes)
	}
	// The forward's peak holds every part at once, less what the loss and
	// the recompute never hold together (no recompute here).
	if want := mg.WeightsBytes + mg.GradientsBytes + mg.OptimizerBytes + mg.ActivationsBytes + mg.LogitsBytes + mg.BuffersBytes; mg.PeakAllocatedBytes != want {
		t.Errorf("megatron peak %d, want weights, gradients, states, activations and logits together (%d)", mg.PeakAllocatedBytes, want)
	}
}
