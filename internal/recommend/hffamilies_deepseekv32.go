package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfDSA holds DeepSeek sparse attention's fields (embedded in hfConfig).
type hfDSA struct {
	IndexNHeads  *int64 `json:"index_n_heads"`
	IndexHeadDim *int64 `json:"index_head_dim"`
	IndexTopK    *int64 `json:"index_topk"`
}

// countDeepSeekV32 counts DeepseekV32ForCausalLM (DeepSeek-V3.2-Exp,
// DeepSeek-V3.2; model_type deepseek_v32): DeepSeek-V3's layers, counted
// by countDeepSeek, with the lightning indexer of DeepSeek sparse attention
// in every layer's attention (transformers' modeling_deepseek_v32.py,
// DeepseekV32Indexer, and DeepSeek's inference/model.py Indexer): wq_b
// from the query latent (q_lora_rank) to index_n_heads × index_head_dim,
// wk from the hidden state to one index_head_dim key, k_norm a LayerNorm
// of index_head_dim with its bias, and weights_proj from the hidden state
// to one weight per index head; no biases on the three projections. Left
// out, index_n_heads and index_head_dim take the class defaults, 64 and
// 128. As for V3, the multi-token-prediction layer (with its own indexer)
// is not counted.
func countDeepSeekV32(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	qRank := f.need("q_lora_rank", c.QLoraRank)
	nIdx := f.opt("index_n_heads", c.IndexNHeads, 64)
	dIdx := f.opt("index_head_dim", c.IndexHeadDim, 128)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if c.IndexTopK != nil && *c.IndexTopK <= 0 {
		return oomsim.Model{}, fmt.Errorf("index_topk = %d is out of range", *c.IndexTopK)
	}
	m, err := countDeepSeek(c, "deepseek_v3")
	if err != nil {
		return m, err
	}
	linear := qRank*nIdx*dIdx + h*dIdx + h*nIdx // wq_b, wk, weights_proj
	indexer := linear + 2*dIdx                  // k_norm weight and bias
	m.Params += L * indexer
	m.ActiveParams += L * indexer
	m.UnquantizedParams += L * 2 * dIdx
	topK := int64(2048)
	if c.IndexTopK != nil {
		topK = *c.IndexTopK
	}
	m.Notes = append(m.Notes, fmt.Sprintf("deepseek_v32: DeepSeek sparse attention; each layer's lightning indexer (%d parameters) picks %d tokens for the attention, and engines cache its %d-value key per token and layer beside the latent", indexer, topK, dIdx))
	return m, nil
}
