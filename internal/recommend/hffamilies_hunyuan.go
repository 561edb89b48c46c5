package recommend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfMoEVariants holds the config.json fields of Tencent's Hunyuan,
// inclusionAI's Ling (bailing_moe), LiquidAI's LFM2-MoE and Qwen2.5-Omni
// (embedded in hfConfig). Hunyuan gives some of them per layer, as lists.
type hfMoEVariants struct {
	HunyuanTopK           json.RawMessage `json:"moe_topk"`          // an int, or one per layer
	NumSharedExpert       json.RawMessage `json:"num_shared_expert"` // an int, or one per layer
	UseMixedMLPMoE        *bool           `json:"use_mixed_mlp_moe"`
	AttentionHeadDim      *int64          `json:"attention_head_dim"`
	UseCLA                *bool           `json:"use_cla"`
	NumSharedExperts      *int64          `json:"num_shared_experts"`
	NumNextNPredictLayers *int64          `json:"num_nextn_predict_layers"`
	NumDenseLayers        *int64          `json:"num_dense_layers"`
	RouterExpertBias      *bool           `json:"moe_router_enable_expert_bias"`
	ThinkerConfig         *omniThinker    `json:"thinker_config"` // Qwen2.5-Omni
}

// perLayerMoEWidths finds a moe_intermediate_size given as a list.
var perLayerMoEWidths = regexp.MustCompile(`"moe_intermediate_size"\s*:\s*\[`)

// dropPerLayerMoEWidths removes a top-level moe_intermediate_size list
// (Hunyuan-A13B's config.json gives one width per layer) so the rest of the
// file decodes; no counter of a family that writes a list reads it:
// Hunyuan's experts are intermediate_size wide in both its own code and
// transformers'.
func dropPerLayerMoEWidths(data []byte) []byte {
	if !perLayerMoEWidths.Match(data) {
		return data
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return data
	}
	raw, ok := obj["moe_intermediate_size"]
	if !ok || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return data
	}
	delete(obj, "moe_intermediate_size")
	b, err := json.Marshal(obj)
	if err != nil {
		return data
	}
	return b
}

// perLayerInt reads a field Hunyuan gives either as one number or as a
// list with one per layer (moe_topk, num_shared_expert). A list must have
// L entries, all equal: the models released have them so, and the memory
// plan has one width.
func perLayerInt(name string, raw json.RawMessage, L, def int64) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return def, nil
	}
	var one int64
	if json.Unmarshal(raw, &one) == nil {
		return one, nil
	}
	var list []int64
	if err := json.Unmarshal(raw, &list); err != nil {
		return 0, fmt.Errorf("%s is neither a number nor a list of numbers: %s", name, raw)
	}
	if int64(len(list)) != L {
		return 0, fmt.Errorf("%s has %d entries for num_hidden_layers %d", name, len(list), L)
	}
	for _, v := range list {
		if v != list[0] {
			return 0, fmt.Errorf("%s varies by layer (%d and %d); devctl counts one value for all layers", name, list[0], v)
		}
	}
	return list[0], nil
}

// countHunyuan counts Tencent's Hunyuan V1 models as transformers'
// modeling_hunyuan_v1_dense.py and modeling_hunyuan_v1_moe.py build them
// (and Tencent's own hunyuan.py, which has the same tensors):
//
//   - attention: q, k, v and o (biases with attention_bias) and an RMSNorm
//     of head_dim on the queries and on the keys (use_qk_norm; transformers
//     always has them); head_dim, else the remote code's
//     attention_head_dim, else hidden_size / num_attention_heads;
//   - hunyuan_v1_dense: a SwiGLU MLP of intermediate_size;
//   - hunyuan_v1_moe: num_experts SwiGLU experts of intermediate_size,
//     moe_topk a token, behind a bias-free router (its weight kept in fp32),
//     beside a shared SwiGLU MLP of intermediate_size × num_shared_expert
//     (one when not given; none when use_mixed_mlp_moe is false, as the
//     remote code does). moe_intermediate_size, which the config.json also
//     gives, is read by neither implementation;
//   - two RMSNorms a block, a final RMSNorm, the head tied to the embedding
//     when tie_word_embeddings says so (the class default is untied).
//
// Hunyuan-A13B-Instruct counts 80,393,183,232. Cross-layer attention
// (use_cla, Hunyuan-Large's remote code) is refused: transformers' classes
// do not build it.
func countHunyuan(c hfConfig, family string) (oomsim.Model, error) {
	if flag(c.UseCLA, false) {
		return oomsim.Model{}, fmt.Errorf("use_cla (cross-layer attention, Hunyuan-Large) is not counted")
	}
	if family == "hunyuan" {
		// Tencent's remote code names both kinds "hunyuan" (the Hub's own
		// Hunyuan-A13B config.json): experts make it the MoE model.
		family = "hunyuan_v1_dense"
		if c.NumExperts != nil && *c.NumExperts > 1 {
			family = "hunyuan_v1_moe"
		}
	}
	var f fields
	d := standardShape(c, &f)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if c.HeadDim == nil && c.AttentionHeadDim != nil {
		c.HeadDim = c.AttentionHeadDim
	}
	if err := d.checkHeads(c, &f); err != nil {
		return oomsim.Model{}, err
	}
	ffn := f.need("intermediate_size", c.IntermediateSize)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	d.norms = 2
	d.qkNorm = flag(c.UseQKNorm, true)
	d.qkvBias = flag(c.AttentionBias, false)
	d.oBias = d.qkvBias
	d.tied = flag(c.TieWordEmbeddings, false)
	h := d.h
	if family == "hunyuan_v1_dense" {
		if err := tooMany(d.L, 3*h, max(ffn, (d.heads+d.kv)*d.hd)); err != nil {
			return oomsim.Model{}, err
		}
		d.mlp, d.activeFFN = dense(h, ffn, flag(c.MLPBias, false)), ffn
		return d.count(), nil
	}
	E := f.need("num_experts", c.NumExperts)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	topK, err := perLayerInt("moe_topk", c.HunyuanTopK, d.L, 1)
	if err != nil {
		return oomsim.Model{}, err
	}
	shared, err := perLayerInt("num_shared_expert", c.NumSharedExpert, d.L, 1)
	if err != nil {
		return oomsim.Model{}, err
	}
	if !flag(c.UseMixedMLPMoE, true) {
		shared = 0
	}
	if topK < 1 || topK > E || shared < 0 || shared > maxHeads {
		return oomsim.Model{}, fmt.Errorf("moe_topk %d of %d experts and num_shared_expert %d do not fit together", topK, E, shared)
	}
	if err := tooMany(d.L, E+shared+1, 3*h, max(ffn, (d.heads+d.kv)*d.hd)); err != nil {
		return oomsim.Model{}, err
	}
	one := 3 * h * ffn
	sharedMLP := shared * one
	router := E * h
	d.mlp = func(int64) (int64, int64, int64) {
		return E*one + router + sharedMLP, topK*one + router + sharedMLP, E*one + sharedMLP
	}
	d.experts, d.topK = E, topK
	d.activeFFN = (topK + shared) * ffn
	m := d.count()
	m.Notes = append(m.Notes, fmt.Sprintf("hunyuan_v1_moe: %d experts of %d in every layer (%d a token) beside a shared MLP of %d", E, ffn, topK, shared*ffn))
	return m, nil
}

// countFamiliesF dispatches Hunyuan V1, Ling (bailing_moe), LFM2-MoE and
// Qwen2.5-Omni.
func countFamiliesF(c hfConfig, family string) (oomsim.Model, error) {
	switch family {
	case "qwen2_5_omni":
		return countQwen25Omni(c)
	case "bailing_moe":
		return countBailingMoE(c)
	case "lfm2_moe":
		return countLFM2MoE(c)
	}
	return countHunyuan(c, family)
}
