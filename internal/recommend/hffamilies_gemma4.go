package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countGemma4 counts Gemma 4 (model_type gemma4, its language model in
// text_config, or gemma4_text alone) as transformers' modular_gemma4.py
// builds it:
//
//   - every block: four RMSNorms (Gemma 3's), q_proj and o_proj, per-head q
//     and k RMSNorms with a scale (the v norm has none), and a GeGLU MLP of
//     intermediate_size (twice that for the KV-sharing layers with
//     use_double_wide_mlp);
//   - sliding layers: num_key_value_heads heads of head_dim for k and v;
//     full layers: global_head_dim heads, num_global_key_value_heads of them
//     with attention_k_eq_v, whose values are their keys (no v_proj);
//   - the last num_kv_shared_layers blocks reuse an earlier block's keys and
//     values: no k or v projection, no k norm, no cache of their own;
//   - enable_moe_block adds a mixture of experts beside the MLP: a router
//     (an unscaled norm, a hidden × experts projection, a scale per hidden
//     unit and per expert), experts with a fused gate-up and a down matrix
//     of moe_intermediate_size, and three more RMSNorms;
//   - hidden_size_per_layer_input (the small E2B/E4B models' per-layer
//     embeddings): a vocab_size_per_layer_input table of layers ×
//     per-layer width, its projection from the hidden state and norm, and in
//     each block a gate, a projection back and a norm;
//   - the embedding, tied to the head unless tie_word_embeddings is false,
//     and a final norm.
//
// The vision encoder (gemma4VisionParams) and its projection into the
// language model are counted; an audio encoder is not. Exact against
// Gemma-4-31B-it (31,273,086,512 with its vision encoder, the bnb-4bit
// re-upload's count) and Gemma-4-26B-A4B-it (25,805,933,872, as
// transformers built it in a training log; testdata/models/README.md).
func countGemma4(c hfConfig, family string) (oomsim.Model, error) {
	tc := c
	if family == "gemma4" {
		if c.TextConfig == nil {
			return oomsim.Model{}, fmt.Errorf("no text_config")
		}
		tc = *c.TextConfig
		if c.TieWordEmbeddings != nil {
			tc.TieWordEmbeddings = c.TieWordEmbeddings
		}
	}
	m, err := countGemma4Text(tc)
	if err != nil || family == "gemma4_text" {
		return m, err
	}
	if c.AudioConfig != nil {
		m.Notes = append(m.Notes, "gemma4: the audio encoder is not counted")
	}
	n, err := gemma4VisionParams(c.VisionConfig, int64(m.Arch.Hidden))
	if err != nil {
		m.Notes = append(m.Notes, "gemma4: the language model only; the vision encoder is not counted: "+err.Error())
		return m, nil
	}
	return withVisionTower(m, family, n), nil
}

func countGemma4Text(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	heads := f.need("num_attention_heads", c.NumAttentionHeads)
	kv := f.opt("num_key_value_heads", c.NumKeyValueHeads, heads)
	hd := f.need("head_dim", c.HeadDim)
	ghd := f.opt("global_head_dim", c.GlobalHeadDim, hd)
	ffn := f.need("intermediate_size", c.IntermediateSize)
	V := f.need("vocab_size", c.VocabSize)
	shared := f.optZero("num_kv_shared_layers", c.NumKVSharedLayers)
	ple := f.optZero("hidden_size_per_layer_input", c.HiddenSizePerLayerInput)
	kEqV := flag(c.AttentionKEqV, false)
	gkv := kv
	if kEqV {
		gkv = f.opt("num_global_key_value_heads", c.NumGlobalKeyValueHeads, kv)
	}
	var E, topK, moeFFN int64
	moe := flag(c.EnableMoEBlock, false)
	if moe {
		E = f.need("num_experts", c.NumExperts)
		topK = f.need("top_k_experts", c.TopKExperts)
		moeFFN = f.need("moe_intermediate_size", c.MoEIntermediateSize)
	}
	pleV := int64(0)
	if ple > 0 {
		pleV = f.opt("vocab_size_per_layer_input", c.VocabSizePerLayerInput, V)
	}
	maxPos, _ := opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if int64(len(c.LayerTypes)) != L {
		return oomsim.Model{}, fmt.Errorf("layer_types has %d entries for %d layers", len(c.LayerTypes), L)
	}
	if shared > L || topK > E || kv == 0 || gkv == 0 || heads%kv != 0 || heads%gkv != 0 {
		return oomsim.Model{}, fmt.Errorf("heads %d, key/value heads %d and %d, shared layers %d of %d, experts %d of %d do not fit together",
			heads, kv, gkv, shared, L, topK, E)
	}
	for _, err := range []error{tooMany(L, heads, max(hd, ghd), h), tooMany(L, 3*h, 2*max(ffn, 1)), tooMany(L, E, 3*h, max(moeFFN, 1)),
		tooMany(pleV+h, L, max(ple, 1)), tooMany(V, h)} {
		if err != nil {
			return oomsim.Model{}, err
		}
	}
	var body, linear, expertsAll, expertsActive int64
	for i := range L {
		sliding := c.LayerTypes[i] == "sliding_attention"
		d, nkv := hd, kv
		if !sliding {
			d = ghd
			if kEqV {
				nkv = gkv
			}
		}
		kvShared := i >= L-shared
		lin := 2 * h * heads * d // q_proj, o_proj
		norms := 4*h + d         // the block's four norms, the q norm
		if !kvShared {
			lin += h * nkv * d // k_proj
			norms += d         // the k norm
			if sliding || !kEqV {
				lin += h * nkv * d // v_proj
			}
		}
		width := ffn
		if kvShared && flag(c.UseDoubleWideMLP, false) {
			width *= 2
		}
		lin += 3 * h * width
		if moe {
			experts := E * 3 * h * moeFFN
			lin += h*E + experts // the router's projection, the experts
			norms += h + E + 3*h // its scales, the three norms around it
			expertsAll += experts
			expertsActive += topK * 3 * h * moeFFN
		}
		if ple > 0 {
			lin += 2 * h * ple // the per-layer input's gate and projection
			norms += h
		}
		body += lin + norms
		linear += lin
	}
	emb := V * h
	extra := int64(0)
	if ple > 0 {
		extra = pleV*L*ple + h*L*ple + ple // the per-layer table, its projection and norm
		linear += h * L * ple
	}
	var m oomsim.Model
	m.Params = emb + extra + body + h
	if !flag(c.TieWordEmbeddings, true) {
		m.HeadParams = V * h
		m.Params += m.HeadParams
	}
	if moe {
		m.ActiveParams = m.Params - expertsAll + expertsActive
		m.Experts, m.ExpertsPerToken = int(E), int(topK)
	}
	m.UnquantizedParams = m.Params - linear
	m.BufferBytes = max(hd, ghd) / 2 * 4
	activeFFN := ffn
	if moe {
		activeFFN += topK * moeFFN
	}
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L - shared), Hidden: int(h), Heads: int(heads), KVHeads: int(kv),
		HeadDim: int(hd), FFN: int(activeFFN), Vocab: int(V), MaxPositions: int(maxPos), Gated: true}
	if ghd != hd || gkv != kv {
		m.Arch.FullKVHeads, m.Arch.FullHeadDim = int(gkv), int(ghd)
	}
	// The KV-sharing layers keep no cache: the window's layers are counted
	// among the others.
	m.Arch.SlidingWindow, m.Arch.SlidingLayers = slidingLayers(c.hfSliding, c.LayerTypes[:L-shared], "gemma4", m.Arch.KVLayers)
	return m, nil
}

// gemma4VisionParams counts Gemma 4's vision encoder and its projection:
// a bias-free Linear from each patch's 3 × patch_size² pixels, a learned
// position table per image axis (2 × position_embedding_size rows),
// num_hidden_layers blocks as Gemma 3's (four RMSNorms, q, k, v and o
// without biases, q and k norms with a scale, a GeGLU MLP of
// intermediate_size), and the bias-free projection from its hidden size to
// the language model's (Gemma4MultimodalEmbedder, after an unscaled norm).
// The standardisation buffers (std_bias, std_scale) are not parameters.
func gemma4VisionParams(v *qwenVision, textHidden int64) (int64, error) {
	if v == nil {
		return 0, fmt.Errorf("no vision_config")
	}
	var f fields
	d := f.need("hidden_size", v.HiddenSize)
	layers := f.need("num_hidden_layers", v.NumHiddenLayers)
	heads := f.need("num_attention_heads", v.NumAttentionHeads)
	kv := f.opt("num_key_value_heads", v.NumKeyValueHeads, heads)
	ffn := f.need("intermediate_size", v.IntermediateSize)
	patch := f.opt("patch_size", v.PatchSize, 16)
	pos := f.need("position_embedding_size", v.PositionEmbeddingSize)
	if f.err != nil {
		return 0, f.err
	}
	if v.HeadDim == nil {
		if err := headsFit(heads, d, "num_attention_heads", "hidden_size"); err != nil {
			return 0, err
		}
	}
	hd := f.opt("head_dim", v.HeadDim, d/max(heads, 1))
	if f.err != nil {
		return 0, f.err
	}
	for _, err := range []error{tooMany(layers, d, max(heads, kv)*hd+ffn), tooMany(3*patch*patch+2*pos+textHidden, d)} {
		if err != nil {
			return 0, err
		}
	}
	block := 4*d + 2*d*heads*hd + 2*d*kv*hd + 2*hd + 3*d*ffn
	return 3*patch*patch*d + 2*pos*d + layers*block + d*textHidden, nil
}

// optZero is opt for a count that may be 0 (Gemma 4 writes 0 for the
// per-layer inputs and the KV-sharing layers it does not have).
func (f *fields) optZero(name string, v *int64) int64 {
	if v != nil && *v == 0 {
		return 0
	}
	return f.opt(name, v, 0)
}
