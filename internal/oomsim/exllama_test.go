package oomsim

import (
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
)

// llama31_8B is Llama-3.1-8B's published shape (8,030,261,248 parameters,
// an untied 128,256 × 4,096 head).
func llama31_8B() Model {
	return Model{Params: 8_030_261_248, HeadParams: 128_256 * 4096,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128_256, Gated: true}}
}

// An EXL2 file's blocks are stored at its bits per weight, the head at 6
// bits, and the input embedding stays in host memory (exllamav2's
// model.py: "Embedding layer on CPU").
func TestExLlamaWeights(t *testing.T) {
	m := llama31_8B()
	table := 128_256.0 * 4096
	blocks := 8_030_261_248.0 - 2*table
	for _, st := range []Stack{StackExLlama, StackExLlamaV3} {
		b, err := Estimate(Plan{Model: m, Mode: Inference, Stack: st, Precision: capability.Int4, WeightBits: 4.0, SeqLen: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if want := sat(blocks*4/8 + table*6/8); b.WeightsBytes != want {
			t.Errorf("%s: weights %d, want %d (blocks at 4.0 bits, head at 6, embedding on the host)", st, b.WeightsBytes, want)
		}
	}
	// The same file planned as transformers' GPTQ keeps the embedding
	// and head in 16 bits on the device.
	hf, err := Estimate(Plan{Model: m, Mode: Inference, Stack: StackHF, Precision: capability.Int4, Quant: QuantGPTQ, WeightBits: 4.0, SeqLen: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := Estimate(Plan{Model: m, Mode: Inference, Stack: StackExLlama, Precision: capability.Int4, WeightBits: 4.0, SeqLen: 4096})
	if ex.WeightsBytes >= hf.WeightsBytes {
		t.Errorf("exllama weights %d not below transformers' %d", ex.WeightsBytes, hf.WeightsBytes)
	}
}

// ExLlamaV2 evaluates a prompt 2,048 tokens at a time, so a 32k-token
// load's working set is a chunk's, and it reserves one scratch buffer for
// its largest module, the head: 2·vocab·hidden + 4·vocab·2048 bytes.
// ExLlamaV3 holds no such buffer.
func TestExLlamaChunkAndScratch(t *testing.T) {
	m := llama31_8B()
	plan := func(st Stack, seq, chunk int) Breakdown {
		b, err := Estimate(Plan{Model: m, Mode: Inference, Stack: st, Precision: capability.Int4, WeightBits: 4.0, SeqLen: seq, PrefillChunk: chunk})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	short, long := plan(StackExLlama, 2048, 0), plan(StackExLlama, 32768, 0)
	if short.ActivationsBytes != long.ActivationsBytes {
		t.Errorf("activations %d at 2k and %d at 32k: a 2048-token chunk either way", short.ActivationsBytes, long.ActivationsBytes)
	}
	hf, err := Estimate(Plan{Model: m, Mode: Inference, Stack: StackHF, Precision: capability.Int4, Quant: QuantGPTQ, WeightBits: 4.0, SeqLen: 32768})
	if err != nil {
		t.Fatal(err)
	}
	if long.ActivationsBytes*4 > hf.ActivationsBytes {
		t.Errorf("exllama's 32k activations %d not a fraction of a whole-prompt prefill's %d", long.ActivationsBytes, hf.ActivationsBytes)
	}
	if want := sat(2*128_256.0*4096 + 4*128_256.0*2048); long.BuffersBytes != want {
		t.Errorf("buffers %d, want the head's scratch %d", long.BuffersBytes, want)
	}
	if !hasNote(long, "scratch buffer") {
		t.Errorf("no note on the scratch buffer: %q", long.Notes)
	}
	if half := plan(StackExLlama, 32768, 1024); half.BuffersBytes >= long.BuffersBytes || half.ActivationsBytes >= long.ActivationsBytes {
		t.Errorf("--prefill-chunk 1024 keeps buffers %d and activations %d (2048: %d, %d)", half.BuffersBytes, half.ActivationsBytes, long.BuffersBytes, long.ActivationsBytes)
	}
	if v3 := plan(StackExLlamaV3, 32768, 0); v3.BuffersBytes != 0 {
		t.Errorf("exllamav3 buffers %d, want none", v3.BuffersBytes)
	}
}

func TestExLlamaStackNames(t *testing.T) {
	for name, want := range map[string]Stack{"exllamav2": StackExLlama, "ExLlama": StackExLlama, "tabbyapi": StackExLlama, "exl2": StackExLlama, "exllamav3": StackExLlamaV3, "exl3": StackExLlamaV3} {
		if got, ok := ParseStack(name); !ok || got != want {
			t.Errorf("ParseStack(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func hasNote(b Breakdown, s string) bool {
	for _, n := range b.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
