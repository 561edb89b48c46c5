package oomsim

import (
	"testing"

	"github.com/devctl/devctl/internal/capability"
	"github.com/google/go-cmp/cmp"
)

// parts is the byte figures of a Breakdown, without notes and sources.
type parts struct {
	Weights, Gradients, Optimizer, Activations, KVCache, Overhead, Host int64
}

func partsOf(b Breakdown) parts {
	return parts{b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes, b.ActivationsBytes, b.KVCacheBytes, b.OverheadBytes, b.HostBytes}
}

// The figures below are worked by hand from the formulas each function's
// doc comment cites, on shapes small enough to check with a pencil.
func TestEstimateFormulas(t *testing.T) {
	bare := Model{Name: "1M", Params: 1_000_000}
	tiny := Model{Name: "tiny", Params: 1_000_000,
		Arch: &Arch{Layers: 2, KVLayers: 2, Hidden: 128, Heads: 2, KVHeads: 2, HeadDim: 64, FFN: 512, Vocab: 1000}}
	tests := []struct {
		name string
		plan Plan
		want parts
	}{
		{
			name: "SGD with momentum keeps 4 bytes of state per parameter, plus the fp32 master copy in mixed precision",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.BF16, Optimizer: SGD},
			want: parts{Weights: 2_000_000, Gradients: 2_000_000, Optimizer: 8_000_000},
		},
		{
			name: "Adafactor in fp32 keeps about 4 bytes of state per parameter",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.FP32, Optimizer: Adafactor},
			want: parts{Weights: 4_000_000, Gradients: 4_000_000, Optimizer: 4_000_000},
		},
		{
			name: "inference without a shape takes activations as 20% of the weights",
			plan: Plan{Model: bare, Mode: Inference, Precision: capability.FP16},
			want: parts{Weights: 2_000_000, Activations: 400_000},
		},
		{
			name: "ZeRO-3 inference shards the weights and the KV cache over the devices",
			plan: Plan{Model: tiny, Mode: Inference, Precision: capability.FP16, SeqLen: 1024, Sharding: ShardZeRO3, Devices: 4},
			want: parts{
				Weights: 2_000_000 / 4,
				// prefill: one layer's projections and MLP intermediates (4h + 3·ffn,
				// 16-bit) per token, and the last position's fp32 logits
				Activations: 1024*(4*128+3*512)*2 + 4*1000,
				// 2 × layers × kv_heads × head_dim × tokens × batch × 2 bytes, over 4 devices
				KVCache: 2 * 2 * 2 * 64 * 1024 * 2 / 4,
			},
		},
		{
			name: "LoRA adapters without a shape are 0.5% of the model, trained in fp32 with AdamW",
			plan: Plan{Model: bare, Mode: LoRA, Precision: capability.FP16},
			want: parts{Weights: 2_000_000 + 4*5_000, Gradients: 4 * 5_000, Optimizer: 8 * 5_000},
		},
		{
			name: "DeepSpeed ZeRO-2 with CPU offload keeps at least 16 bytes per parameter on the host",
			plan: Plan{Model: bare, Mode: Training, Precision: capability.FP16, Convention: DeepSpeed, Devices: 2, Offload: "cpu"},
			// estimate_zero2_model_states_mem_needs: cpu = P · max(4·G, 16) · 1.5
			want: parts{Weights: 2_000_000, Host: 1_000_000 * 16 * 3 / 2},
		},
		{
			name: "a plan run on the CPU is charged the CPU's overhead, not the accelerator's",
			plan: Plan{Model: bare, Mode: Inference, Precision: capability.FP32, Backend: "cuda", OnCPU: true},
			want: parts{Weights: 4_000_000, Activations: 800_000, Overhead: 512 * MiB},
		},
		{
			name: "a plan on a CUDA device is charged the CUDA context",
			plan: Plan{Model: bare, Mode: Inference, Precision: capability.FP32, Backend: "cuda"},
			want: parts{Weights: 4_000_000, Activations: 800_000, Overhead: 512 * MiB},
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

// Korthikanti et al. (arXiv:2205.05198) on the GPT-2-medium-like shape of
// TestActivationsKorthikanti: s=1024, b=8, h=1024, a=16, L=24.
func TestActivationsByRecompute(t *testing.T) {
	a := &Arch{Layers: 24, Hidden: 1024, Heads: 16}
	const layer = 1024*8*1024*34 + 5*16*1024*1024*8 // s·b·h·34 + 5·a·s²·b
	tests := []struct {
		name      string
		precision capability.Precision
		recompute Recompute
		want      int64
	}{
		{"no recomputation keeps every layer's activations", capability.BF16, RecomputeNone, 24 * layer},
		{"fp32 doubles the 16-bit figure", capability.FP32, RecomputeNone, 2 * 24 * layer},
		{"full recomputation keeps 2·s·b·h per layer plus one layer being recomputed", capability.BF16, RecomputeFull, 24*2*1024*8*1024 + layer},
		{"fp32 full recomputation doubles too", capability.FP32, RecomputeFull, 2 * (24*2*1024*8*1024 + layer)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Activations(a, Training, tt.precision, tt.recompute, 8, 1024)); diff != "" {
				t.Errorf("Activations (-want +got):\n%s", diff)
			}
		})
	}
}

// PEFT prints "trainable params: 13,631,488" for Llama-3-8B with r=16 on
// q_proj, k_proj, v_proj and o_proj: grouped-query k and v are 1024 wide.
func TestLoRAParamsCountsGroupedQueryProjections(t *testing.T) {
	llama3 := Model{Params: 8_030_261_248, Arch: &Arch{Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128}}
	if diff := cmp.Diff(int64(13_631_488), LoRAParams(llama3, 16)); diff != "" {
		t.Errorf("LoRAParams (-want +got):\n%s", diff)
	}
}
