package recommend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfFamE holds the config.json fields of Seed-OSS that no other family
// reads (embedded in hfConfig).
type hfFamE struct {
	AttentionOutBias *bool `json:"attention_out_bias"` // Seed-OSS: a bias on o_proj
}

// countFamilyE dispatches the families added together in round 24 (helper
// fam-e): glm4v, glm4v_moe, seed_oss, olmo3 and exaone4.
func countFamilyE(c hfConfig, family string) (oomsim.Model, error) {
	switch family {
	case "glm4v", "glm4v_moe":
		return countGLM4V(c, family)
	case "seed_oss":
		return countSeedOSS(c)
	case "olmo3":
		return countOLMo3(c)
	case "exaone4":
		return countEXAONE4(c)
	}
	return oomsim.Model{}, fmt.Errorf("%w %q", ErrUnsupportedFamily, family)
}

// countGLM4V counts Glm4vForConditionalGeneration (GLM-4.1V-9B-Thinking,
// GLM-4.6V-Flash; model_type glm4v) and Glm4vMoeForConditionalGeneration
// (GLM-4.5V, GLM-4.6V; glm4v_moe) as transformers' modeling_glm4v.py and
// modeling_glm4v_moe.py build them: the language model in text_config and
// GLM's vision tower in vision_config (glm4vVisionParams).
//
//   - glm4v: GLM-4-0414's decoder (countGLM "glm4": four RMSNorms a block,
//     a fused gate_up MLP, o_proj without a bias) whose q, k and v always
//     carry biases (Glm4vTextAttention sets bias=True whatever
//     attention_bias says) and whose head size is hidden_size /
//     num_attention_heads;
//   - glm4v_moe: GLM-4.5-Air's decoder (countGLM4MoE) without q/k norms
//     (Glm4vMoeTextAttention has none); GLM-4.5V's checkpoint stores no
//     multi-token-prediction layer, and its count is the Hub's.
//
// The head is untied unless tie_word_embeddings says otherwise (the
// top-level setting is the model's). GLM-4.5V counts 107,710,933,120 and
// GLM-4.1V-9B-Thinking 10,292,777,472, the Hub's safetensors totals.
func countGLM4V(c hfConfig, family string) (oomsim.Model, error) {
	if c.TextConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no text_config")
	}
	tc := *c.TextConfig
	if c.TieWordEmbeddings != nil {
		tc.TieWordEmbeddings = c.TieWordEmbeddings
	}
	var m oomsim.Model
	var err error
	if family == "glm4v" {
		bias := true
		tc.AttentionBias = &bias
		if tc.HiddenSize != nil && tc.NumAttentionHeads != nil && *tc.HiddenSize > 0 && *tc.NumAttentionHeads > 0 {
			if err := headsFit(*tc.NumAttentionHeads, *tc.HiddenSize, "text_config num_attention_heads", "hidden_size"); err != nil {
				return oomsim.Model{}, err
			}
			hd := *tc.HiddenSize / *tc.NumAttentionHeads
			tc.HeadDim = &hd
		}
		m, err = countGLM(tc, "glm4")
	} else {
		noQKNorm := false
		tc.UseQKNorm = &noQKNorm
		m, err = countGLM4MoE(tc)
		m.Notes = slices.DeleteFunc(m.Notes, func(n string) bool { return strings.Contains(n, "multi-token-prediction") })
	}
	if err != nil {
		return oomsim.Model{}, fmt.Errorf("text_config: %w", err)
	}
	if c.VisionConfig == nil {
		m.Notes = append(m.Notes, family+": the language model only; no vision_config, so the vision tower is not counted")
		return m, nil
	}
	n, err := glm4vVisionParams(c.VisionConfig, family)
	if err != nil {
		return oomsim.Model{}, fmt.Errorf("vision_config: %w", err)
	}
	return withVisionTower(m, family, n), nil
}

// glm4vVisionParams counts GLM-4V's vision tower (Glm4vVisionModel, the same
// in Glm4vMoe): a Conv3d patch embedding with a bias over
// temporal_patch_size × patch_size² pixels of in_channels; a learned
// position per patch ((image_size / patch_size)²); depth blocks of two
// RMSNorms, a fused qkv (biases with attention_bias) and a bias-free
// projection, and a gated MLP whose width is out_hidden_size, without
// biases; an RMSNorm after the blocks and one before them; a Conv2d
// downsample with a bias merging spatial_merge_size² patches into
// out_hidden_size; and the merger: a bias-free out × out projection, a
// LayerNorm with a bias, and a gated MLP of intermediate_size without
// biases. The rotary inverse frequencies are a buffer.
func glm4vVisionParams(v *qwenVision, family string) (int64, error) {
	if v.imageHW != nil && v.ImageSize == nil || v.patchHW != nil && v.PatchSize == nil {
		return 0, fmt.Errorf("image_size and patch_size must be square for %s", family)
	}
	var f fields
	depth := f.need("depth", v.Depth)
	h := f.need("hidden_size", v.HiddenSize)
	out := f.need("out_hidden_size", v.OutHiddenSize)
	inter := f.need("intermediate_size", v.IntermediateSize)
	in := f.opt("in_channels", v.InChannels, 3)
	patch := f.opt("patch_size", v.PatchSize, 14)
	image := f.opt("image_size", v.ImageSize, 336)
	temporal := f.opt("temporal_patch_size", v.TemporalPatchSize, 2)
	merge := f.opt("spatial_merge_size", v.SpatialMergeSize, 2)
	if f.err != nil {
		return 0, f.err
	}
	if image < patch {
		return 0, fmt.Errorf("image_size %d is less than patch_size %d", image, patch)
	}
	positions := (image / patch) * (image / patch)
	for _, err := range []error{
		tooMany(depth, 4*h+3*out, h), tooMany(positions, h), tooMany(in, temporal, patch, patch, h),
		tooMany(h, out, merge*merge), tooMany(out, out+3*inter),
	} {
		if err != nil {
			return 0, err
		}
	}
	qkv := 3 * h * h
	if flag(v.AttentionBias, false) {
		qkv += 3 * h
	}
	block := 2*h + qkv + h*h + 3*h*out
	embed := in*temporal*patch*patch*h + h + positions*h
	downsample := h*out*merge*merge + out
	merger := out*out + 2*out + 3*out*inter
	return embed + depth*block + 2*h + downsample + merger, nil
}
