package oomsim

import (
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
)

// llama.cpp's -ngl counts the blocks and the output layer as layer slots
// and puts the last N on the device: N slots are N-1 blocks and the output
// layer; the rest, and their KV cache, stay in host memory, and nothing is
// lost between the two.
func TestGPULayersSplitTheWeightsByLayer(t *testing.T) {
	m := Model{Name: "m", Params: 8_030_261_248, HeadParams: 525_336_576,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true}}
	p := WithDefaults(Plan{Model: m, Mode: Inference, Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.85, Stack: StackLlamaCpp, SeqLen: 8192, Backend: backend.CUDA})
	all, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	var prev Breakdown
	for _, n := range []int{1, 2, 17, 32, 33, 99} {
		q := p
		q.GPULayers = n
		b, err := Estimate(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.WeightsBytes + b.HostBytes; abs(got-all.WeightsBytes) > 1<<10 {
			t.Errorf("-ngl %d: %d on the device + %d on the host, want the %d of -ngl all", n, b.WeightsBytes, b.HostBytes, all.WeightsBytes)
		}
		if n >= 33 && (b.WeightsBytes != all.WeightsBytes || b.KVCacheBytes != all.KVCacheBytes) {
			t.Errorf("-ngl %d (every slot): %+v, want the whole plan %+v", n, b, all)
		}
		if n > 1 && n <= 33 && b.WeightsBytes <= prev.WeightsBytes {
			t.Errorf("-ngl %d: %d on the device, not more than at fewer layers (%d)", n, b.WeightsBytes, prev.WeightsBytes)
		}
		if want := all.KVCacheBytes * int64(min(n, 33)-1) / 32; n < 33 && abs(b.KVCacheBytes-want) > 1<<10 {
			t.Errorf("-ngl %d: KV cache %d, want %d (the %d device blocks')", n, b.KVCacheBytes, want, n-1)
		}
		prev = b
	}
	// -ngl 1 is the output layer alone: the head at the file's rate.
	q := p
	q.GPULayers = 1
	b, _ := Estimate(q)
	head := float64(all.WeightsBytes) * float64(128256*4096) / float64(m.Params-128256*4096)
	if d := float64(b.WeightsBytes) - head; d < -1<<20 || d > 1<<20 || !strings.Contains(strings.Join(b.Notes, " "), "1 of 33 layer slots") {
		t.Errorf("-ngl 1: %d on the device, want the output layer's %.0f; notes %q", b.WeightsBytes, head, b.Notes)
	}
}

// --n-cpu-moe keeps the routed experts of the first N blocks on the host:
// --cpu-moe (every block) leaves the attention, the shared parts and the
// KV cache on the device.
func TestCPUMoEKeepsTheExpertsOnTheHost(t *testing.T) {
	m := Model{Name: "moe", Params: 30_532_122_624, ActiveParams: 3_340_000_000, Experts: 128, ExpertsPerToken: 8,
		Arch: &Arch{Layers: 48, KVLayers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128, FFN: 768, Vocab: 151936, Gated: true}}
	p := WithDefaults(Plan{Model: m, Mode: Inference, Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.85, Stack: StackLlamaCpp, SeqLen: 8192, Backend: backend.CUDA})
	all, _ := Estimate(p)
	var prev int64 = all.WeightsBytes + 1
	for _, n := range []int{1, 24, 48, 1 << 16} {
		q := p
		q.CPUMoELayers = n
		b, err := Estimate(q)
		if err != nil {
			t.Fatal(err)
		}
		if (b.WeightsBytes >= prev && n <= 48) || b.KVCacheBytes != all.KVCacheBytes || abs(b.WeightsBytes+b.HostBytes-all.WeightsBytes) > 1<<10 {
			t.Errorf("--n-cpu-moe %d: device %d host %d kv %d; want less on the device than %d, the whole KV cache %d", n, b.WeightsBytes, b.HostBytes, b.KVCacheBytes, prev, all.KVCacheBytes)
		}
		prev = b.WeightsBytes
	}
	experts := float64(all.WeightsBytes) * m.ExpertParams() / float64(m.Params)
	if got := float64(all.WeightsBytes - prev); got < 0.95*experts || got > 1.05*experts {
		t.Errorf("--cpu-moe moved %.0f bytes to the host, want the experts' %.0f", got, experts)
	}
}

// The ladder's offload rung for llama.cpp keeps layers (or a mixture's
// experts) on the device, as many as fit, never every weight on the host.
func TestLadderOffloadsLlamaCppByLayers(t *testing.T) {
	dense := Model{Name: "dense", Params: 12_247_782_400, HeadParams: 671_088_640,
		Arch: &Arch{Layers: 40, KVLayers: 40, Hidden: 5120, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 131072, Gated: true}}
	moe := Model{Name: "moe", Params: 30_532_122_624, ActiveParams: 3_340_000_000, Experts: 128, ExpertsPerToken: 8,
		Arch: &Arch{Layers: 48, KVLayers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128, FFN: 768, Vocab: 151936, Gated: true}}
	for _, c := range []struct {
		m    Model
		want string
	}{{dense, "layer slots on the device (-ngl"}, {moe, "--n-cpu-moe"}} {
		p := WithDefaults(Plan{Model: c.m, Mode: Inference, Precision: capability.Int4, Quant: QuantGGUF, WeightBits: 4.85, Stack: StackLlamaCpp, SeqLen: 8192, Backend: backend.CUDA})
		d := Device{Name: "8gb", Backend: backend.CUDA, BudgetBytes: 8 * GiB, Available: 1, Support: capability.Evaluate(capability.Facts{Backend: backend.CUDA, ComputeCapability: "8.6"})}
		tr, err := Ladder(p, d, LadderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first, ok := tr.FirstFit()
		if !ok || first.Action != "offload to CPU" || !strings.Contains(first.Change, c.want) {
			t.Errorf("%s: first fit %+v (%v), want an offload that says %q", c.m.Name, first, ok, c.want)
		}
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// GGUF type names read as llama-quantize lists them, Unsloth's dynamic
// quants as their base types; F16 is no quantisation.
func TestGGUFTypeBits(t *testing.T) {
	for _, c := range []struct {
		name  string
		bits  float64
		class capability.Precision
	}{
		{"Q4_K_M", 4.85, capability.Int4}, {"q8_0", 8.5, capability.Int8}, {" IQ3_XXS ", 3.06, capability.Int4},
		{"UD-Q6_K_XL", 6.57, capability.Int8}, {"ud-q4_k_xl", 4.85, capability.Int4}, {"Q4_1", 5.11, capability.Int4},
		{"Q5_K_M", 5.7, capability.Int8}, {"MXFP4", 4.25, capability.Int4},
	} {
		bits, class, ok := GGUFTypeBits(c.name)
		if !ok || bits != c.bits || class != c.class {
			t.Errorf("%q: %g %s %v, want %g %s", c.name, bits, class, ok, c.bits, c.class)
		}
	}
	for _, name := range []string{"F16", "bf16", "", "q4", "Q4_K_M_extra"} {
		if _, _, ok := GGUFTypeBits(name); ok {
			t.Errorf("%q read as a quantisation type", name)
		}
	}
}
