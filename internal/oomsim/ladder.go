package oomsim

import (
	"fmt"
	"slices"
	"sort"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
)

// Device is what the ladder needs to know about where the plan runs.
type Device struct {
	Name    string
	Backend backend.Backend
	// BudgetBytes is the memory one device offers the plan: Allocatable
	// (usable memory, capped by free memory when shared).
	BudgetBytes int64
	// Support says which precisions the device runs (capability rules).
	Support capability.Support
	// Available is how many such devices can share the work (>= 1).
	Available int
	// HostBudgetBytes is host memory for offloaded state and the CPU
	// fallback; 0 means unknown (planning for a catalogued device).
	HostBudgetBytes int64
	// Unified: the device's memory is the host's (Apple silicon, MI300A,
	// DGX Spark), so offloading to host memory frees nothing.
	Unified bool
}

// LadderOptions are the policies the ladder honours.
type LadderOptions struct {
	// CPUFallback allows the last rung (device.fallback_enabled).
	CPUFallback bool
	// NoPEFT forbids switching full training to LoRA/QLoRA.
	NoPEFT bool
}

// Step is one rung tried: what changed and the memory after it.
type Step struct {
	Action string    `json:"action"`
	Change string    `json:"change"`
	Plan   Plan      `json:"plan"`
	Memory Breakdown `json:"memory"`
	Fits   bool      `json:"fits"`
}

// Trace is the ladder's record. Final is the first plan that fits, or the
// last one tried when nothing does.
type Trace struct {
	Start       Step      `json:"start"`
	Steps       []Step    `json:"steps"`
	Skipped     []string  `json:"skipped,omitempty"`
	Fits        bool      `json:"fits"`
	Final       Plan      `json:"final_plan"`
	FinalMemory Breakdown `json:"final_memory"`
}

// FirstFit is the step that first made the plan fit: the last step the
// ladder took, before any "not needed" steps that put back changes the
// plan turned out not to need.
func (t Trace) FirstFit() (Step, bool) {
	for _, s := range t.Steps {
		if s.Fits {
			return s, true
		}
	}
	return Step{}, false
}

// NeededBytes is what the device must offer the plan: the total, and what
// the stack's scheduler keeps free beside it (SchedulerReserveBytes).
func (b Breakdown) NeededBytes() int64 { return b.TotalBytes + b.SchedulerReserveBytes }

// Fits reports whether a breakdown fits a device (and, when known, the
// host memory its offloaded state needs).
func Fits(b Breakdown, d Device) bool {
	if b.NeededBytes() > d.BudgetBytes {
		return false
	}
	return b.HostBytes == 0 || b.HostInTotal || d.HostBudgetBytes == 0 || b.HostBytes <= d.HostBudgetBytes
}

// Ladder is handle_oom(error, config) -> config: starting from a plan that
// may not fit, it applies the cheapest changes first, recomputing memory
// after each, and stops at the first plan that fits. The rungs, in order,
// are the rows of [rungs]:
//
//	lower precision → activation recomputation (selective, then full) →
//	a fused loss (Liger Kernel) → smaller micro-batch with gradient
//	accumulation (global batch kept) → fewer sequences served at once
//	(vLLM's --max-num-seqs, where its start-up profile runs an image per
//	sequence) → a lighter GRPO rollout (vLLM
//	sleep mode, one step's generation) → 8-bit optimizer → shard over the
//	available devices (ZeRO-2, then ZeRO-3/FSDP; split weights when
//	serving) → 8-bit/4-bit weights when serving → CPU offload → change of
//	method: LoRA, then QLoRA, instead of full training → CPU fallback (if
//	allowed).
//
// Changes accumulate: each rung starts from the previous one. Rungs that do
// not apply (inference has no optimizer; one device cannot shard) are
// listed in Skipped, as are changes the estimate cannot price and changes
// that save almost nothing where they stand; those are tried again after
// every later step, which can move the peak to what they change. An
// estimation error on the start plan is returned.
func Ladder(p Plan, d Device, o LadderOptions) (Trace, error) {
	p = withDefaults(p)
	p.Backend = d.Backend
	start, err := Estimate(p)
	if err != nil {
		return Trace{}, err
	}
	fits := Fits(start, d)
	t := Trace{Start: Step{Action: "start", Change: describe(p), Plan: p, Memory: start, Fits: fits},
		Final: p, FinalMemory: start, Fits: fits}
	if fits {
		return t, nil
	}
	l := ladder{start: p, d: d, o: o, training: p.Mode != Inference}
	cur, curTotal := p, start.TotalBytes
	// A change that saves almost nothing where it stands in the ladder is
	// put aside and tried again after every later step: a later step can
	// move the peak to what it changes (unsharded, full training peaks at
	// its optimizer step, where recomputation saves nothing; sharded over
	// many devices, or as LoRA, the activations are the peak).
	var deferred []move
	// try prices m against cur; it reports whether m became a step and
	// whether the plan now fits.
	try := func(m move, retried bool) (taken, done bool) {
		c, ok := m(cur)
		switch {
		case !ok:
			return false, false
		case c.skip != "":
			if !retried {
				t.Skipped = append(t.Skipped, c.action+": "+c.skip)
			}
			return false, false
		}
		on := d
		if c.on != nil {
			on = *c.on
		}
		b, err := Estimate(c.plan)
		if err != nil {
			if !retried {
				t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", c.action, err))
			}
			return false, false
		}
		fits := Fits(b, on)
		if saved := curTotal - b.TotalBytes; !fits && c.on == nil && saved < worthIt(curTotal) {
			// Not worth carrying into the plan now: it stays in the
			// record, not in the plan, and is tried again later.
			if !retried {
				t.Skipped = append(t.Skipped, fmt.Sprintf("%s (%s): saves only %.2f GiB", c.action, c.change, float64(saved)/float64(GiB)))
				deferred = append(deferred, m)
			}
			return false, false
		}
		change := c.change
		if retried {
			change += " (tried again: the peak moved)"
		}
		t.Steps = append(t.Steps, Step{Action: c.action, Change: change, Plan: c.plan, Memory: b, Fits: fits})
		cur, curTotal = c.plan, b.TotalBytes
		t.Final, t.FinalMemory, t.Fits = c.plan, b, fits
		return true, fits
	}
	// retry tries the deferred changes again, cheapest first, until none
	// is taken.
	retry := func() bool {
		for i := 0; i < len(deferred); {
			taken, done := try(deferred[i], true)
			if done {
				return true
			}
			if taken {
				deferred = slices.Delete(deferred, i, i+1)
				i = 0
				continue
			}
			i++
		}
		return false
	}
	for _, r := range rungs {
		for _, m := range r(l, cur) {
			taken, done := try(m, false)
			if done || (taken && retry()) {
				prune(&t, d)
				return t, nil
			}
		}
	}
	return t, nil
}

// A knob is one setting the ladder changes that can be put back on its
// own: the plan with it as it was before a step, everything else as the
// final plan has it.
type knob struct {
	name    string
	same    func(a, b Plan) bool
	restore func(n *Plan, from Plan)
}

// knobs are the settings prune may put back. The precision, the method
// (LoRA, QLoRA) and the CPU fallback are not among them: putting those
// back trades what is computed, not only time or memory.
var knobs = []knob{
	{"optimizer", func(a, b Plan) bool { return a.Optimizer == b.Optimizer }, func(n *Plan, f Plan) { n.Optimizer = f.Optimizer }},
	{"offload", func(a, b Plan) bool { return a.Offload == b.Offload }, func(n *Plan, f Plan) { n.Offload = f.Offload }},
	{"sharding", func(a, b Plan) bool { return a.Sharding == b.Sharding && a.ZeROStage == b.ZeROStage },
		func(n *Plan, f Plan) { n.Sharding, n.ZeROStage = f.Sharding, f.ZeROStage }},
	{"micro-batch", func(a, b Plan) bool { return a.MicroBatch == b.MicroBatch }, func(n *Plan, f Plan) { n.MicroBatch = f.MicroBatch }},
	{"loss", func(a, b Plan) bool { return a.Loss == b.Loss && a.FusedKernels == b.FusedKernels },
		func(n *Plan, f Plan) { n.Loss, n.FusedKernels = f.Loss, f.FusedKernels }},
	{"recomputation", func(a, b Plan) bool { return a.Recompute == b.Recompute }, func(n *Plan, f Plan) { n.Recompute = f.Recompute }},
	{"sequences", func(a, b Plan) bool { return a.MaxNumSeqs == b.MaxNumSeqs }, func(n *Plan, f Plan) { n.MaxNumSeqs = f.MaxNumSeqs }},
}

// prune puts back, latest first, the changes the plan that fits turned out
// not to need: a step taken for full training can be dead weight once the
// method changed to LoRA (an 8-bit optimizer or offloaded states of a few
// million adapter parameters), or once a later step made room. A change
// is put back only when no later step changed the same setting and the
// plan still fits without it; each is recorded as its own step.
func prune(t *Trace, d Device) {
	if t.Final.OnCPU {
		return // the plan runs on the host: the device's budget says nothing of it
	}
	final := t.Final
	for i := len(t.Steps) - 2; i >= 0; i-- {
		before := t.Start.Plan
		if i > 0 {
			before = t.Steps[i-1].Plan
		}
		after := t.Steps[i].Plan
		for _, k := range knobs {
			if k.same(before, after) || !k.same(after, final) {
				continue // not this step's change, or a later step changed it again
			}
			n := final
			k.restore(&n, before)
			b, err := Estimate(n)
			if err != nil || !Fits(b, d) {
				continue
			}
			final = n
			t.Steps = append(t.Steps, Step{Action: "not needed", Plan: n, Memory: b, Fits: true,
				Change: fmt.Sprintf("undo %s: %s", t.Steps[i].Action, t.Steps[i].Change)})
			t.Final, t.FinalMemory = n, b
		}
	}
}

// worthIt is the least a ladder step must save to be kept: 2% of the
// memory it starts from and at least 256 MiB (a step that makes the plan
// fit is kept whatever it saves).
func worthIt(total int64) int64 { return max(total/50, 256*MiB) }

// ladder is what every rung may consult besides the current plan.
type ladder struct {
	start    Plan // the user's plan, as the ladder began
	d        Device
	o        LadderOptions
	training bool
}

// change is one change a rung proposes: a plan to price, or, when skip is
// set, the reason it was not tried.
type change struct {
	action, change string
	plan           Plan
	on             *Device // where the plan runs; nil for the ladder's device
	skip           string
}

// A move builds its change from the plan the previous moves left (changes
// accumulate); ok false means it does not apply to that plan and leaves no
// record.
type move func(cur Plan) (c change, ok bool)

// A rung lists the moves it makes, given the plan it starts from.
type rung func(l ladder, cur Plan) []move

// rungs is the ladder, cheapest change first.
//
// Sharding over the devices the user has comes before anything that
// changes what is computed: a served model is quantised only when
// splitting it does not fit (and before offloading, which is far slower),
// and full fine-tuning becomes LoRA/QLoRA only as the last rung before the
// CPU, after offloading, labelled as the change of method it is (the
// user's call, not a setting).
var rungs = []rung{
	lowerPrecision,
	recompute,
	fusedLoss,
	smallerMicroBatch,
	fewerSequences,
	lighterRollout,
	optimizer8bit,
	shard,
	quantiseWeights,
	offloadToCPU,
	trainAdapters,
	cpuFallback,
}

// skipped is a rung that does not apply, with the reason recorded.
func skipped(action, why string) []move {
	return []move{func(Plan) (change, bool) { return change{action: action, skip: why}, true }}
}

// set is a move that always applies: it changes a copy of cur with edit
// and describes the change with what.
func set(action string, edit func(n *Plan), what func(cur, n Plan) string) move {
	return func(cur Plan) (change, bool) {
		n := cur
		edit(&n)
		return change{action: action, change: what(cur, n), plan: n}, true
	}
}

// 1. Lower precision: fp32 → the device's 16-bit type.
func lowerPrecision(l ladder, cur Plan) []move {
	const action = "lower precision"
	if cur.Precision != capability.FP32 {
		return skipped(action, "already "+string(cur.Precision))
	}
	half := Half(l.d.Support)
	if half == "" {
		return skipped(action, "the device runs neither bf16 nor fp16 fast")
	}
	return []move{set(action, func(n *Plan) { n.Precision = half },
		func(Plan, Plan) string { return "fp32 → " + string(half) })}
}

// 2-3. Activation recomputation, selective then full.
func recompute(l ladder, _ Plan) []move {
	const action = "recompute activations"
	if !l.training {
		return skipped(action, "inference keeps no activations for a backward pass")
	}
	var ms []move
	for _, r := range []Recompute{RecomputeSelective, RecomputeFull} {
		ms = append(ms, func(cur Plan) (change, bool) {
			if slices.Index(Recomputes, cur.Recompute) >= slices.Index(Recomputes, r) {
				return change{}, false
			}
			n := cur
			n.Recompute = r
			return change{action: action, change: string(cur.Recompute) + " → " + string(r), plan: n}, true
		})
	}
	return ms
}

// fusedLoss swaps the loss for Liger Kernel's fused linear cross-entropy
// (with its RMSNorm and SwiGLU, as --kernels liger): the same loss, but the
// logits are never materialised for every position, which for a 128k-256k
// vocabulary is often the largest part of a step. It applies to the stacks
// that train through transformers' Trainer (use_liger_kernel in the HF
// Trainer and TRL, axolotl's Liger plugin, LLaMA-Factory's
// enable_liger_kernel); the others already chunk or fuse their loss, or
// cannot load it.
func fusedLoss(l ladder, cur Plan) []move {
	const action = "fused loss"
	switch {
	case !l.training:
		return nil
	case cur.Loss != LossFull && cur.Loss != LossVocabParallel:
		return nil
	case !ProfileOf(cur.Stack).Trainer:
		return skipped(action, "the stack does not load Liger Kernel's loss")
	}
	return []move{set(action, func(n *Plan) { n.Loss, n.FusedKernels = LossFused, true },
		func(Plan, Plan) string {
			return "full → fused (Liger Kernel: use_liger_kernel=True; the same loss without every position's logits)"
		})}
}

// 4. Smaller micro-batch, same global batch: halve until 1.
func smallerMicroBatch(l ladder, cur Plan) []move {
	const action = "smaller micro-batch"
	if cur.micro() <= 1 {
		return skipped(action, "already 1")
	}
	var ms []move
	for mb := cur.micro() / 2; mb >= 1; mb /= 2 {
		ms = append(ms, set(action, func(n *Plan) { n.MicroBatch = mb }, func(cur, n Plan) string {
			what := fmt.Sprintf("micro-batch %d → %d", cur.micro(), mb)
			if l.training {
				return what + fmt.Sprintf(", gradient accumulation %d (batch %d kept)", n.GradAccum(), n.batch())
			}
			return what + fmt.Sprintf(" (batch %d in %d chunks)", n.batch(), n.GradAccum())
		}))
	}
	return ms
}

// fewerSequences halves vLLM's max_num_seqs where its start-up profile
// gives every sequence an image at the largest tiling (an encoder–decoder
// vision model, vllmImageProfile): fewer sequences served at once, the
// change vLLM's maintainers advise for Llama 3.2 Vision. Elsewhere the
// sequences only size the sampler's dummy run, which the ladder leaves.
func fewerSequences(l ladder, cur Plan) []move {
	if l.training || cur.Stack != StackVLLM || cur.Model.Arch == nil || cur.Model.Arch.ImageProfileBytes == 0 {
		return nil
	}
	const action = "fewer sequences"
	var ms []move
	for seqs := servingSeqs(cur) / 2; seqs >= 1; seqs /= 2 {
		ms = append(ms, set(action, func(n *Plan) { n.MaxNumSeqs = seqs }, func(c, _ Plan) string {
			return fmt.Sprintf("--max-num-seqs %d → %d (one profiled image each)", servingSeqs(c), seqs)
		}))
	}
	return ms
}

// lighterRollout makes a GRPO step's generation hold less: a colocated
// vLLM sleeps during the training step (TRL's vllm_enable_sleep_mode), and
// model.generate makes one step's completions at a time
// (steps_per_generation 1) instead of the whole accumulation's.
func lighterRollout(l ladder, cur Plan) []move {
	const action = "lighter rollout"
	if !l.training || cur.Objective != ObjectiveGRPO {
		return nil
	}
	switch {
	case cur.Rollout == RolloutVLLMColocate && !cur.RolloutSleep:
		return []move{set(action, func(n *Plan) { n.RolloutSleep = true },
			func(Plan, Plan) string {
				return "colocated vLLM sleeps during the training step (vllm_enable_sleep_mode)"
			})}
	case (cur.Rollout == "" || cur.Rollout == RolloutHF) && cur.RolloutSteps > 1:
		return []move{set(action, func(n *Plan) { n.RolloutSteps = 1 },
			func(c, _ Plan) string {
				return fmt.Sprintf("steps_per_generation %d → 1 (generate one step's completions at a time)", c.RolloutSteps)
			})}
	}
	return nil
}

// 5. 8-bit optimizer.
func optimizer8bit(l ladder, cur Plan) []move {
	const action = "8-bit optimizer"
	switch {
	case !l.training:
		return skipped(action, "inference has no optimizer")
	case cur.Optimizer != AdamW && cur.Optimizer != AdamWFused:
		return skipped(action, "optimizer is already "+string(cur.Optimizer))
	}
	return []move{set(action, func(n *Plan) { n.Optimizer = AdamW8bit },
		func(cur, _ Plan) string { return string(cur.Optimizer) + " → adamw-8bit" })}
}

// 6a. Inference: quantised weights, 8-bit then 4-bit, where the device runs them.
func quantiseWeights(l ladder, _ Plan) []move {
	if l.training {
		return nil
	}
	var ms []move
	for _, q := range []capability.Precision{capability.Int8, capability.Int4} {
		ms = append(ms, func(cur Plan) (change, bool) {
			if cur.Precision.Level() >= q.Level() {
				return change{}, false
			}
			if !l.d.Support.Has(q) && !ProfileOf(cur.Stack).Quantises {
				why := "the device does not support it (" + reasonFor(l.d.Backend, q) + ")"
				if l.d.Backend == backend.MPS || l.d.Backend == backend.CPU {
					why += "; mlx and llama.cpp quantise on it themselves (--stack mlx, --stack llama.cpp)"
				}
				return change{action: "quantise weights to " + string(q), skip: why}, true
			}
			n := cur
			n.Precision = q
			return change{action: "quantise weights", change: string(cur.Precision) + " → " + string(q), plan: n}, true
		})
	}
	return ms
}

// 6b. Training: adapters instead of full training (LoRA, then QLoRA).
func trainAdapters(l ladder, _ Plan) []move {
	const action = "change of method: train adapters"
	if !l.training {
		return nil
	}
	if l.o.NoPEFT {
		return skipped("LoRA/QLoRA", "not allowed")
	}
	lora := func(cur Plan) (change, bool) {
		if cur.Mode != Training {
			return change{}, false
		}
		n := cur
		n.Mode = LoRA
		n.Mixed = "" // full training's fp32 master copy is not a frozen base loaded in fp32
		return change{action: action, plan: n,
			change: "full training → LoRA (rank 16, base weights frozen at " + string(cur.Precision) + ")"}, true
	}
	qlora := func(cur Plan) (change, bool) {
		switch {
		case !l.d.Support.Has(capability.Int4):
			return change{action: "QLoRA", skip: "the device does not support 4-bit weights"}, true
		case cur.Mode == QLoRA:
			return change{}, false
		}
		n := cur
		n.Mode, n.Precision = QLoRA, capability.Int4
		return change{action: action, change: string(cur.Mode) + " → QLoRA (NF4 base weights, double quantisation)", plan: n}, true
	}
	return []move{lora, qlora}
}

// 7. Shard over the available devices: ZeRO-2 then ZeRO-3 when training,
// split weights when serving.
func shard(l ladder, _ Plan) []move {
	const action = "shard"
	if l.d.Available <= 1 {
		return skipped(action, "only one device available (use --devices N to plan for more)")
	}
	stages := []struct {
		sharding Sharding
		zero     int
		label    string
	}{
		{ShardZeRO2, 2, "ZeRO-2 (gradients and optimizer states)"},
		{ShardZeRO3, 3, "ZeRO-3/FSDP (parameters too)"},
	}
	if !l.training {
		stages = stages[1:]
		stages[0].label = "split the weights across devices (device_map=\"auto\" / tensor parallel)"
	}
	var ms []move
	for _, s := range stages {
		ms = append(ms, func(cur Plan) (change, bool) {
			if slices.Index(Shardings, cur.Sharding) >= slices.Index(Shardings, s.sharding) {
				return change{}, false
			}
			n := cur
			n.Sharding, n.Devices, n.ZeROStage = s.sharding, l.d.Available, s.zero
			return change{action: action, change: fmt.Sprintf("%s over %d devices", s.label, l.d.Available), plan: n}, true
		})
	}
	return ms
}

// 8. CPU offload.
func offloadToCPU(l ladder, cur Plan) []move {
	if cur.Offload == OffloadCPU {
		return nil
	}
	if l.d.Unified {
		return skipped("offload to CPU", "unified memory: the host's memory is the device's, so offloading frees nothing")
	}
	if cur.Stack.ExLlama() {
		return skipped("offload to CPU", fmt.Sprintf("%s keeps every layer on the GPUs (no host offload): use more devices, or a file with fewer bits per weight (--weight-bits)", cur.Stack))
	}
	if !l.training && ggmlStack(cur.Stack) && cur.Model.Arch != nil && cur.Model.Arch.Layers > 0 {
		// A mixture of experts keeps the fewest blocks' routed experts on
		// the host that lets the rest fit (llama.cpp's --n-cpu-moe; Ollama
		// has no such option): the host computes only the experts a token
		// picks, so it is the faster offload where it fits.
		if cur.Stack == StackLlamaCpp {
			if n := fewestCPUMoELayers(cur, l.d); n > 0 {
				return []move{set("offload to CPU", func(p *Plan) { p.CPUMoELayers = n },
					func(Plan, Plan) string {
						return fmt.Sprintf("the routed experts of the first %d of %d blocks in host memory (llama.cpp --n-cpu-moe %d); attention and the KV cache stay on the device", n, cur.Model.Arch.Layers, n)
					})}
			}
		}
		// llama.cpp and Ollama offload by layers: as many on the device as
		// fit (-ngl, num_gpu), the rest computed on the host.
		if n := mostGPULayers(cur, l.d); n > 0 {
			return []move{set("offload to CPU", func(p *Plan) { p.GPULayers = n },
				func(Plan, Plan) string {
					return fmt.Sprintf("%d of %d layer slots on the device (-ngl %d, num_gpu %d); the other blocks run from host memory", n, cur.Model.Arch.Layers+1, n, n)
				})}
		}
	}
	what := "optimizer states → host memory (ZeRO-Offload)"
	if !l.training {
		what = "weights → host memory, one layer resident at a time"
	}
	return []move{set("offload to CPU", func(n *Plan) { n.Offload = OffloadCPU },
		func(Plan, Plan) string { return what })}
}

// mostGPULayers is the most layer slots of a llama.cpp or Ollama plan
// that fit d, fewer than all of them; 0 when not even one does. Memory
// grows with the layers on the device, so a binary search finds it.
func mostGPULayers(p Plan, d Device) int {
	fits := fitsAt(p, d, func(q *Plan, n int) { q.GPULayers = n })
	slots := p.Model.Arch.Layers + 1
	// The first count that does not fit, searched over 1..slots-1.
	first := 1 + sort.Search(slots-1, func(i int) bool { return !fits(i + 1) })
	return first - 1
}

// fewestCPUMoELayers is the fewest blocks of a llama.cpp plan whose
// routed experts must stay in host memory for the rest to fit d; 0 when
// the model has no experts, or not even every block's on the host fits.
// Memory falls as more blocks' experts move, so a binary search finds it.
func fewestCPUMoELayers(p Plan, d Device) int {
	L := p.Model.Arch.Layers
	if p.Model.ExpertParams() <= 0 || p.CPUMoELayers >= L {
		return 0
	}
	fits := fitsAt(p, d, func(q *Plan, n int) { q.CPUMoELayers = n })
	from := max(p.CPUMoELayers, 0) + 1
	n := from + sort.Search(L-from+1, func(i int) bool { return fits(from + i) })
	if n > L {
		return 0
	}
	return n
}

// fitsAt says whether p, with set(n) applied, fits d.
func fitsAt(p Plan, d Device, set func(q *Plan, n int)) func(n int) bool {
	return func(n int) bool {
		q := p
		set(&q, n)
		b, err := Estimate(q)
		return err == nil && Fits(b, d)
	}
}

// 9. CPU fallback: the user's plan, on the host.
func cpuFallback(l ladder, _ Plan) []move {
	const action = "CPU fallback"
	switch {
	case !l.o.CPUFallback:
		return skipped(action, "device.fallback_enabled is false")
	case l.d.Backend == backend.CPU || l.start.OnCPU:
		return skipped(action, "the plan already runs on the CPU")
	case l.d.HostBudgetBytes <= 0:
		return skipped(action, "host memory unknown (planning for a catalogued device)")
	}
	n := l.start
	n.OnCPU, n.Backend = true, "cpu"
	if n.Precision != capability.FP32 && n.Precision != capability.BF16 {
		n.Precision = capability.FP32
	}
	host := Device{Name: "cpu", Backend: "cpu", BudgetBytes: l.d.HostBudgetBytes, Available: 1}
	return []move{func(Plan) (change, bool) {
		return change{action: action, change: "run on the host CPU (" + string(n.Precision) + ")", plan: n, on: &host}, true
	}}
}

// Half returns the 16-bit type a device runs best: bf16 where native,
// else fp16, else "".
func Half(s capability.Support) capability.Precision {
	switch {
	case s.BF16:
		return capability.BF16
	case s.FP16:
		return capability.FP16
	}
	return ""
}

func reasonFor(b backend.Backend, precision capability.Precision) string {
	if r := capability.Requirement(b, precision); r != "" {
		return "needs " + r
	}
	return "no " + string(b) + " rule grants " + string(precision)
}

func describe(p Plan) string {
	s := fmt.Sprintf("%s, %s, batch %d, seq %d", p.Mode, p.Precision, p.batch(), p.SeqLen)
	if p.Mode != Inference {
		s += fmt.Sprintf(", %s, recompute %s", p.Optimizer, p.RecomputeLabel())
	}
	return s
}

// RecomputeLabel is the recomputation as plans print it: "full, 2 blocks a
// checkpoint" when a checkpoint spans several blocks.
func (p Plan) RecomputeLabel() string {
	if p.Recompute == RecomputeFull && p.RecomputeLayers > 1 {
		return fmt.Sprintf("%s, %d blocks a checkpoint", p.Recompute, p.RecomputeLayers)
	}
	return string(p.Recompute)
}

// Allocatable is the memory one device offers a plan: its usable memory
// (what the framework reports as total capacity), capped by the memory free
// now when that is known. Estimates carry the runtime overhead (the CUDA
// context) in their total, so nothing is taken off here: counting the
// context once is what makes `recommend` and `doctor --log` agree.
func Allocatable(usable, free int64) int64 {
	if free > 0 && free < usable {
		return free
	}
	return usable
}
