package recommend

import (
	"github.com/devctl/devctl/internal/oomsim"
)

// countGLM4MoE counts Glm4MoeForCausalLM (GLM-4.5, GLM-4.5-Air): grouped-query
// attention with an explicit head_dim, biases on q, k and v
// (attention_bias) and none on o_proj, per-head q/k RMSNorms when
// use_qk_norm is set; the first first_k_dense_replace blocks a dense gated
// MLP of intermediate_size, the rest n_routed_experts experts of
// moe_intermediate_size with a router, its per-expert score-correction
// bias and n_shared_experts shared experts; RMSNorms and an untied head.
// The multi-token-prediction layer the checkpoints store
// (num_nextn_predict_layers) is not loaded by transformers and not counted.
func countGLM4MoE(c hfConfig) (oomsim.Model, error) {
	var f fields
	d, ffn, err := shapedDecoder(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	x := readRoutedExperts(c, &f)
	expertFFN, E, nShared, topK, firstDense := x.expertFFN, x.E, x.nShared, x.topK, x.firstDense
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := x.check(); err != nil {
		return oomsim.Model{}, err
	}
	if err := tooMany(d.L, E+nShared, 3*d.h, max(expertFFN, ffn)); err != nil {
		return oomsim.Model{}, err
	}
	h := d.h
	d.norms = 2
	d.qkvBias = flag(c.AttentionBias, false)
	d.qkNorm = flag(c.UseQKNorm, false)
	d.tied = flag(c.TieWordEmbeddings, false)
	d.experts, d.topK = E, topK
	d.activeFFN = (topK + nShared) * expertFFN
	d.expertFFN = expertFFN
	d.mlp = func(i int64) (int64, int64, int64) {
		if i < firstDense {
			p := 3 * h * ffn
			return p, p, p
		}
		one := 3 * h * expertFFN
		router := h*E + E // gate weight and e_score_correction_bias
		return E*one + router + nShared*one, topK*one + router + nShared*one, (E + nShared) * one
	}
	m := d.count()
	m.Notes = append(m.Notes, "glm4_moe: the multi-token-prediction layer the checkpoint stores is not counted")
	return m, nil
}
