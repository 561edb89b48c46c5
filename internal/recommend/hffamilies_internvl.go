package recommend

import (
	"errors"
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// countInternVL counts InternVLForConditionalGeneration (InternVL 2.5, 3
// and 3.5 in transformers' format, model_type internvl; the remote-code
// internvl_chat checkpoints are not read) as transformers'
// modeling_internvl.py builds it:
//
//   - the language model in text_config (countWrappedText; Qwen2 for
//     InternVL3, Qwen3 for InternVL3.5), its head untied unless a
//     tie_word_embeddings says otherwise;
//   - the vision tower, InternViT (internViTParams);
//   - the projector: a LayerNorm over the vision hidden size ×
//     (1 / downsample_ratio)² pixel-shuffled features, a Linear with a bias
//     to the text hidden size, and a second one to itself.
//
// InternVL3-1B-hf counts 938,193,024, InternVL3-2B-hf 2,088,957,440 and
// InternVL3-8B-hf 7,944,373,760: the Hub's safetensors counts. Only the
// language model keeps a KV cache.
func countInternVL(c hfConfig) (oomsim.Model, error) {
	m, err := countWrappedText(c, "qwen2")
	if err != nil {
		return m, err
	}
	th := int64(m.Arch.Hidden)
	tower, vh, err := internViTParams(c.VisionConfig)
	if errors.Is(err, errOtherTower) {
		m.Notes = append(m.Notes, "internvl: the language model only; the vision tower and the projector are not counted: "+err.Error())
		return m, nil
	} else if err != nil {
		return oomsim.Model{}, fmt.Errorf("vision_config: %w", err)
	}
	ratio := 0.5
	if c.DownsampleRatio != nil {
		ratio = *c.DownsampleRatio
	}
	if !(ratio >= 1.0/64 && ratio <= 1) {
		return oomsim.Model{}, fmt.Errorf("downsample_ratio %v is out of range (1/64 to 1)", ratio)
	}
	r := int64(1 / ratio)
	in := vh * r * r
	if err := tooMany(in, th+2); err != nil {
		return oomsim.Model{}, err
	}
	proj := 2*in + in*th + th + th*th + th
	return withVisionTower(m, "internvl", tower+proj), nil
}

// internViTParams counts InternVLVisionModel (vision_config of model_type
// internvl_vision) and returns its hidden size: a class token (and a mask
// token with use_mask_token), a patch Conv2d with a bias, a learned
// position per patch and the class token (use_absolute_position_embeddings);
// num_hidden_layers blocks of q, k and v (biases with attention_bias), an
// output projection with a bias, RMSNorms on q and k with use_qk_norm, two
// norms (norm_type layer_norm, weight and bias, or rms_norm, weight), the
// two layer-scale vectors and a two-Linear MLP with biases; a final
// LayerNorm unless use_mean_pooling. Fields left out take
// InternVLVisionConfig's defaults (InternViT-300M's shapes, no attention
// bias). InternViT-300M counts 304,012,288.
func internViTParams(v *qwenVision) (total, hidden int64, err error) {
	if v == nil {
		v = &qwenVision{}
	}
	if mt := v.ModelType; mt != "" && mt != "internvl_vision" {
		return 0, 0, fmt.Errorf("%w: vision_config model_type %q is not internvl_vision", errOtherTower, mt)
	}
	var f fields
	h := f.opt("hidden_size", v.HiddenSize, 1024)
	inter := f.opt("intermediate_size", v.IntermediateSize, 4096)
	layers := f.opt("num_hidden_layers", v.NumHiddenLayers, 24)
	ch := f.opt("num_channels", v.NumChannels, 3)
	imageH := f.opt("image_size", v.ImageSize, 448)
	patchH := f.opt("patch_size", v.PatchSize, 14)
	imageW, patchW := imageH, patchH
	if p := v.imageHW; p != nil {
		imageH, imageW = f.need("image_size", &p[0]), f.need("image_size", &p[1])
	}
	if p := v.patchHW; p != nil {
		patchH, patchW = f.need("patch_size", &p[0]), f.need("patch_size", &p[1])
	}
	if f.err != nil {
		return 0, 0, f.err
	}
	if imageH < patchH || imageW < patchW {
		return 0, 0, fmt.Errorf("image_size and patch_size do not make patches")
	}
	norm := 2 * h // layer_norm
	switch v.NormType {
	case "", "layer_norm":
	case "rms_norm":
		norm = h
	default:
		return 0, 0, fmt.Errorf("norm_type %q: want layer_norm or rms_norm", v.NormType)
	}
	positions := (imageH/patchH)*(imageW/patchW) + 1
	block := 3*h*h + h*h + h + 2*norm + 2*h + (h*inter + inter) + (inter*h + h)
	if flag(v.AttentionBias, false) {
		block += 3 * h
	}
	if flag(v.UseQKNorm, false) {
		block += 2 * h
	}
	for _, err := range []error{tooMany(layers, block), tooMany(positions, h), tooMany(ch*patchH*patchW, h)} {
		if err != nil {
			return 0, 0, err
		}
	}
	total = h + ch*patchH*patchW*h + h + layers*block
	if flag(v.UseMaskToken, false) {
		total += h
	}
	if flag(v.UseAbsolutePositionEmbeddings, true) {
		total += positions * h
	}
	if !flag(v.UseMeanPooling, true) {
		total += 2 * h
	}
	return total, h, nil
}
