package oomsim

import (
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
	train, _ := errorSpread(Plan{Mode: Training})
	serve, _ := errorSpread(Plan{Mode: Inference, Stack: StackVLLM})
	if train >= serve {
		t.Errorf("training's p10 %.3f is not below a serving engine's %.3f", train, serve)
	}
}
