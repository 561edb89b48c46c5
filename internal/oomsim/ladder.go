package oomsim

import (
	"errors"
	"fmt"

	"github.com/devctl/devctl/internal/capability"
)

// Device is what the ladder needs to know about where the plan runs.
type Device struct {
	Name    string
	Backend string
	// BudgetBytes is the memory one device offers the plan (usable memory
	// times the memory fraction, capped by free memory when shared).
	BudgetBytes int64
	// Support says which precisions the device runs (capability rules).
	Support capability.Support
	// Available is how many such devices can share the work (>= 1).
	Available int
	// HostBudgetBytes is host memory for offloaded state and the CPU
	// fallback; 0 means unknown (planning for a catalogued device).
	HostBudgetBytes int64
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

// Fits reports whether a breakdown fits a device (and, when known, the
// host memory its offloaded state needs).
func Fits(b Breakdown, d Device) bool {
	if b.TotalBytes > d.BudgetBytes {
		return false
	}
	return b.HostBytes == 0 || d.HostBudgetBytes == 0 || b.HostBytes <= d.HostBudgetBytes
}

// Ladder is handle_oom(error, config) -> config: starting from a plan that
// may not fit, it applies the cheapest changes first, recomputing memory
// after each, and stops at the first plan that fits:
//
//	lower precision → activation recomputation (selective, then full) →
//	smaller micro-batch with gradient accumulation (global batch kept) →
//	8-bit optimizer → 8-bit/4-bit weights (LoRA/QLoRA for training) →
//	shard over the available devices (ZeRO-2, then ZeRO-3/FSDP) →
//	CPU offload → CPU fallback (if allowed).
//
// Changes accumulate: each rung starts from the previous one. Rungs that do
// not apply (inference has no optimizer; one device cannot shard) are
// listed in Skipped. An estimation error on the start plan is returned in
// the trace as a start step that does not fit.
func Ladder(p Plan, d Device, o LadderOptions) (Trace, error) {
	p = withDefaults(p)
	p.Backend = d.Backend
	start, err := Estimate(p)
	if err != nil {
		return Trace{}, err
	}
	t := Trace{Start: Step{Action: "start", Change: describe(p), Plan: p, Memory: start, Fits: Fits(start, d)}}
	t.Final, t.FinalMemory, t.Fits = p, start, t.Start.Fits
	if t.Fits {
		return t, nil
	}
	cur := p
	try := func(action, change string, next Plan, dev Device) bool {
		b, err := Estimate(next)
		if err != nil {
			if errors.Is(err, ErrNotApplicable) {
				t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", action, err))
				return false
			}
			t.Skipped = append(t.Skipped, fmt.Sprintf("%s: %v", action, err))
			return false
		}
		fits := Fits(b, dev)
		t.Steps = append(t.Steps, Step{Action: action, Change: change, Plan: next, Memory: b, Fits: fits})
		cur = next
		t.Final, t.FinalMemory, t.Fits = next, b, fits
		return fits
	}
	skip := func(action, why string) { t.Skipped = append(t.Skipped, action+": "+why) }
	training := cur.Mode != Inference

	// 1. Lower precision: fp32 → the device's 16-bit type.
	if cur.Precision == FP32 {
		if half := Half(d.Support); half != "" {
			n := cur
			n.Precision = half
			if try("lower precision", "fp32 → "+half, n, d) {
				return t, nil
			}
		} else {
			skip("lower precision", "the device runs neither bf16 nor fp16 fast")
		}
	} else {
		skip("lower precision", "already "+cur.Precision)
	}

	// 2-3. Activation recomputation.
	if training {
		for _, r := range []string{RecomputeSelective, RecomputeFull} {
			if rank(cur.Recompute) >= rank(r) {
				continue
			}
			n := cur
			n.Recompute = r
			if try("recompute activations", cur.Recompute+" → "+r, n, d) {
				return t, nil
			}
		}
	} else {
		skip("recompute activations", "inference keeps no activations for a backward pass")
	}

	// 4. Smaller micro-batch, same global batch.
	if cur.micro() > 1 {
		for mb := cur.micro() / 2; mb >= 1; mb /= 2 {
			n := cur
			n.MicroBatch = mb
			what := fmt.Sprintf("micro-batch %d → %d", cur.micro(), mb)
			if training {
				what += fmt.Sprintf(", gradient accumulation %d (batch %d kept)", n.GradAccum(), n.batch())
			} else {
				what += fmt.Sprintf(" (batch %d in %d chunks)", n.batch(), n.GradAccum())
			}
			if try("smaller micro-batch", what, n, d) {
				return t, nil
			}
		}
	} else {
		skip("smaller micro-batch", "already 1")
	}

	// 5. 8-bit optimizer.
	if training && cur.Optimizer == AdamW {
		n := cur
		n.Optimizer = AdamW8bit
		if try("8-bit optimizer", "adamw → adamw-8bit", n, d) {
			return t, nil
		}
	} else if training {
		skip("8-bit optimizer", "optimizer is already "+cur.Optimizer)
	} else {
		skip("8-bit optimizer", "inference has no optimizer")
	}

	// 6. Quantised weights (LoRA/QLoRA when training).
	if !training {
		for _, q := range []string{Int8, Int4} {
			if rank(cur.Precision) >= rank(q) {
				continue
			}
			if !d.Support.Has(q) {
				skip("quantise weights to "+q, "the device does not support it ("+reasonFor(d.Backend, q)+")")
				continue
			}
			n := cur
			n.Precision = q
			if try("quantise weights", cur.Precision+" → "+q, n, d) {
				return t, nil
			}
		}
	} else if !o.NoPEFT {
		if cur.Mode == Training {
			n := cur
			n.Mode = LoRA
			if try("train adapters", "full training → LoRA (rank 16, base weights frozen at "+cur.Precision+")", n, d) {
				return t, nil
			}
		}
		if cur.Mode != QLoRA && d.Support.Has(Int4) {
			n := cur
			n.Mode, n.Precision = QLoRA, Int4
			if try("train adapters", cur.Mode+" → QLoRA (NF4 base weights, double quantisation)", n, d) {
				return t, nil
			}
		} else if !d.Support.Has(Int4) {
			skip("QLoRA", "the device does not support 4-bit weights")
		}
	} else {
		skip("LoRA/QLoRA", "not allowed")
	}

	// 7. Shard over the available devices.
	if d.Available > 1 {
		stages := []string{ShardZeRO2, ShardZeRO3}
		if !training {
			stages = []string{ShardZeRO3}
		}
		for _, s := range stages {
			if rank(cur.Sharding) >= rank(s) {
				continue
			}
			n := cur
			n.Sharding, n.Devices = s, d.Available
			if s == ShardZeRO3 {
				n.ZeROStage = 3
			} else {
				n.ZeROStage = 2
			}
			label := map[string]string{ShardZeRO2: "ZeRO-2 (gradients and optimizer states)", ShardZeRO3: "ZeRO-3/FSDP (parameters too)"}[s]
			if !training {
				label = "split the weights across devices (device_map=\"auto\" / tensor parallel)"
			}
			if try("shard", fmt.Sprintf("%s over %d devices", label, d.Available), n, d) {
				return t, nil
			}
		}
	} else {
		skip("shard", "only one device available (use --devices N to plan for more)")
	}

	// 8. CPU offload.
	if cur.Offload != "cpu" {
		n := cur
		n.Offload = "cpu"
		what := "optimizer states → host memory (ZeRO-Offload)"
		if !training {
			what = "weights → host memory, one layer resident at a time"
		}
		if try("offload to CPU", what, n, d) {
			return t, nil
		}
	}

	// 9. CPU fallback.
	switch {
	case !o.CPUFallback:
		skip("CPU fallback", "device.fallback_enabled is false")
	case d.HostBudgetBytes <= 0:
		skip("CPU fallback", "host memory unknown (planning for a catalogued device)")
	default:
		n := p // the user's plan, on the host
		n.OnCPU, n.Backend = true, "cpu"
		if n.Precision != FP32 && n.Precision != BF16 {
			n.Precision = FP32
		}
		host := Device{Name: "cpu", Backend: "cpu", BudgetBytes: d.HostBudgetBytes, Available: 1}
		try("CPU fallback", "run on the host CPU ("+n.Precision+")", n, host)
	}
	return t, nil
}

// Half returns the 16-bit type a device runs best: bf16 where native,
// else fp16, else "".
func Half(s capability.Support) string {
	switch {
	case s.BF16:
		return BF16
	case s.FP16:
		return FP16
	}
	return ""
}

func reasonFor(backend, precision string) string {
	if r := capability.Requirement(backend, precision); r != "" {
		return "needs " + r
	}
	return "no " + backend + " rule grants " + precision
}

// rank orders values within one ladder dimension.
func rank(v string) int {
	switch v {
	case RecomputeSelective, ShardZeRO2, FP16, BF16:
		return 1
	case RecomputeFull, ShardZeRO3, Int8:
		return 2
	case Int4:
		return 3
	}
	return 0
}

func describe(p Plan) string {
	s := fmt.Sprintf("%s, %s, batch %d, seq %d", p.Mode, p.Precision, p.batch(), p.SeqLen)
	if p.Mode != Inference {
		s += ", " + p.Optimizer + ", recompute " + p.Recompute
	}
	return s
}
