package oomsim

import (
	"sort"
)

// Band is the range a plan's total could fall in, and the assumptions
// that move it most. An estimate is only as good as what it assumes about
// what the user did not say: the attention kernel, how the loss is
// computed, whether training keeps an fp32 master copy, how much the
// caching allocator fragments, how big the CUDA context is. The band
// recomputes the total under each one's alternative, one at a time.
type Band struct {
	LowBytes  int64 `json:"low_bytes"`
	HighBytes int64 `json:"high_bytes"`
	// DependsOn names the one or two assumptions that move the total
	// most, largest first.
	DependsOn []string `json:"depends_on,omitempty"`
	// LowBy and HighBy name the assumption that gives the band's bottom
	// and its top ("" when nothing moves it that way).
	LowBy  string `json:"low_by,omitempty"`
	HighBy string `json:"high_by,omitempty"`
}

// Pinned says which of a plan's choices the user gave; the band varies
// only the others.
type Pinned struct {
	Attention, Stack, Mixed, Recompute bool
}

// alternative is one assumption flipped.
type alternative struct {
	what  string
	total int64
}

// EstimateBand computes the band around b, the estimate of p.
func EstimateBand(p Plan, b Breakdown, pinned Pinned) Band {
	p = withDefaults(p)
	central := b.TotalBytes
	var alts []alternative
	try := func(what string, q Plan) {
		if nb, err := Estimate(q); err == nil {
			alts = append(alts, alternative{what, nb.TotalBytes})
		}
	}
	// Serving engines run their own fused kernels (FlashAttention,
	// FlashInfer, TurboMind's): no eager alternative.
	if !pinned.Attention && ProfileOf(p.Stack).Preallocates == 0 {
		q := p
		if p.Attention == AttentionEager {
			q.Attention = AttentionSDPA
			try("the attention kernel (fused SDPA/flash keeps no s×s scores)", q)
		} else if p.Mode.Trains() || p.SeqLen > 1024 {
			q.Attention = AttentionEager
			try("the attention kernel (eager attention keeps the s×s scores)", q)
		}
	}
	if !pinned.Stack && p.Mode.Trains() && p.Model.Arch != nil {
		q := p
		if p.Loss == LossFull || p.Loss == LossVocabParallel {
			q.Loss = LossChunked
			try("how the loss is computed (chunked or fused instead of fp32 logits for every position)", q)
		} else {
			q.Loss = LossFull
			try("how the loss is computed (fp32 logits for every position)", q)
		}
	}
	if !pinned.Mixed && p.Mode == Training && p.Precision != "" && p.Precision.Level() == 1 && !p.Optimizer.NoMasterCopy() {
		q := p
		if p.Mixed == MixedPure {
			q.Mixed = MixedAMP
			try("whether training keeps an fp32 master copy (autocast/AMP)", q)
		} else {
			q.Mixed = MixedPure
			try("whether training keeps an fp32 master copy (pure 16-bit weights and optimizer)", q)
		}
	}
	if !pinned.Recompute && ShardedRecipe(p) && p.Recompute == RecomputeFull {
		q := p
		q.Recompute = RecomputeNone
		try("whether activations are checkpointed (sharded recipes turn it on; the HF Trainer's own default is off)", q)
	}
	// The allocator: from no fragmentation to twice the assumed share.
	slack := b.AllocatorBytes
	alts = append(alts, alternative{"the caching allocator's fragmentation", central - slack}, alternative{"the caching allocator's fragmentation", central + slack})
	// The runtime: a CUDA context between 0.3 and 0.7 GiB.
	if b.OverheadBytes > 0 && (p.Backend == "cuda" || p.Backend == "rocm") {
		alts = append(alts, alternative{"the CUDA context's size", central - b.OverheadBytes/3}, alternative{"the CUDA context's size", central + b.OverheadBytes/3})
	}
	// devctl's own error: where runs like this one were measured against
	// the estimate (errorSpread).
	if lo, hi := errorSpread(p); central > 0 {
		alts = append(alts, alternative{SpreadWhat, int64(float64(central) / (1 + hi))}, alternative{SpreadWhat, int64(float64(central) / (1 + lo))})
	}
	band := Band{LowBytes: central, HighBytes: central}
	swing := map[string]int64{}
	for _, a := range alts {
		if a.total < band.LowBytes {
			band.LowBytes, band.LowBy = a.total, a.what
		}
		if a.total > band.HighBytes {
			band.HighBytes, band.HighBy = a.total, a.what
		}
		d := a.total - central
		if d < 0 {
			d = -d
		}
		swing[a.what] = max(swing[a.what], d)
	}
	whats := make([]string, 0, len(swing))
	for w := range swing {
		whats = append(whats, w)
	}
	sort.Slice(whats, func(i, j int) bool {
		if swing[whats[i]] != swing[whats[j]] {
			return swing[whats[i]] > swing[whats[j]]
		}
		return whats[i] < whats[j]
	})
	for i, w := range whats {
		if i == 2 || swing[w] == 0 {
			break
		}
		band.DependsOn = append(band.DependsOn, w)
	}
	return band
}

// SpreadWhat names devctl's own error in a band's DependsOn.
const SpreadWhat = "devctl's own error against published measurements (10th-90th percentile)"

// errorSpread is the 10th and 90th percentile of devctl's signed error,
// (estimate - measured) / measured, on the exact-length measured runs of
// the corpus's training split (testdata/memory), each source weighing one
// whatever its number of rows, by kind of run: a measured run is
// estimate / (1 + e), so the band runs from central / (1 + hi) to
// central / (1 + lo). Refitted when the model changes (the corpus test
// prints the current percentiles and how often the band holds the
// measurement; docs/recommend.md).
func errorSpread(p Plan) (lo, hi float64) {
	prof := ProfileOf(p.Stack)
	switch {
	case p.Mode.Trains():
		return -0.411, 0.284 // 694 runs from 98 sources
	case prof.Preallocates > 0:
		return -0.049, 0.197 // serving engines: 286 runs from 50 sources
	case ggmlStack(p.Stack):
		return -0.215, 0.048 // llama.cpp and Ollama: 185 runs from 36 sources
	}
	return -0.236, 0.084 // other inference: 939 runs from 38 sources
}
