package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfErnieMoE holds the mixture-of-experts fields of Baidu's ERNIE 4.5 MoE
// models (embedded in hfConfig; moe_intermediate_size is hfConfig's).
type hfErnieMoE struct {
	MoENumExperts       *int64 `json:"moe_num_experts"`
	MoEK                *int64 `json:"moe_k"`
	MoENumSharedExperts *int64 `json:"moe_num_shared_experts"`
	MoELayerStartIndex  *int64 `json:"moe_layer_start_index"`
	MoELayerEndIndex    *int64 `json:"moe_layer_end_index"`
	MoELayerInterval    *int64 `json:"moe_layer_interval"`
}

// countErnieMoE counts Ernie4_5_MoeForCausalLM (ERNIE-4.5-21B-A3B,
// ERNIE-4.5-300B-A47B; model_type ernie4_5_moe), from transformers'
// modeling_ernie4_5_moe.py: ERNIE 4.5's attention (q, k, v and o with
// use_bias) and, in the layers i with (i+1) % moe_layer_interval == 0 and
// moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer),
// moe_num_experts SwiGLU experts of moe_intermediate_size, moe_k a token,
// behind a bias-free router and its per-expert score correction (a
// parameter the checkpoints store), beside a shared SwiGLU MLP of
// moe_num_shared_experts × moe_intermediate_size (biases with use_bias);
// the other layers a dense MLP of intermediate_size. Left out, the class
// defaults apply (4 KV heads, 64 experts, 6 a token, 1536, 2 shared, from
// layer 1 to the last, every layer; tied embeddings). ERNIE-4.5-21B-A3B
// counts 21,825,437,888, the Hub's count of ERNIE-4.5-21B-A3B-Thinking.
func countErnieMoE(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 2}
	d.h = f.need("hidden_size", c.HiddenSize)
	d.L = f.need("num_hidden_layers", c.NumHiddenLayers)
	d.heads = f.need("num_attention_heads", c.NumAttentionHeads)
	d.kv = f.opt("num_key_value_heads", c.NumKeyValueHeads, 4)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.maxPos, _ = opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if err := d.checkHeads(c, &f); err != nil {
		return oomsim.Model{}, err
	}
	ffn := f.need("intermediate_size", c.IntermediateSize)
	E := f.opt("moe_num_experts", c.MoENumExperts, 64)
	topK := f.opt("moe_k", c.MoEK, 6)
	expertFFN := f.opt("moe_intermediate_size", c.MoEIntermediateSize, 1536)
	var shared int64
	if c.MoENumSharedExperts == nil || *c.MoENumSharedExperts != 0 {
		shared = f.opt("moe_num_shared_experts", c.MoENumSharedExperts, 2)
	}
	interval := f.opt("moe_layer_interval", c.MoELayerInterval, 1)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	start, end := int64(1), d.L-1
	if v := c.MoELayerStartIndex; v != nil {
		start = *v
	}
	if v := c.MoELayerEndIndex; v != nil && *v != -1 {
		end = *v
	}
	if start < 0 || start > maxLayers || end < 0 || end > maxLayers {
		return oomsim.Model{}, fmt.Errorf("moe_layer_start_index %d and moe_layer_end_index %d are out of range", start, end)
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("moe_k %d is more than the %d experts", topK, E)
	}
	if err := tooMany(d.L, E+shared+1, 3*d.h, max(expertFFN, ffn)); err != nil {
		return oomsim.Model{}, err
	}
	bias := flag(c.UseBias, false)
	d.qkvBias, d.oBias = bias, bias
	d.tied = flag(c.TieWordEmbeddings, true)
	d.headBias = bias
	h := d.h
	sharedFFN := shared * expertFFN
	denseMLP := dense(h, ffn, bias)
	sharedMLP := dense(h, sharedFFN, bias)
	isMoE := func(i int64) bool { return (i+1)%interval == 0 && i >= start && i <= end }
	one := 3 * h * expertFFN
	var nMoE int64
	for i := range d.L {
		if isMoE(i) {
			nMoE++
		}
	}
	d.mlp = func(i int64) (int64, int64, int64) {
		if !isMoE(i) {
			return denseMLP(i)
		}
		sp, sa, sl := int64(0), int64(0), int64(0)
		if shared > 0 {
			sp, sa, sl = sharedMLP(i)
		}
		router := E*h + E
		return E*one + router + sp, topK*one + router + sa, E*one + sl
	}
	if nMoE > 0 {
		d.experts, d.topK = E, topK
		d.activeFFN = max(ffn, topK*expertFFN+sharedFFN)
	} else {
		d.activeFFN = ffn
	}
	m := d.count()
	if d.tied && bias { // lm_head keeps its own bias beside the tied weight
		m.Params += d.vocab
		m.ActiveParams += d.vocab
		m.UnquantizedParams += d.vocab
	}
	m.Notes = append(m.Notes, fmt.Sprintf("ernie4_5_moe: %d of %d layers route among %d experts (%d a token) beside a shared MLP of %d", nMoE, d.L, E, topK, sharedFFN))
	return m, nil
}
