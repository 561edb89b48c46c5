package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countBailingMoE counts inclusionAI's Ling and Ring models (model_type
// bailing_moe, remote code). Two generations share the name:
// modeling_bailing_moe.py (Ling-lite, Ling-plus, Ling-Coder-lite) and
// modeling_bailing_moe_v2.py (Ling-mini-2.0, Ling-flash-2.0, Ling-1T and
// the Ring-2.0 models), both counted from one shape:
//
//   - attention: a fused query_key_value projection (a bias with
//     use_qkv_bias) and the output projection "dense" (a bias with
//     use_bias, whose default in BailingMoeConfig is true); with
//     use_qk_norm (Ling 2.0) an RMSNorm of head_dim on the queries and on
//     the keys;
//   - the first first_k_dense_replace layers a SwiGLU MLP of
//     intermediate_size, the others num_experts SwiGLU experts of
//     moe_intermediate_size (num_experts_per_tok a token) behind a
//     bias-free router, beside a shared SwiGLU MLP of num_shared_experts ×
//     moe_intermediate_size; without num_experts every layer is dense.
//     Ling 2.0's router keeps a per-expert expert_bias (a persistent
//     buffer, so stored in the checkpoint and in the Hub's count), counted
//     when moe_router_enable_expert_bias is set;
//   - two RMSNorms a block, a final RMSNorm, an untied head unless
//     tie_word_embeddings (norm_head rescales the head, no parameter);
//   - Ling 2.0's num_nextn_predict_layers multi-token-prediction layers,
//     which modeling_bailing_moe_v2.py builds after the decoder: each an
//     attention, a mixture of experts, eh_proj (2 × hidden to hidden) and
//     five RMSNorms. The published checkpoints set none.
//
// Ling-lite counts 16,801,974,272 and Ling-mini-2.0 16,255,643,392, the
// Hub's counts.
func countBailingMoE(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := standardShape(c, &f)
	if c.NumKeyValueHeads == nil { // BailingMoeConfig's default, 0, is no head count
		f.need("num_key_value_heads", nil)
	}
	if err := d.checkHeads(c, &f); err != nil {
		return oomsim.Model{}, err
	}
	var E, topK, expertFFN, shared, ffn int64
	moe := c.NumExperts != nil
	var firstDense int64
	if c.FirstKDenseReplace != nil && *c.FirstKDenseReplace != 0 {
		firstDense = f.need("first_k_dense_replace", c.FirstKDenseReplace)
	}
	if moe {
		E = f.need("num_experts", c.NumExperts)
		topK = f.need("num_experts_per_tok", c.NumExpertsPerTok)
		expertFFN = f.need("moe_intermediate_size", c.MoEIntermediateSize)
		if c.NumSharedExperts != nil && *c.NumSharedExperts != 0 {
			shared = f.need("num_shared_experts", c.NumSharedExperts)
		}
	}
	if !moe || firstDense > 0 {
		ffn = f.need("intermediate_size", c.IntermediateSize)
	}
	var mtp int64
	if c.NumNextNPredictLayers != nil && *c.NumNextNPredictLayers != 0 {
		mtp = f.need("num_nextn_predict_layers", c.NumNextNPredictLayers)
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if mtp > 0 && !moe {
		return oomsim.Model{}, fmt.Errorf("num_nextn_predict_layers %d without num_experts: the prediction layers are mixtures of experts", mtp)
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if shared > maxHeads || mtp > maxLayers {
		return oomsim.Model{}, fmt.Errorf("num_shared_experts %d or num_nextn_predict_layers %d is out of range", shared, mtp)
	}
	if err := tooMany(d.L+mtp, E+shared+1, 3*d.h, max(ffn, expertFFN, (d.heads+2*d.kv)*d.hd)); err != nil {
		return oomsim.Model{}, err
	}
	d.norms = 2
	d.qkNorm = flag(c.UseQKNorm, false)
	d.qkvBias = flag(c.UseQKVBias, false)
	d.oBias = flag(c.UseBias, true) // the bias of "dense"
	d.tied = flag(c.TieWordEmbeddings, false)
	h := d.h
	denseMLP := dense(h, ffn, false)
	one := 3 * h * expertFFN
	sharedMLP := 3 * h * shared * expertFFN
	router := E * h
	if flag(c.RouterExpertBias, false) {
		router += E
	}
	moeBlock := func() (int64, int64, int64) {
		return E*one + router + sharedMLP, topK*one + router + sharedMLP, E*one + sharedMLP
	}
	d.mlp = func(i int64) (int64, int64, int64) {
		if !moe || i < firstDense {
			return denseMLP(i)
		}
		return moeBlock()
	}
	if moe {
		d.experts, d.topK = E, topK
		d.activeFFN = (topK + shared) * expertFFN
		if firstDense > 0 {
			d.activeFFN = max(ffn, d.activeFFN)
		}
	} else {
		d.activeFFN = ffn
	}
	m := d.count()
	if mtp > 0 {
		q, k := d.heads*d.hd, d.kv*d.hd
		attnLinear := 2*h*q + 2*h*k
		attn := attnLinear
		if d.qkvBias {
			attn += q + 2*k
		}
		if d.oBias {
			attn += h
		}
		if d.qkNorm {
			attn += 2 * d.hd
		}
		p, a, lin := moeBlock()
		layer := attn + p + 2*h*h + 5*h
		m.Params += mtp * layer
		m.ActiveParams += mtp * (attn + a + 2*h*h + 5*h)
		m.UnquantizedParams += mtp * (layer - attnLinear - lin - 2*h*h)
		m.Notes = append(m.Notes, fmt.Sprintf("bailing_moe: %d multi-token-prediction layers counted (resident, not run for plain decoding)", mtp))
	}
	if moe {
		m.Notes = append(m.Notes, fmt.Sprintf("bailing_moe: %d of %d layers route among %d experts (%d a token) beside a shared MLP of %d",
			d.L-min(firstDense, d.L), d.L, E, topK, shared*expertFFN))
	}
	return m, nil
}
