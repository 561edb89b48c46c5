package recommend

import "github.com/devctl/devctl/internal/oomsim"

// countInternLM counts the first InternLM generation (model_type
// "internlm", remote code InternLMForCausalLM: InternLM-7B, InternLM-20B).
// It is Llama with biases on q_proj, k_proj, v_proj and o_proj when the
// config's "bias" is true (its default), and its attention builds k and v
// with every head whatever num_key_value_heads says.
func countInternLM(c hfConfig) (oomsim.Model, error) {
	bias := flag(c.Bias, true)
	c.AttentionBias = &bias
	c.MLPBias = nil
	c.NumKeyValueHeads = c.NumAttentionHeads
	return countDecoder(c, "llama")
}

// countBaichuan counts Baichuan-7B (model_type "baichuan", remote code):
// Llama's tensors with q, k and v fused into one bias-free W_pack, every
// head for k and v, no biases anywhere, an untied head.
func countBaichuan(c hfConfig) (oomsim.Model, error) {
	c.AttentionBias, c.MLPBias = nil, nil
	c.NumKeyValueHeads = c.NumAttentionHeads
	return countDecoder(c, "llama")
}
