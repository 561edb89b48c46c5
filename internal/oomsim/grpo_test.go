package oomsim

import (
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
)

// grpoPlan is a GRPO step of Llama-2-7B on an 80 GB device: batch 8 of
// 256 prompt + 768 completion tokens.
func grpoPlan(mode Mode, rollout RolloutEngine) Plan {
	return WithDefaults(Plan{Model: llama2_7B, Mode: mode, Precision: capability.BF16, BatchSize: 8, SeqLen: 1024, PromptLen: 256,
		Objective: ObjectiveGRPO, Rollout: rollout, Stack: StackTRL, Devices: 1, DeviceBytes: 80 << 30, Backend: "cuda"})
}

// The loss covers the completion's tokens only (TRL's logits_to_keep), in
// TRL's own loss whatever the stack's supervised one: the logits, each
// row's log-softmax and their gradient, 3 × 2 bytes a logit in bf16.
func TestGRPOLossOnCompletionTokens(t *testing.T) {
	p := grpoPlan(LoRA, RolloutVLLMServer)
	if p.PromptLen != 256 || p.Loss != LossFull {
		t.Fatalf("defaults kept prompt %d, loss %q", p.PromptLen, p.Loss)
	}
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(8 * 768 * 32000 * 6); b.LogitsBytes != want {
		t.Errorf("logits %d, want %d (8 × 768 completion tokens × 32000 × 6 B)", b.LogitsBytes, want)
	}
	if b.RolloutBytes != 0 || !strings.Contains(strings.Join(b.Notes, " "), "vLLM server") {
		t.Errorf("a vLLM server on other devices: rollout %d, notes %v", b.RolloutBytes, b.Notes)
	}
}

// model.generate is a phase between steps: the weights and optimizer
// states with the generation batch's KV cache, never with the step's
// activations; a colocated vLLM holds its share through the step unless it
// sleeps.
func TestGRPORollouts(t *testing.T) {
	hf, err := Estimate(grpoPlan(LoRA, RolloutHF))
	if err != nil {
		t.Fatal(err)
	}
	kv := kvCache(llama2_7B.Arch, grpoPlan(LoRA, RolloutHF), 8, 1024) // 8 × 1024 tokens × 32 layers × 2 × 4096 × 2 B
	if kv != 8*1024*32*2*4096*2 || hf.RolloutBytes < kv {
		t.Errorf("generate: rollout %d, want at least the KV cache %d", hf.RolloutBytes, kv)
	}
	if states := add(hf.WeightsBytes, hf.OptimizerBytes, hf.RolloutBytes); hf.PeakAllocatedBytes < states {
		t.Errorf("generate: peak %d below the states plus rollout %d", hf.PeakAllocatedBytes, states)
	}
	p := grpoPlan(LoRA, RolloutVLLMColocate)
	srv, _ := Estimate(grpoPlan(LoRA, RolloutVLLMServer))
	co, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	share := sat(DefaultRolloutShare * float64(80<<30))
	if co.RolloutBytes != share || co.PeakAllocatedBytes != srv.PeakAllocatedBytes+share {
		t.Errorf("colocated vLLM: rollout %d (want %d), peak %d (want the step's %d plus the share)", co.RolloutBytes, share, co.PeakAllocatedBytes, srv.PeakAllocatedBytes)
	}
	p.RolloutSleep = true
	sl, _ := Estimate(p)
	if sl.PeakAllocatedBytes >= co.PeakAllocatedBytes {
		t.Errorf("sleep mode releases the share during the step: peak %d, awake %d", sl.PeakAllocatedBytes, co.PeakAllocatedBytes)
	}
}

// A reference model is kept only with a KL term in full training (a PEFT
// model's reference is the base with its adapters disabled).
func TestGRPOReference(t *testing.T) {
	full := grpoPlan(Training, RolloutVLLMServer)
	without, _ := Estimate(full)
	full.KLReference = true
	with, _ := Estimate(full)
	if d := with.WeightsBytes - without.WeightsBytes; d < 2*llama2_7B.Params {
		t.Errorf("full training with a KL term: %d more bytes of weights, want a second copy of the model", d)
	}
	lora := grpoPlan(LoRA, RolloutVLLMServer)
	a, _ := Estimate(lora)
	lora.KLReference = true
	b, _ := Estimate(lora)
	if a.WeightsBytes != b.WeightsBytes {
		t.Errorf("LoRA keeps no second copy: %d vs %d", a.WeightsBytes, b.WeightsBytes)
	}
	for _, bad := range []Plan{
		{Model: llama2_7B, Mode: LoRA, Objective: ObjectiveGRPO, Rollout: "vllm"},
		{Model: llama2_7B, Mode: LoRA, Objective: ObjectiveGRPO, Rollout: RolloutVLLMColocate, RolloutShare: 1},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validates", bad)
		}
	}
}

// Unsloth trains the weights its colocated vLLM holds: they are counted
// once, inside the share.
func TestGRPOUnslothSharesWeights(t *testing.T) {
	p := grpoPlan(LoRA, RolloutVLLMColocate)
	p.Stack = StackUnsloth
	p = WithDefaults(p)
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := sat(DefaultRolloutShare*float64(80<<30)) - b.WeightsBytes; b.RolloutBytes != want {
		t.Errorf("rollout %d, want the share less the weights (%d)", b.RolloutBytes, want)
	}
}

// Before TRL 0.15 the per-device batch counted prompts: each step trained
// and generated BatchSize × num_generations sequences.
func TestGRPOPromptBatch(t *testing.T) {
	p := grpoPlan(LoRA, RolloutHF)
	one, _ := Estimate(p)
	p.Generations = 4
	four, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	if four.LogitsBytes != 4*one.LogitsBytes || four.RolloutBytes <= 3*one.RolloutBytes {
		t.Errorf("4 completions a prompt: logits %d (want 4 × %d), rollout %d (one: %d)", four.LogitsBytes, one.LogitsBytes, four.RolloutBytes, one.RolloutBytes)
	}
	if err := (Plan{Model: llama2_7B, Mode: LoRA, Objective: ObjectiveGRPO, Generations: -1}).Validate(); err == nil {
		t.Error("negative generations validate")
	}
}

// The ladder lets a colocated vLLM sleep before it changes the training.
func TestGRPOLadderSleepsVLLM(t *testing.T) {
	p := grpoPlan(LoRA, RolloutVLLMColocate)
	p.RolloutShare, p.Recompute, p.BatchSize = 0.6, RecomputeFull, 1 // no smaller micro-batch to try first
	b, err := Estimate(p)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Ladder(p, Device{Name: "d", Backend: "cuda", BudgetBytes: b.TotalBytes - GiB/2, Available: 1}, LadderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var sleeps bool
	for _, s := range tr.Steps {
		sleeps = sleeps || (s.Action == "lighter rollout" && s.Plan.RolloutSleep)
	}
	if !sleeps || !tr.Fits {
		t.Errorf("ladder %+v: want vLLM's sleep mode as a step that makes it fit", tr.Steps)
	}
}

// A tiled MLP (ALST's TiledMLP, Unsloth's) keeps one tile of about hidden
// tokens of the MLP's intermediates: long sequences save most of them,
// short ones (shorter than a tile) nothing.
func TestTiledMLP(t *testing.T) {
	for _, c := range []struct {
		seq  int
		save bool
	}{{131072, true}, {2048, false}} {
		p := WithDefaults(Plan{Model: llama2_7B, Mode: LoRA, Precision: capability.BF16, BatchSize: 1, SeqLen: c.seq, Recompute: RecomputeFull, Stack: StackHF})
		plain, _ := Estimate(p)
		p.TiledMLP = true
		tiled, err := Estimate(p)
		if err != nil {
			t.Fatal(err)
		}
		if saved := plain.ActivationsBytes - tiled.ActivationsBytes; (saved > 0) != c.save {
			t.Errorf("seq %d: a tiled MLP saves %d bytes of activations", c.seq, saved)
		}
	}
}
