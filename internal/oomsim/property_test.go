package oomsim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
)

func total(t *testing.T, p Plan) int64 {
	t.Helper()
	b, err := Estimate(p)
	if err != nil {
		t.Fatalf("%+v: %v", p, err)
	}
	return b.TotalBytes
}

var propModes = []Mode{Inference, Training, LoRA}

// More parameters, a bigger batch or a longer sequence never needs less
// memory, for every mode, precision and recomputation level.
func TestMemoryIsMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	arch := &Arch{Layers: 24, KVLayers: 24, Hidden: 1024, Heads: 16, KVHeads: 16, HeadDim: 64, FFN: 4096, Vocab: 50257}
	for i := 0; i < 2000; i++ {
		mode := propModes[r.IntN(len(propModes))]
		prec := []capability.Precision{capability.FP32, capability.FP16, capability.BF16}[r.IntN(3)]
		if mode != Training && r.IntN(2) == 0 {
			prec = []capability.Precision{capability.Int8, capability.Int4}[r.IntN(2)]
		}
		rc := Recomputes[r.IntN(len(Recomputes))]
		params := int64(r.IntN(1e11)) + 1000
		batch, seq := r.IntN(64)+1, r.IntN(8192)+1
		withArch := r.IntN(2) == 0
		mk := func(params int64, batch, seq int) Plan {
			m := Model{Params: params}
			if withArch {
				m.Arch = arch
			} else {
				m.Arch = AssumeArch(params)
			}
			return Plan{Model: m, Mode: mode, Precision: prec, Recompute: rc, BatchSize: batch, SeqLen: seq, Backend: "cuda"}
		}
		base := total(t, mk(params, batch, seq))
		if withArch { // the shape is fixed, so only the count grows
			if got := total(t, mk(params+int64(r.IntN(1e9))+1, batch, seq)); got < base {
				t.Fatalf("more params needed less memory: %d < %d (%s %s)", got, base, mode, prec)
			}
		}
		if got := total(t, mk(params, batch+r.IntN(16)+1, seq)); got < base {
			t.Fatalf("bigger batch needed less memory: %d < %d (%s %s)", got, base, mode, prec)
		}
		if got := total(t, mk(params, batch, seq+r.IntN(4096)+1)); got < base {
			t.Fatalf("longer sequence needed less memory: %d < %d (%s %s)", got, base, mode, prec)
		}
	}
}

// For a bare parameter count the assumed shape changes with the count;
// memory must still grow with it, give or take the whole numbers of heads
// and layers a shape is made of (never more than 15% down).
func TestMemoryIsMonotoneInBareParams(t *testing.T) {
	for _, mode := range propModes {
		prev := int64(0)
		for p := int64(100_000); p < 2e12; p = p*21/20 + 1 {
			got := total(t, Plan{Model: Model{Params: p, Arch: AssumeArch(p)}, Mode: mode, Precision: capability.BF16, SeqLen: 2048, Backend: "cuda"})
			if float64(got) < 0.85*float64(prev) {
				t.Fatalf("%s: %d params need %d bytes, much fewer than a smaller count's %d", mode, p, got, prev)
			}
			prev = max(prev, got)
		}
	}
}

// A lower precision never needs more memory than a higher one, when the
// weights themselves are stored at it. (Autocast training over fp32 weights
// is the exception the model must keep: its 16-bit copies of the weights
// come on top of the fp32 master, so for a model whose states dominate it
// needs more than fp32 training, and the ladder's "worth it" rule drops a
// precision step that saves nothing.)
func TestLowerPrecisionNeverNeedsMore(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	order := []capability.Precision{capability.FP32, capability.BF16, capability.Int8, capability.Int4}
	for i := 0; i < 2000; i++ {
		params := int64(r.IntN(1e11)) + 1000
		m := Model{Params: params, Arch: AssumeArch(params)}
		if r.IntN(2) == 0 {
			m.Params = 8_030_261_248 // the shape's own count: a real Llama-3-8B
			m.Arch = &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256, Gated: true}
			m.HeadParams = 128256 * 4096
		}
		mode := propModes[r.IntN(len(propModes))]
		batch, seq := r.IntN(16)+1, r.IntN(4096)+1
		prev := int64(-1)
		for _, prec := range order {
			if mode == Training && (prec == capability.Int8 || prec == capability.Int4) {
				continue
			}
			got := total(t, Plan{Model: m, Mode: mode, Precision: prec, BatchSize: batch, SeqLen: seq, Backend: "cuda", Mixed: MixedPure})
			if prev >= 0 && got > prev {
				t.Fatalf("%s at %s needs %d bytes, more than the higher precision's %d", mode, prec, got, prev)
			}
			prev = got
		}
	}
}

func TestLadderFindsAFittingPlanForLlama2FullFineTune(t *testing.T) {
	m := Model{Name: "llama-2-7b", Params: 6_738_415_616, HeadParams: 131_072_000,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 32, HeadDim: 128, FFN: 11008, Vocab: 32000}}
	a100 := Device{Name: "a100-80gb", Backend: "cuda", BudgetBytes: GiB * 7915 / 100 * 9 / 10, Available: 1,
		Support: capability.Evaluate(capability.Facts{Backend: "cuda", ComputeCapability: "8.0"})}
	tr, err := Ladder(Plan{Model: m, Mode: Training, Precision: capability.BF16, BatchSize: 8, SeqLen: 2048}, a100, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Start.Fits || !tr.Fits {
		t.Fatalf("start fits %v, end fits %v; want a plan that does not fit made to fit", tr.Start.Fits, tr.Fits)
	}
	var actions []string
	for _, s := range tr.Steps {
		actions = append(actions, s.Action)
		if s.Memory.TotalBytes <= 0 {
			t.Errorf("step %q has no total", s.Action)
		}
	}
	if actions[0] != "recompute activations" {
		t.Errorf("first step = %q, want activation recomputation (precision is already bf16)", actions[0])
	}
	if tr.Final.BatchSize != 8 {
		t.Errorf("global batch changed to %d", tr.Final.BatchSize)
	}
	last := tr.Steps[len(tr.Steps)-1]
	if !last.Fits || last.Memory.TotalBytes > a100.BudgetBytes {
		t.Errorf("last step %q does not fit: %d > %d", last.Action, last.Memory.TotalBytes, a100.BudgetBytes)
	}
	// The ladder stops at the first plan that fits; only prune's
	// "not needed" steps (each fitting) come after it.
	first := slices.IndexFunc(tr.Steps, func(s Step) bool { return s.Fits })
	for _, s := range tr.Steps[first+1:] {
		if s.Action != "not needed" || !s.Fits {
			t.Errorf("ladder went on after %q fitted: %q (fits %v)", tr.Steps[first].Action, s.Action, s.Fits)
		}
	}
}

// Changes taken for full training that the plan no longer needs once the
// method changed to LoRA are put back: Llama-3.1-8B full training on one
// 24 GB card ends as LoRA with recomputation, not with an 8-bit optimizer
// and offloaded states for a few million adapter parameters.
func TestLadderPutsBackChangesThePlanNoLongerNeeds(t *testing.T) {
	m := Model{Name: "llama-3.1-8b", Params: 8_030_261_248, HeadParams: 525_336_576,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256}}
	gpu := Device{Name: "24 GiB", Backend: "cuda", BudgetBytes: Allocatable(25_393_994_138, 0), Available: 1,
		Support: capability.Evaluate(capability.Facts{Backend: "cuda", ComputeCapability: "8.9"})}
	tr, err := Ladder(Plan{Model: m, Mode: Training, Precision: capability.BF16, SeqLen: 2048}, gpu, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := tr.Final
	if !tr.Fits || f.Mode != LoRA || f.Optimizer != AdamW || f.Offload == OffloadCPU {
		t.Fatalf("final plan %s, optimizer %s, offload %s (fits %v); want LoRA with plain AdamW on the device", f.Mode, f.Optimizer, f.Offload, tr.Fits)
	}
	var undone int
	for _, s := range tr.Steps {
		if s.Action == "not needed" {
			undone++
			if !s.Fits || !strings.HasPrefix(s.Change, "undo ") {
				t.Errorf("step %q %q (fits %v): want a fitting undo", s.Action, s.Change, s.Fits)
			}
		}
	}
	if undone == 0 {
		t.Errorf("steps %+v: want the 8-bit optimizer and the offload undone", tr.Steps)
	}
}

// A change that saves almost nothing where it stands is tried again after
// later steps move the peak. An fp32 full fine-tune peaks at its optimizer
// step, where recomputation saves nothing; after the optimizer shrinks (or
// the method changes to adapters) the activations are the peak, and
// recomputation is turned on before going to 4 bits or to the CPU.
func TestLadderRetriesChangesOnceThePeakMoves(t *testing.T) {
	m := Model{Name: "model", Params: 7_000_000_000, Arch: AssumeArch(7_000_000_000)}
	// 22 GB: the adapters in bf16 need their activations recomputed (on a
	// 24 GiB card they fit without).
	gpu := Device{Name: "22 GB", Backend: "cuda", BudgetBytes: Allocatable(23_276_000_000, 0), Available: 1,
		Support: capability.Evaluate(capability.Facts{Backend: "cuda", ComputeCapability: "8.0"})}
	tr, err := Ladder(Plan{Model: m, Mode: Training, Precision: capability.FP32, SeqLen: 2048}, gpu, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Fits {
		t.Fatalf("no plan fits; steps %+v", tr.Steps)
	}
	if !slices.ContainsFunc(tr.Skipped, func(s string) bool {
		return strings.Contains(s, "recompute activations") && strings.Contains(s, "saves only")
	}) {
		t.Errorf("skipped %q: want recomputation put aside at the optimizer-step peak", tr.Skipped)
	}
	var changes []string
	for _, s := range tr.Steps {
		changes = append(changes, s.Change)
	}
	recompute := slices.IndexFunc(tr.Steps, func(s Step) bool { return s.Action == "recompute activations" })
	quantised := slices.IndexFunc(tr.Steps, func(s Step) bool { return s.Plan.Mode == QLoRA })
	if recompute < 0 || !strings.HasSuffix(changes[recompute], "(tried again: the peak moved)") || (quantised >= 0 && quantised < recompute) {
		t.Errorf("changes %q: want recomputation tried again, before any change to 4 bits", changes)
	}
	if tr.Final.Recompute != RecomputeFull || tr.Final.Mode == QLoRA {
		t.Errorf("final plan %s with recompute %s, want full recomputation without 4-bit weights", tr.Final.Mode, tr.Final.Recompute)
	}
}

func TestLadderQuantisesInferenceOnlyWhenTheDeviceCan(t *testing.T) {
	m := Model{Name: "llama-3-8b", Params: 8_030_261_248, HeadParams: 525_336_576,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256}}
	t4 := Device{Name: "t4", Backend: "cuda", BudgetBytes: GiB * 1475 / 100, Available: 1,
		Support: capability.Evaluate(capability.Facts{Backend: "cuda", ComputeCapability: "7.5"})}
	tr, err := Ladder(Plan{Model: m, Mode: Inference, Precision: capability.FP16, SeqLen: 2048}, t4, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Fits || tr.Final.Precision != capability.Int8 {
		t.Errorf("final precision %s fits %v, want 8bit that fits", tr.Final.Precision, tr.Fits)
	}
	tpu := Device{Name: "tpu-v4", Backend: "xla", BudgetBytes: 2 * GiB, Available: 1,
		Support: capability.Evaluate(capability.Facts{Backend: "xla", Generation: "v4"})}
	tr, err = Ladder(Plan{Model: m, Mode: Inference, Precision: capability.BF16, SeqLen: 2048}, tpu, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Final.Precision == capability.Int8 || tr.Final.Precision == capability.Int4 {
		t.Errorf("TPU v4 has no int8 rule, yet the ladder ended at %s (fits %v)", tr.Final.Precision, tr.Fits)
	}
}

// A 128k-vocabulary QLoRA at 4,096 tokens on a T4: the HF stacks' full
// loss (every position's logits, upcast to fp32) is what does not fit,
// and Liger Kernel's fused loss is the change that makes it fit; a stack
// that does not train through transformers' Trainer is not offered it.
func TestLadderFusesTheLossOnTrainerStacks(t *testing.T) {
	m := Model{Name: "llama-3.1-8b", Params: 8_030_261_248, HeadParams: 525_336_576,
		Arch: &Arch{Layers: 32, KVLayers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, FFN: 14336, Vocab: 128256}}
	t4 := Device{Name: "t4", Backend: "cuda", BudgetBytes: GiB * 1475 / 100, Available: 1,
		Support: capability.Evaluate(capability.Facts{Backend: "cuda", ComputeCapability: "7.5"})}
	tr, err := Ladder(Plan{Model: m, Mode: QLoRA, Stack: StackHF, SeqLen: 4096}, t4, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Fits || tr.Final.Loss != LossFused || !tr.Final.FusedKernels || len(tr.Steps) == 0 || tr.Steps[0].Action != "fused loss" {
		t.Errorf("steps %+v, final loss %s: want the fused loss as the change that fits", tr.Steps, tr.Final.Loss)
	}
	tr, err = Ladder(Plan{Model: m, Mode: QLoRA, Stack: StackPyTorch, SeqLen: 4096}, t4, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(tr.Steps, func(s Step) bool { return s.Action == "fused loss" }) ||
		!slices.ContainsFunc(tr.Skipped, func(s string) bool { return strings.HasPrefix(s, "fused loss: ") }) {
		t.Errorf("plain PyTorch: steps %+v, skipped %q; want the fused loss skipped with its reason", tr.Steps, tr.Skipped)
	}
}
