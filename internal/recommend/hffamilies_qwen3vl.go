package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countQwen3VL counts Qwen3-VL (model_type qwen3_vl, or qwen3_vl_moe for
// the mixtures of experts): a Qwen3 (or Qwen3-MoE) language model in
// text_config and Qwen3.5's vision encoder (qwen35VisionParams) with one
// more merger per DeepStack block (deepstack_visual_indexes), each a
// LayerNorm over the spatial_merge_size² merged features and the same two
// Linear layers with biases (transformers' Qwen3VLVisionPatchMerger with
// use_postshuffle_norm). transformers 5 prints the expert count as
// num_local_experts; either name is read. Counts checked against the
// safetensors sums of Qwen3-VL-8B-Instruct (8,767,123,696),
// Qwen3-VL-30B-A3B-Instruct (31,070,754,032) and Qwen3-VL-235B-A22B-Instruct
// (235,670,022,896).
func countQwen3VL(c hfConfig, family string) (oomsim.Model, error) {
	if c.TextConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no text_config")
	}
	tc := *c.TextConfig
	if c.TieWordEmbeddings != nil {
		// The composite config's setting is the model's; a printed
		// text_config carries its class's default (true) beside it.
		tc.TieWordEmbeddings = c.TieWordEmbeddings
	}
	lm := "qwen3"
	if family == "qwen3_vl_moe" {
		lm = "qwen3_moe"
		if tc.NumExperts == nil {
			tc.NumExperts = tc.NumLocalExperts
		}
	}
	m, err := countModernDecoder(tc, lm)
	if err != nil {
		return m, err
	}
	n, err := qwen35VisionParams(c.VisionConfig)
	if err != nil {
		m.Notes = append(m.Notes, family+": the language model only; the vision encoder and its mergers are not counted")
		return m, nil
	}
	v := c.VisionConfig
	if k := int64(len(v.DeepstackVisualIndexes)); k > 0 {
		// qwen35VisionParams has read these fields and bounded them.
		merge := int64(2)
		if v.SpatialMergeSize != nil {
			merge = *v.SpatialMergeSize
		}
		merged, out := *v.HiddenSize*merge*merge, *v.OutHiddenSize
		if err := tooMany(k, merged*merged+merged*out); err != nil {
			return m, err
		}
		n += k * (2*merged + merged*merged + merged + merged*out + out)
	}
	return withVisionTower(m, family, n), nil
}
