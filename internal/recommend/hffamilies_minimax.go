package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfMiniMax holds the fields of MiniMax's configs (embedded in hfConfig).
// MiniMax-M2's first, remote-code configs (configuration_minimax_m2.py)
// carry use_qk_norm, qk_norm_type, attn_type_list and use_routing_bias;
// the transformers-native ones (MiniMaxM2Config, transformers 5) leave
// them out and always have what they describe.
type hfMiniMax struct {
	QKNormType     string  `json:"qk_norm_type"`
	AttnTypeList   []int64 `json:"attn_type_list"`
	UseRoutingBias *bool   `json:"use_routing_bias"`
}

// countMiniMaxM2 counts MiniMaxM2ForCausalLM (MiniMax-M2, M2.1, M2.5, M2.7;
// model_type minimax_m2) from transformers' modeling_minimax_m2.py: every
// layer full attention (grouped-query, an explicit head_dim, no biases)
// with one RMSNorm over all the query heads (num_attention_heads ×
// head_dim) and one over all the key heads (qk_norm_type "per_layer"),
// then a mixture of num_local_experts SwiGLU experts of intermediate_size,
// num_experts_per_tok a token, behind a bias-free sigmoid router and its
// per-expert e_score_correction_bias (a buffer the checkpoints store); two
// RMSNorms a layer, a final one, an untied head. Rotary embedding on part
// of each head (rotary_dim, partial_rotary_factor) has no parameters. The
// multi-token-prediction modules the config names (use_mtp,
// num_mtp_modules) are not in the released checkpoint and not counted.
func countMiniMaxM2(c hfConfig) (oomsim.Model, error) {
	d, expertFFN, E, topK, err := miniMaxExperts(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	for i, t := range c.AttnTypeList {
		if t != 1 {
			return oomsim.Model{}, fmt.Errorf("attn_type_list[%d] = %d: MiniMax-M2 has full attention (1) in every layer; lightning attention is MiniMax-Text-01's (model_type minimax)", i, t)
		}
	}
	if n := int64(len(c.AttnTypeList)); n != 0 && n != d.L {
		return oomsim.Model{}, fmt.Errorf("attn_type_list has %d entries for %d layers", n, d.L)
	}
	if c.QKNormType != "" && c.QKNormType != "per_layer" {
		return oomsim.Model{}, fmt.Errorf("qk_norm_type %q: only \"per_layer\" (one norm over all heads) is counted", c.QKNormType)
	}
	if err := tooMany(d.L, E, 3*d.h, expertFFN); err != nil {
		return oomsim.Model{}, err
	}
	h := d.h
	d.norms = 2
	d.tied = flag(c.TieWordEmbeddings, false)
	if flag(c.UseQKNorm, true) {
		d.attnExtra = d.heads*d.hd + d.kv*d.hd // q_norm and k_norm over all heads
	}
	bias := int64(0)
	if flag(c.UseRoutingBias, true) {
		bias = E // e_score_correction_bias
	}
	d.experts, d.topK = E, topK
	d.activeFFN = topK * expertFFN
	one := 3 * h * expertFFN
	d.mlp = func(int64) (int64, int64, int64) {
		router := h*E + bias
		return E*one + router, topK*one + router, E * one
	}
	m := d.count()
	m.Notes = append(m.Notes, fmt.Sprintf("minimax_m2: %d experts of %d, %d a token, in every layer; every layer keeps a KV cache of %d heads of %d", E, expertFFN, topK, d.kv, d.hd))
	return m, nil
}

// countMiniMax counts MiniMaxForCausalLM (transformers' minimax: MiniMax-
// Text-01 in transformers' format) and MiniMaxM1ForCausalLM (MiniMax-M1-40k
// and -80k, remote code, model_type minimax_m1). Each layer is either
// lightning (linear) attention, whose qkv_proj (hidden → 3 × heads ×
// head_dim), output_gate (hidden → heads × head_dim), out_proj and RMSNorm
// over heads × head_dim keep a fixed-size state instead of a KV cache, or
// full grouped-query attention (q, k, v and o, no biases) with a KV cache;
// layer_types ("linear_attention"/"full_attention") or the remote code's
// attn_type_list (0/1) say which, and left out transformers' default
// alternates them (full first). Every layer then routes among
// num_local_experts SwiGLU experts of intermediate_size behind a bias-free
// router; two RMSNorms a layer (the alpha/beta residual factors are
// scalars), a final one, an untied head. The lightning layers' slope and
// decay buffers are not parameters and not counted. A shared expert
// (shared_intermediate_size) is refused: no released config has one.
func countMiniMax(c hfConfig, family string) (oomsim.Model, error) {
	d, expertFFN, E, topK, err := miniMaxExperts(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	full := make([]bool, d.L)
	switch {
	case len(c.LayerTypes) > 0:
		if int64(len(c.LayerTypes)) != d.L {
			return oomsim.Model{}, fmt.Errorf("layer_types has %d entries for %d layers", len(c.LayerTypes), d.L)
		}
		for i, t := range c.LayerTypes {
			switch t {
			case "full_attention":
				full[i] = true
			case "linear_attention":
			default:
				return oomsim.Model{}, fmt.Errorf("layer_types[%d] = %q: not full_attention or linear_attention", i, t)
			}
		}
	case len(c.AttnTypeList) > 0:
		if int64(len(c.AttnTypeList)) != d.L {
			return oomsim.Model{}, fmt.Errorf("attn_type_list has %d entries for %d layers", len(c.AttnTypeList), d.L)
		}
		for i, t := range c.AttnTypeList {
			if t != 0 && t != 1 {
				return oomsim.Model{}, fmt.Errorf("attn_type_list[%d] = %d: not 0 (lightning) or 1 (full attention)", i, t)
			}
			full[i] = t == 1
		}
	default:
		for i := range full {
			full[i] = i%2 == 0
		}
	}
	if err := tooMany(d.L, E, 3*d.h, expertFFN); err != nil {
		return oomsim.Model{}, err
	}
	h, inner := d.h, d.heads*d.hd
	d.norms = 2
	d.tied = flag(c.TieWordEmbeddings, false)
	d.experts, d.topK = E, topK
	d.activeFFN = topK * expertFFN
	one := 3 * h * expertFFN
	d.mlp = func(int64) (int64, int64, int64) {
		return E*one + h*E, topK*one + h*E, E * one
	}
	m := d.count()
	// d.count gave every layer full attention; a lightning layer has
	// qkv_proj, output_gate, out_proj and its norm instead.
	fullAttn := h*inner + 2*h*d.kv*d.hd + inner*h
	lightning := h*3*inner + h*inner + inner*h
	var nFull int64
	for _, isFull := range full {
		if isFull {
			nFull++
		}
	}
	nLin := d.L - nFull
	delta := nLin * (lightning + inner - fullAttn)
	m.Params += delta
	m.ActiveParams += delta
	m.UnquantizedParams += nLin * inner
	m.Arch.KVLayers = int(nFull)
	m.Notes = append(m.Notes, fmt.Sprintf("%s: %d of %d layers are full attention with a KV cache; the %d lightning-attention layers keep a fixed state of %d heads of %d x %d per sequence instead (not estimated)", family, nFull, d.L, nLin, d.heads, d.hd, d.hd))
	return m, nil
}

// miniMaxExperts reads what both MiniMax generations share: the decoder's
// shape and heads, the experts' width, count and top-k. A shared expert
// (shared_intermediate_size) is refused: no released config has one.
func miniMaxExperts(c hfConfig) (d decoder, expertFFN, E, topK int64, err error) {
	var f fields
	d = standardShape(c, &f)
	if err := d.checkHeads(c, &f); err != nil {
		return d, 0, 0, 0, err
	}
	expertFFN = f.need("intermediate_size", c.IntermediateSize)
	E = f.need("num_local_experts", c.NumLocalExperts)
	topK = f.need("num_experts_per_tok", c.NumExpertsPerTok)
	if f.err != nil {
		return d, 0, 0, 0, f.err
	}
	if topK > E {
		return d, 0, 0, 0, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if v := c.SharedIntermediateSize; v != nil && *v != 0 {
		return d, 0, 0, 0, fmt.Errorf("shared_intermediate_size %d: MiniMax has no shared expert, and a config with one is not counted", *v)
	}
	return d, expertFFN, E, topK, nil
}
