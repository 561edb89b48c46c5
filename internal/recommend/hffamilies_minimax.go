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
	var f fields
	d := standardShape(c, &f)
	if err := d.checkHeads(c, &f); err != nil {
		return oomsim.Model{}, err
	}
	expertFFN := f.need("intermediate_size", c.IntermediateSize)
	E := f.need("num_local_experts", c.NumLocalExperts)
	topK := f.need("num_experts_per_tok", c.NumExpertsPerTok)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if v := c.SharedIntermediateSize; v != nil && *v != 0 {
		return oomsim.Model{}, fmt.Errorf("shared_intermediate_size %d: MiniMax-M2 has no shared expert, and a config with one is not counted", *v)
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
