package oomsim

import (
	"math"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
)

// llama2_7B is Llama-2-7B's shape (config.json: 4096 hidden, 32 layers,
// 11008 gated MLP, 32000 vocabulary, untied head).
var llama2_7B = Model{Name: "7B", Params: 6_738_415_616, HeadParams: 32000 * 4096,
	Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 11008, Vocab: 32000, Gated: true}}

// The optimizers' states, counted by hand from their definitions for
// Llama-2-7B under AMP (fp32 states, 4 bytes a value).
func TestOptimizerStatesByHand(t *testing.T) {
	P := float64(llama2_7B.Params)
	side := float64(2 * 32000 * 4096) // embeddings and the untied head: AdamW
	// GaLore at rank 128: q, k, v, o are 4096×4096 (projector 128×4096,
	// projected states 128×4096); gate, up, down 4096×11008 (projector
	// 128×4096, states 128×11008).
	perLayer := 4*4096.0*4096 + 3*4096.0*11008
	proj := 7 * 128 * 4096.0 / perLayer
	state := (4*128*4096.0 + 3*128*11008.0) / perLayer
	cases := []struct {
		opt  Optimizer
		rank int
		want float64
	}{
		{AdamW, 0, 8 * P},
		{Lion, 0, 4 * P},
		{Muon, 0, 4*(P-side) + 8*side},
		{GaLore, 0, 8*side + (P-side)*(4*proj+2*4*state)},
		{GaLore8bit, 0, 8*side + (P-side)*(4*proj+2*1*state)},
		{LOMO, 0, 0},
		{BAdam, 0, 12 * P / 32},
	}
	for _, c := range cases {
		p := WithDefaults(Plan{Model: llama2_7B, Mode: Training, Precision: capability.BF16, Mixed: MixedAMP, BatchSize: 1, SeqLen: 1024, Optimizer: c.opt, GaLoreRank: c.rank, Stack: StackHF})
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(b.OptimizerBytes); math.Abs(got-c.want) > 2 {
			t.Errorf("%s: optimizer %.0f bytes, want %.0f", c.opt, got, c.want)
		}
	}
	// A bigger rank keeps more; a rank past a matrix's short side is capped
	// there (the SVD has no more components).
	lo := optimizerStates(Plan{Model: llama2_7B, Optimizer: GaLore, GaLoreRank: 64}, P, 4)
	hi := optimizerStates(Plan{Model: llama2_7B, Optimizer: GaLore, GaLoreRank: 1024}, P, 4)
	capped := optimizerStates(Plan{Model: llama2_7B, Optimizer: GaLore, GaLoreRank: 1 << 16}, P, 4)
	full := optimizerStates(Plan{Model: llama2_7B, Optimizer: GaLore, GaLoreRank: 4096}, P, 4)
	if !(lo < hi && hi < capped) || capped != full {
		t.Errorf("GaLore states by rank: 64 %.3g, 1024 %.3g, 4096 %.3g, 65536 %.3g", lo, hi, full, capped)
	}
}

// LOMO and AdaLomo update in the backward, BAdam one block at a time:
// 16-bit weights without a master copy (LOMO's Table 1: 12.55 GB of fp16
// parameters for LLaMA-7B, no optimizer state) and about one block's
// gradients alive.
func TestInBackwardOptimizers(t *testing.T) {
	for _, opt := range []Optimizer{LOMO, AdaLomo, BAdam, GaLoreLayerwise, GaLore8bitLayerwise} {
		p := WithDefaults(Plan{Model: llama2_7B, Mode: Training, Precision: capability.FP16, BatchSize: 1, SeqLen: 512, Optimizer: opt, Stack: StackHF})
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		if opt.NoMasterCopy() {
			if p.Mixed != MixedPure || b.WeightsBytes != 2*llama2_7B.Params {
				t.Errorf("%s: mixed %q, weights %d; want pure 16-bit weights", opt, p.Mixed, b.WeightsBytes)
			}
			if band := EstimateBand(p, b, Pinned{}); strings.Contains(strings.Join(band.DependsOn, " "), "master copy") {
				t.Errorf("%s: the band varies a master copy it never has: %v", opt, band.DependsOn)
			}
		}
		if want := sat(float64(b.WeightsBytes) / 32); b.GradientsBytes > want+1 {
			t.Errorf("%s: gradients %d, want one block's (%d)", opt, b.GradientsBytes, want)
		}
	}
}

// Optimizers that train every weight are refused with LoRA.
func TestFullParameterOptimizersRefuseLoRA(t *testing.T) {
	for _, opt := range []Optimizer{GaLore, GaLore8bitLayerwise, LOMO, AdaLomo, BAdam} {
		p := Plan{Model: llama2_7B, Mode: LoRA, Precision: capability.BF16, Optimizer: opt, LoRARank: 16}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "mode training") {
			t.Errorf("%s with LoRA: %v", opt, err)
		}
	}
	for _, opt := range []Optimizer{Lion, Muon} {
		p := WithDefaults(Plan{Model: llama2_7B, Mode: LoRA, Precision: capability.BF16, Optimizer: opt, LoRARank: 16, BatchSize: 1, SeqLen: 512})
		b, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		// One state per adapter weight, as wide as the adapters.
		if b.OptimizerBytes != b.GradientsBytes {
			t.Errorf("%s on LoRA adapters: optimizer %d, want one state (%d)", opt, b.OptimizerBytes, b.GradientsBytes)
		}
	}
	if err := (Plan{Model: llama2_7B, Mode: Training, Precision: capability.BF16, Optimizer: GaLore, GaLoreRank: -1}).Validate(); err == nil {
		t.Error("a negative GaLore rank validates")
	}
}
