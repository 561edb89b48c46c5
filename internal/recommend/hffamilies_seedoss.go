package recommend

import (
	"github.com/devctl/devctl/internal/oomsim"
)

// countSeedOSS counts SeedOssForCausalLM (ByteDance Seed-OSS-36B, model_type
// seed_oss) as transformers' modeling_seed_oss.py builds it: Llama's block
// with biases on q, k and v (attention_bias, true by default), a bias on
// o_proj only with attention_out_bias (false by default), a gated MLP
// (biases with mlp_bias), two RMSNorms a block, a final one and an untied
// head. head_dim is SeedOssConfig's default 128 when the file does not say.
// Seed-OSS-36B counts 36,151,104,512, the Hub's count.
func countSeedOSS(c hfConfig) (oomsim.Model, error) {
	if c.HeadDim == nil {
		hd := int64(128)
		c.HeadDim = &hd
	}
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	mlpBias := flag(c.MLPBias, false)
	d.norms = 2
	d.qkvBias = flag(c.AttentionBias, true)
	d.oBias = flag(c.AttentionOutBias, false)
	d.tied = flag(c.TieWordEmbeddings, false)
	d.mlp, d.activeFFN = dense(d.h, ffn, mlpBias), ffn
	return d.count(), nil
}
