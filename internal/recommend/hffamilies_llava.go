package recommend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfVLWrapper holds the config.json fields of the vision-language wrappers
// around a text model in text_config (LLaVA, LLaVA-NeXT, InternVL), embedded
// in hfConfig.
type hfVLWrapper struct {
	VisionFeatureLayer      json.RawMessage `json:"vision_feature_layer"`
	MultimodalProjectorBias *bool           `json:"multimodal_projector_bias"`
	DownsampleRatio         *float64        `json:"downsample_ratio"`
}

// wrappedVisionFields are the vision_config fields of CLIP and InternViT
// towers (embedded in qwenVision). InternVL writes image_size and
// patch_size as [height, width] pairs; qwenVision's UnmarshalJSON keeps
// them in imageHW and patchHW (and a square pair in ImageSize and
// PatchSize too).
type wrappedVisionFields struct {
	ModelType                     string `json:"model_type"`
	AttentionBias                 *bool  `json:"attention_bias"`
	UseQKNorm                     *bool  `json:"use_qk_norm"`
	NormType                      string `json:"norm_type"`
	UseMeanPooling                *bool  `json:"use_mean_pooling"`
	UseAbsolutePositionEmbeddings *bool  `json:"use_absolute_position_embeddings"`
	UseMaskToken                  *bool  `json:"use_mask_token"`

	imageHW, patchHW []int64
}

// UnmarshalJSON reads a vision_config whose image_size or patch_size may be
// a [height, width] pair instead of one number.
func (v *qwenVision) UnmarshalJSON(b []byte) error {
	type plain qwenVision
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	pairs := map[string][]int64{}
	for _, k := range []string{"image_size", "patch_size"} {
		raw, ok := obj[k]
		if !ok || !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
			continue
		}
		var p []int64
		if err := json.Unmarshal(raw, &p); err != nil || len(p) != 2 {
			return fmt.Errorf("vision_config %s is %s: want a number or [height, width]", k, raw)
		}
		pairs[k] = p
		delete(obj, k)
	}
	if len(pairs) > 0 {
		var err error
		if b, err = json.Marshal(obj); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(b, (*plain)(v)); err != nil {
		return err
	}
	square := func(p []int64) *int64 {
		if p != nil && p[0] == p[1] {
			n := p[0]
			return &n
		}
		return nil
	}
	v.imageHW, v.patchHW = pairs["image_size"], pairs["patch_size"]
	if p := square(v.imageHW); p != nil {
		v.ImageSize = p
	}
	if p := square(v.patchHW); p != nil {
		v.PatchSize = p
	}
	return nil
}

// Defaults of the text models a wrapper's text_config names, which the
// llava-hf configs leave out: transformers builds text_config with
// CONFIG_MAPPING[model_type](**text_config), so LlamaConfig's and
// MistralConfig's defaults apply (configuration_llama.py,
// configuration_mistral.py).
var wrappedTextDefaults = map[string]struct{ vocab, hidden, ffn, layers, heads, kv, maxPos int64 }{
	"llama":   {32_000, 4096, 11_008, 32, 32, 0, 2048},
	"mistral": {32_000, 4096, 14_336, 32, 32, 8, 4096 * 32},
}

// countWrappedText counts a wrapper's language model (text_config, whose
// model_type is lm when it gives none). The wrapper's own
// tie_word_embeddings, when given, is the model's; otherwise
// text_config's; otherwise the head is untied (the default of the Llama,
// Mistral, Qwen2 and Qwen3 configs).
func countWrappedText(c hfConfig, lm string) (oomsim.Model, error) {
	if c.TextConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no text_config")
	}
	tc := *c.TextConfig
	if mt := strings.ToLower(strings.TrimSpace(tc.ModelType)); mt != "" {
		lm = mt
	}
	if d, ok := wrappedTextDefaults[lm]; ok {
		def := func(p **int64, v int64) {
			if *p == nil && v > 0 {
				*p = &v
			}
		}
		def(&tc.VocabSize, d.vocab)
		def(&tc.HiddenSize, d.hidden)
		def(&tc.IntermediateSize, d.ffn)
		def(&tc.NumHiddenLayers, d.layers)
		def(&tc.NumAttentionHeads, d.heads)
		def(&tc.NumKeyValueHeads, d.kv)
		def(&tc.MaxPositionEmbeddings, d.maxPos)
	}
	if c.TieWordEmbeddings != nil {
		tc.TieWordEmbeddings = c.TieWordEmbeddings
	}
	var m oomsim.Model
	var err error
	switch lm {
	case "llama", "mistral", "qwen2":
		m, err = countDecoder(tc, lm)
	case "qwen3":
		m, err = countModernDecoder(tc, lm)
	default:
		return oomsim.Model{}, fmt.Errorf("text_config model_type %q is not one devctl counts here (llama, mistral, qwen2, qwen3)", lm)
	}
	if err != nil {
		return m, fmt.Errorf("text_config: %w", err)
	}
	return m, nil
}

// countLlava counts LlavaForConditionalGeneration (LLaVA-1.5, model_type
// llava) and LlavaNextForConditionalGeneration (LLaVA-NeXT / 1.6,
// llava_next) as transformers' modeling_llava.py and modeling_llava_next.py
// build them:
//
//   - the language model in text_config (countWrappedText);
//   - the vision tower, a whole CLIPVisionModel (clipVisionParams): every
//     layer is loaded though vision_feature_layer reads the second to last;
//   - the projector, two Linear layers (biases with
//     multimodal_projector_bias, default true) from the vision hidden size ×
//     the number of vision_feature_layer entries to the text hidden size
//     and on to itself;
//   - llava_next adds image_newline, one text-hidden-size vector.
//
// llava-1.5-7b-hf counts 7,063,427,072, llava-v1.6-mistral-7b-hf
// 7,566,747,648: the Hub's safetensors counts. A tower other than CLIP is
// not counted (the language model alone is), and the notes say so;
// impossible CLIP fields are an error.
func countLlava(c hfConfig, family string) (oomsim.Model, error) {
	m, err := countWrappedText(c, "llama")
	if err != nil {
		return m, err
	}
	th := int64(m.Arch.Hidden)
	tower, vh, err := clipVisionParams(c.VisionConfig)
	if errors.Is(err, errOtherTower) {
		m.Notes = append(m.Notes, family+": the language model only; the vision tower and the projector are not counted: "+err.Error())
		return m, nil
	} else if err != nil {
		return oomsim.Model{}, fmt.Errorf("vision_config: %w", err)
	}
	feats, err := featureLayers(c.VisionFeatureLayer)
	if err != nil {
		return oomsim.Model{}, err
	}
	if err := tooMany(vh, feats, th); err != nil {
		return oomsim.Model{}, err
	}
	proj := vh*feats*th + th*th
	if flag(c.MultimodalProjectorBias, true) {
		proj += 2 * th
	}
	n := tower + proj
	if family == "llava_next" {
		n += th // image_newline
	}
	return withVisionTower(m, family, n), nil
}

// featureLayers is how many vision layers' features the projector takes:
// vision_feature_layer is one layer index or a list of them.
func featureLayers(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 1, nil
	}
	var one int64
	if json.Unmarshal(raw, &one) == nil {
		return 1, nil
	}
	var list []int64
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 || len(list) > maxLayers {
		return 0, fmt.Errorf("vision_feature_layer is %s: want a layer index or a list of them", raw)
	}
	return int64(len(list)), nil
}

// clipVisionParams counts a CLIPVisionModel (vision_config of model_type
// clip_vision_model) and returns its hidden size: a class embedding, a
// bias-free patch Conv2d, a learned position per patch and one for the
// class token, a pre-LayerNorm, num_hidden_layers blocks (two LayerNorms;
// q, k, v and out projections with biases; a two-Linear MLP with biases)
// and a post-LayerNorm. Fields left out take CLIPVisionConfig's defaults;
// no vision_config at all is LlavaConfig's default tower (CLIP ViT-L/14 at
// 336 pixels).
func clipVisionParams(v *qwenVision) (total, hidden int64, err error) {
	if v == nil {
		v = &qwenVision{HiddenSize: ptr(1024), IntermediateSize: ptr(4096), NumHiddenLayers: ptr(24), PatchSize: ptr(14), ImageSize: ptr(336)}
	}
	if mt := v.ModelType; mt != "" && mt != "clip_vision_model" {
		return 0, 0, fmt.Errorf("%w: vision_config model_type %q is not CLIP", errOtherTower, mt)
	}
	if v.imageHW != nil || v.patchHW != nil {
		if v.ImageSize == nil || v.PatchSize == nil {
			return 0, 0, fmt.Errorf("a non-square image_size or patch_size")
		}
	}
	var f fields
	h := f.opt("hidden_size", v.HiddenSize, 768)
	inter := f.opt("intermediate_size", v.IntermediateSize, 3072)
	layers := f.opt("num_hidden_layers", v.NumHiddenLayers, 12)
	ch := f.opt("num_channels", v.NumChannels, 3)
	image := f.opt("image_size", v.ImageSize, 224)
	patch := f.opt("patch_size", v.PatchSize, 32)
	if f.err != nil {
		return 0, 0, f.err
	}
	if image < patch {
		return 0, 0, fmt.Errorf("image_size %d and patch_size %d do not make patches", image, patch)
	}
	positions := (image/patch)*(image/patch) + 1
	block := 4*(h*h+h) + 2*2*h + (h*inter + inter) + (inter*h + h)
	for _, err := range []error{tooMany(layers, block), tooMany(positions, h), tooMany(ch*patch*patch, h)} {
		if err != nil {
			return 0, 0, err
		}
	}
	return h + ch*patch*patch*h + positions*h + 2*h + layers*block + 2*h, h, nil
}

func ptr(n int64) *int64 { return &n }

// errOtherTower marks a vision_config of a tower the wrapper's counter does
// not know: the language model is counted alone, and the notes say so.
var errOtherTower = errors.New("vision tower not counted")
