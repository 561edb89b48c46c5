package oomsim

import (
	"fmt"
	"math"
)

// RefShape is a published architecture that a bare parameter count's
// shape is derived from. The values are those of the model's config.json
// (configs/models.yaml holds the same models; a test keeps them equal).
type RefShape struct {
	Name    string
	Params  int64
	Layers  int
	Hidden  int
	Heads   int
	KVHeads int
	HeadDim int
	FFN     int
	Vocab   int
	// Gated is a SwiGLU/GeGLU MLP (three matrices) rather than two.
	Gated bool
	// Tied shares the input embedding with the LM head.
	Tied bool
}

// RefShapes are decoder-only language models from 124M to 70B, smallest
// first; AssumeArch interpolates between two of them. They are current
// designs whose vocabulary never shrinks much as models grow (GPT-2's 50k,
// then the 128-152k of Qwen2.5 and Llama 3), so that a bigger bare count
// never gets a much smaller estimate; older designs with 32k vocabularies
// and no grouped-query attention (Llama 2, Mistral 7B, phi-2) are left
// out for that reason and give --model for their exact shape.
var RefShapes = []RefShape{
	{"gpt2", 124_439_808, 12, 768, 12, 12, 64, 3072, 50257, false, true},
	{"gpt2-medium", 354_823_168, 24, 1024, 16, 16, 64, 4096, 50257, false, true},
	{"qwen2.5-0.5b", 494_032_768, 24, 896, 14, 2, 64, 4864, 151936, true, true},
	{"llama-3-8b", 8_030_261_248, 32, 4096, 32, 8, 128, 14336, 128256, true, false},
	{"llama-3-70b", 70_553_706_496, 80, 8192, 64, 8, 128, 28672, 128256, true, false},
}

// shapeParams counts a decoder of this shape the way the config counters
// do: embeddings (and an untied head), attention with GQA, a two- or
// three-matrix MLP, two norms per block and a final norm (biases and
// learned positions left out).
func shapeParams(L, h, heads, kv, hd, ffn, V int, gated, tied bool) float64 {
	mats, emb := 2.0, 2.0
	if gated {
		mats = 3
	}
	if tied {
		emb = 1
	}
	return shapeCount(L, h, heads, kv, hd, ffn, V, mats, emb)
}

// shapeCount is shapeParams with the MLP's matrix count and the number of
// vocabulary matrices as numbers, so that they can be interpolated.
func shapeCount(L, h, heads, kv, hd, ffn, V int, mats, embMats float64) float64 {
	fh, q, k := float64(h), float64(heads*hd), float64(kv*hd)
	per := fh*q + 2*fh*k + q*fh + mats*fh*float64(ffn) + 2*fh
	return embMats*float64(V)*fh + float64(L)*per + fh
}

// AssumeArch derives a shape for a bare parameter count from the published
// architectures around it (RefShapes): the width-to-depth ratio, MLP
// ratio, grouped-query ratio, head size, vocabulary (geometrically), MLP
// kind and embedding tying are interpolated in log(parameters) between the
// two neighbours. The depth is then chosen so that the shape
// counts as close to the given total as possible. A 7B gets 32 layers of
// 4096, not a GPT-3-like 52 × 3328. The result is marked Assumed and says
// which models it came from.
func AssumeArch(params int64) *Arch {
	a, _ := assume(params)
	return a
}

// AssumeArchNote is AssumeArch with a sentence saying what it was derived from.
func AssumeArchNote(params int64) (*Arch, string) { return assume(params) }

func assume(params int64) (*Arch, string) {
	refs := RefShapes
	P := math.Max(float64(params), 1)
	lo, hi := refs[0], refs[len(refs)-1]
	t := 0.0
	switch {
	case P <= float64(lo.Params):
		hi = lo
	case P >= float64(hi.Params):
		lo = hi
	default:
		for i := 0; i+1 < len(refs); i++ {
			if P >= float64(refs[i].Params) && P < float64(refs[i+1].Params) {
				lo, hi = refs[i], refs[i+1]
				break
			}
		}
		t = math.Log(P/float64(lo.Params)) / math.Log(float64(hi.Params)/float64(lo.Params))
	}
	lerp := func(x, y float64) float64 { return x + t*(y-x) }
	logLerp := func(x, y float64) float64 { return math.Exp(lerp(math.Log(x), math.Log(y))) }
	frac := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	// Every ratio moves continuously with the count, so a slightly bigger
	// model never gets a much smaller shape. Depth is interpolated too
	// (beyond the ends it grows with the cube root of the count, as width
	// and depth both do); the width is then what makes the count right.
	layers := lerp(float64(lo.Layers), float64(hi.Layers))
	if P < float64(lo.Params) || P > float64(hi.Params) {
		layers = float64(lo.Layers) * math.Cbrt(P/float64(lo.Params))
	}
	L := max(1, int(math.Round(layers)))
	ffnRatio := lerp(float64(lo.FFN)/float64(lo.Hidden), float64(hi.FFN)/float64(hi.Hidden))
	kvRatio := lerp(float64(lo.KVHeads)/float64(lo.Heads), float64(hi.KVHeads)/float64(hi.Heads))
	hd := int(math.Round(lerp(float64(lo.HeadDim), float64(hi.HeadDim))/16)) * 16
	vocab := int(math.Round(logLerp(float64(lo.Vocab), float64(hi.Vocab))))
	mats := 2 + lerp(frac(lo.Gated), frac(hi.Gated))
	embMats := 2 - lerp(frac(lo.Tied), frac(hi.Tied)) // 1 tied, 2 untied

	best, bestErr := (*Arch)(nil), math.Inf(1)
	for nh := 1; nh <= 4096; nh++ {
		// The KV heads follow the interpolated grouped-query ratio; an
		// assumed shape need not divide them evenly.
		kvHeads := max(1, int(math.Round(float64(nh)*kvRatio)))
		h := nh * hd
		ffn := max(64, int(math.Round(ffnRatio*float64(h)/64))*64)
		n := shapeCount(L, h, nh, kvHeads, hd, ffn, vocab, mats, embMats)
		if e := math.Abs(n-P) / P; e < bestErr {
			bestErr = e
			best = &Arch{Layers: L, KVLayers: L, Hidden: h, Heads: nh, KVHeads: kvHeads, HeadDim: hd, FFN: ffn, Vocab: vocab, Gated: mats >= 2.5, Assumed: true}
		}
		if n > 2*P {
			break
		}
	}
	from := lo.Name
	if hi.Name != lo.Name {
		from = lo.Name + " and " + hi.Name
	}
	note := fmt.Sprintf("shape assumed from published architectures of similar size (%s): %d layers, hidden %d, %d heads (%d KV), vocabulary %d; give --model or --model-config for the real one",
		from, best.Layers, best.Hidden, best.Heads, best.KVHeads, best.Vocab)
	return best, note
}
