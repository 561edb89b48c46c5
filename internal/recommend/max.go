package recommend

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/units"
)

// MaxKind is what `recommend --max` maximises.
type MaxKind string

// What --max can ask for.
const (
	// MaxBatch is the largest micro-batch (per device) that fits.
	MaxBatch MaxKind = "batch"
	// MaxSeq is the longest sequence (context length) that fits.
	MaxSeq MaxKind = "seq"
	// MaxConcurrency is the most sequences of --seq-len served at once:
	// for a serving engine, what its KV cache holds next to the weights.
	MaxConcurrency MaxKind = "concurrency"
	// MaxGPULayers is the most layer slots llama.cpp or Ollama can put on
	// the device (-ngl, num_gpu), the rest running from host memory.
	MaxGPULayers MaxKind = "gpu-layers"
)

// MaxKinds lists them, in the order help texts show them.
var MaxKinds = []MaxKind{MaxBatch, MaxSeq, MaxConcurrency, MaxGPULayers}

// Max is the answer to --max: the value, the total at it and at the next
// value, and what bounded the search when it was not memory.
type Max struct {
	What       MaxKind `json:"what"`
	Value      int     `json:"value"`
	TotalBytes int64   `json:"total_bytes"`
	// NextTotalBytes is the total at Value+1, which does not fit; 0 when
	// the search stopped at a limit other than memory (Limit says which).
	NextTotalBytes int64  `json:"next_total_bytes,omitempty"`
	UsableBytes    int64  `json:"usable_bytes"`
	Limit          string `json:"limit,omitempty"`
}

// maxSearchLimit bounds the values tried: more than any batch or context
// anyone plans.
const maxSearchLimit = 1 << 24

// searchMax finds the largest value of what at which the plan fits d.
// Memory grows with each of batch, sequence and concurrency, so the
// answer is the boundary of a monotone predicate: an exponential search
// for a value that does not fit, then a binary search.
func searchMax(what MaxKind, plan oomsim.Plan, d oomsim.Device) (*Max, error) {
	set := func(n int) oomsim.Plan {
		q := plan
		switch what {
		case MaxSeq:
			q.SeqLen = n
			q.PromptLen = min(q.PromptLen, n) // the longest context keeps the prompt given
		case MaxGPULayers:
			q.GPULayers = n
		default: // batch and concurrency
			q.BatchSize, q.MicroBatch = n, n
		}
		return q
	}
	limit, limitWhy := maxSearchLimit, ""
	if what == MaxSeq {
		if a := plan.Model.Arch; a != nil && a.MaxPositions > 0 {
			limit, limitWhy = a.MaxPositions, fmt.Sprintf("the model's maximum positions (%d)", a.MaxPositions)
		}
	}
	if what == MaxConcurrency && plan.Mode != oomsim.Inference {
		return nil, inputf("--max concurrency is for serving (--mode inference); use --max batch for training")
	}
	if what == MaxConcurrency {
		// A preallocating engine serves at most max_num_seqs sequences at
		// once, whatever its KV cache holds: vLLM's default for the release
		// and device, or the --max-num-seqs given (any engine).
		if _, seqs, ok := oomsim.ServingProfile(plan); ok && seqs > 0 && seqs < limit && (plan.Stack == oomsim.StackVLLM || plan.MaxNumSeqs > 0) {
			whose := "its default for this release and device"
			if plan.MaxNumSeqs > 0 {
				whose = "--max-num-seqs"
			}
			limit, limitWhy = seqs, fmt.Sprintf("%s's max_num_seqs, the most sequences it schedules at once (%d, %s; a larger --max-num-seqs serves more, with a larger start-up profile)", plan.Stack, seqs, whose)
		}
	}
	if (what == MaxBatch || what == MaxConcurrency) && plan.Mode == oomsim.Inference && oomsim.OllamaOneSlot(plan) {
		limit, limitWhy = 1, fmt.Sprintf("Ollama serves %s one request at a time (OLLAMA_NUM_PARALLEL does not apply to it)", plan.Model.Family)
	}
	if what == MaxGPULayers {
		a := plan.Model.Arch
		switch {
		case plan.Mode != oomsim.Inference || (plan.Stack != oomsim.StackLlamaCpp && plan.Stack != oomsim.StackOllama):
			return nil, inputf("--max gpu-layers is llama.cpp's -ngl and Ollama's num_gpu: it needs --mode inference and --stack llama.cpp or ollama")
		case a == nil || a.Layers <= 0:
			return nil, inputf("--max gpu-layers needs the model's layers: give --model or --model-config, not only --model-params")
		}
		// Every block and the output layer: -ngl n_layer+1 (or more).
		limit, limitWhy = a.Layers+1, fmt.Sprintf("every layer (%d blocks and the output layer)", a.Layers)
	}
	fits := func(n int) (bool, int64, error) {
		b, err := oomsim.Estimate(set(n))
		if err != nil {
			return false, 0, err
		}
		return oomsim.Fits(b, d), b.TotalBytes, nil
	}
	ok, total1, err := fits(1)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, inputf("--max %s: nothing fits %s, even at %s 1: %s needed, %s can be allocated; run without --max for the fallback ladder, which says what to change first",
			what, d.Name, what, units.Bytes(total1).Format(units.GiB, 2), units.Bytes(d.BudgetBytes).Format(units.GiB, 2))
	}
	lo, hi := 1, 2
	for hi <= limit {
		ok, _, err := fits(hi)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		lo, hi = hi, hi*2
	}
	if hi > limit {
		ok, _, err := fits(limit)
		if err != nil {
			return nil, err
		}
		if ok {
			lo, hi = limit, limit+1
		} else {
			hi = limit
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, _, err := fits(mid)
		if err != nil {
			return nil, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	m := &Max{What: what, Value: lo, UsableBytes: d.BudgetBytes}
	_, m.TotalBytes, _ = fits(lo)
	if lo >= limit {
		m.Limit = limitWhy
		if m.Limit == "" {
			m.Limit = fmt.Sprintf("devctl's search bound (%d)", maxSearchLimit)
		}
		return m, nil
	}
	_, m.NextTotalBytes, _ = fits(lo + 1)
	return m, nil
}

// maxReason is the reason line for a --max answer.
func maxReason(m *Max, plan oomsim.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the largest %s that fits is %d (%s of %s)", maxWords[m.What], m.Value, units.Bytes(m.TotalBytes).Format(units.GiB, 2), units.Bytes(m.UsableBytes).Format(units.GiB, 2))
	if m.NextTotalBytes > 0 {
		fmt.Fprintf(&b, "; %d needs %s", m.Value+1, units.Bytes(m.NextTotalBytes).Format(units.GiB, 2))
	}
	if m.Limit != "" {
		fmt.Fprintf(&b, "; bounded by %s, not by memory", m.Limit)
	}
	if m.What == MaxConcurrency {
		fmt.Fprintf(&b, "; each sequence %d tokens", plan.SeqLen)
	}
	return b.String()
}

var maxWords = map[MaxKind]string{MaxBatch: "micro-batch", MaxSeq: "sequence length", MaxConcurrency: "number of concurrent sequences", MaxGPULayers: "number of layers on the device (-ngl)"}
