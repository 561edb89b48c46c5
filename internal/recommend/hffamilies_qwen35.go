package recommend

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
)

// countQwen35 counts Qwen3.5 and Qwen3.6 (model_type qwen3_5, or qwen3_5_moe
// for the mixtures of experts): Qwen3-Next's hybrid language model in
// text_config, with a dense gated MLP of intermediate_size in every layer
// for qwen3_5 (Gated DeltaNet's projections are split into in_proj_qkv,
// in_proj_z, in_proj_b and in_proj_a, the same count as Qwen3-Next's fused
// ones). The vision encoder is counted (withVisionTower), not the
// multi-token-prediction block the checkpoints store. qwen3_5_text and qwen3_5_moe_text are the
// language model alone.
func countQwen35(c hfConfig, family string) (oomsim.Model, error) {
	name := strings.TrimSuffix(family, "_text")
	multimodal := name == family
	tc := c
	if multimodal {
		if c.TextConfig == nil {
			return oomsim.Model{}, fmt.Errorf("no text_config")
		}
		tc = *c.TextConfig
		if tc.TieWordEmbeddings == nil {
			tc.TieWordEmbeddings = c.TieWordEmbeddings
		}
	}
	m, err := countHybrid(tc, name, name == "qwen3_5_moe")
	if err != nil || !multimodal {
		return m, err
	}
	n, err := qwen35VisionParams(c.VisionConfig)
	if err != nil {
		m.Notes = append(m.Notes, name+": the language model only; the vision encoder and its merger are not counted")
		return m, nil
	}
	return withVisionTower(m, name, n), nil
}

// qwen35VisionParams counts the vision encoder of Qwen3.5 (Qwen3-VL's): a
// Conv3d patch embedding with a bias, a learned position table of
// num_position_embeddings, depth blocks of two LayerNorms, a fused qkv and
// a projection and a two-matrix MLP of intermediate_size, all with biases,
// and the merger: a LayerNorm and two Linear layers with biases over
// spatial_merge_size² patches, out to out_hidden_size.
func qwen35VisionParams(v *qwenVision) (int64, error) {
	if v == nil {
		return 0, fmt.Errorf("no vision_config")
	}
	var f fields
	depth := f.need("depth", v.Depth)
	d := f.need("hidden_size", v.HiddenSize)
	mlp := f.need("intermediate_size", v.IntermediateSize)
	out := f.need("out_hidden_size", v.OutHiddenSize)
	pos := f.opt("num_position_embeddings", v.NumPositionEmbeddings, 0)
	in := f.opt("in_channels", v.InChannels, 3)
	patch := f.opt("patch_size", v.PatchSize, 16)
	merge := f.opt("spatial_merge_size", v.SpatialMergeSize, 2)
	temporal := f.opt("temporal_patch_size", v.TemporalPatchSize, 2)
	if f.err != nil {
		return 0, f.err
	}
	merged := d * merge * merge
	for _, err := range []error{tooMany(depth, d, max(3*d, mlp)), tooMany(merged, merged+out), tooMany(d, max(pos, in*temporal*patch*patch))} {
		if err != nil {
			return 0, err
		}
	}
	block := 2*2*d + d*3*d + 3*d + d*d + d + d*mlp + mlp + mlp*d + d
	merger := 2*d + merged*merged + merged + merged*out + out
	return in*temporal*patch*patch*d + d + pos*d + depth*block + merger, nil
}
