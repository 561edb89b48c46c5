package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countLFM2MoE counts Lfm2MoeForCausalLM (LiquidAI LFM2-8B-A1B,
// LFM2-24B-A2B; model_type lfm2_moe), from transformers'
// modeling_lfm2_moe.py. Its layers are LFM2's (countLFM2): attention
// (q, k, v, out_proj, RMSNorms of head_dim on q and k) or a gated short
// convolution (in_proj to 3 × hidden, a depthwise Conv1d of conv_L_cache
// taps, out_proj; biases with conv_bias), as layer_types says, with two
// RMSNorms each. The first num_dense_layers layers have a SwiGLU MLP of
// intermediate_size as given (no block_ff_dim adjustment, unlike LFM2);
// the others num_experts SwiGLU experts of moe_intermediate_size,
// num_experts_per_tok a token, behind a bias-free sigmoid router (its
// expert_bias is a buffer, not counted, as the Hub's count leaves it out).
// Then the final RMSNorm (embedding_norm) and the head, tied unless
// tie_word_embeddings is false. Left out, Lfm2MoeConfig's defaults apply:
// 8 KV heads, conv_L_cache 3, 2 dense layers, 32 experts of 1792, 4 a
// token, tied. LFM2-8B-A1B counts 8,339,929,856, the Hub's count.
//
// Only the attention layers keep a KV cache.
func countLFM2MoE(c hfConfig) (oomsim.Model, error) {
	var f fields
	d, err := lfm2Shape(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	kernel := f.opt("conv_L_cache", c.ConvLCache, 3)
	E := f.opt("num_experts", c.NumExperts, 32)
	topK := f.opt("num_experts_per_tok", c.NumExpertsPerTok, 4)
	expertFFN := f.opt("moe_intermediate_size", c.MoEIntermediateSize, 1792)
	var nDense int64
	if c.NumDenseLayers == nil || *c.NumDenseLayers != 0 {
		nDense = f.opt("num_dense_layers", c.NumDenseLayers, 2)
	}
	var ffn int64
	if nDense > 0 {
		ffn = f.need("intermediate_size", c.IntermediateSize)
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if nDense > d.L {
		return oomsim.Model{}, fmt.Errorf("num_dense_layers %d is more than the %d layers", nDense, d.L)
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	attention, err := lfm2Attention(c, d.L)
	if err != nil {
		return oomsim.Model{}, err
	}
	if err := tooMany(d.L, E+1, 3*d.h, max(expertFFN, ffn, 2*d.h+kernel, (d.heads+d.kv)*d.hd)); err != nil {
		return oomsim.Model{}, err
	}
	h := d.h
	attn, attnLinear, conv, convLinear := lfm2Mixers(c, h, d.heads*d.hd, d.kv*d.hd, d.hd, kernel)
	denseMLP := 3 * h * ffn
	one := 3 * h * expertFFN
	router := E * h
	var nAttn, body, active, linear int64
	for i, a := range attention {
		mixer, mixerLinear := conv, convLinear
		if a {
			nAttn++
			mixer, mixerLinear = attn, attnLinear
		}
		body += mixer + 2*h
		active += mixer + 2*h
		linear += mixerLinear
		if int64(i) < nDense {
			body += denseMLP
			active += denseMLP
			linear += denseMLP
		} else {
			body += E*one + router
			active += topK*one + router
			linear += E * one
		}
	}
	var m oomsim.Model
	emb := d.vocab * h
	m.Params = emb + body + h
	m.ActiveParams = emb + active + h
	if !flag(c.TieWordEmbeddings, true) {
		m.HeadParams = emb
		m.Params += emb
		m.ActiveParams += emb
	}
	m.UnquantizedParams = m.Params - linear
	m.BufferBytes = d.hd / 2 * 4
	m.Experts, m.ExpertsPerToken = int(E), int(topK)
	if nDense == d.L { // no layer routes
		m.ActiveParams, m.Experts, m.ExpertsPerToken = 0, 0, 0
	}
	activeFFN := topK * expertFFN
	if nDense == d.L {
		activeFFN = ffn
	} else if nDense > 0 {
		activeFFN = max(ffn, activeFFN)
	}
	m.Arch = &oomsim.Arch{Layers: int(d.L), KVLayers: int(nAttn), Hidden: int(h), Heads: int(d.heads), KVHeads: int(d.kv),
		HeadDim: int(d.hd), FFN: int(activeFFN), Vocab: int(d.vocab), MaxPositions: int(d.maxPos), Gated: true}
	m.Notes = append(m.Notes, fmt.Sprintf("lfm2_moe: %d of %d layers are attention and keep a KV cache, the other %d short convolutions; %d layers route among %d experts (%d a token)",
		nAttn, d.L, d.L-nAttn, d.L-nDense, E, topK))
	return m, nil
}
