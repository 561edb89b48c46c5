package recommend

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfFamG holds the config.json fields of DeepSeek-VL2 (model_type
// deepseek_vl_v2, remote code deepseek-ai/DeepSeek-VL2): its language
// model sits in language_config, its adaptor in projector_config (embedded
// in hfConfig).
type hfFamG struct {
	LanguageConfig  *hfConfig     `json:"language_config"`
	ProjectorConfig *vl2Projector `json:"projector_config"`
	TileTag         *string       `json:"tile_tag"`
	UseMLA          *bool         `json:"use_mla"`
}

// famGVisionFields are the vision_config fields of Kimi-VL's MoonViT and
// DeepSeek-VL2's SigLIP (embedded in qwenVision).
type famGVisionFields struct {
	// MoonViT (configuration_kimi_vl.py's MoonViTConfig)
	InitPosEmbHeight *int64  `json:"init_pos_emb_height"`
	InitPosEmbWidth  *int64  `json:"init_pos_emb_width"`
	MergeKernelSize  []int64 `json:"merge_kernel_size"`
	// Kimi-K2.5's MoonViT (configuration_kimi_k25.py): the same tower
	// under vt_ names, with a temporal position table for video.
	VtHiddenSize       *int64 `json:"vt_hidden_size"`
	VtNumHiddenLayers  *int64 `json:"vt_num_hidden_layers"`
	VtIntermediateSize *int64 `json:"vt_intermediate_size"`
	InitPosEmbTime     *int64 `json:"init_pos_emb_time"`
	// DeepSeek-VL2's VisionEncoderConfig (timm-style names)
	Width      *int64 `json:"width"`
	Layers     *int64 `json:"layers"`
	GlobalPool string `json:"global_pool"`
	ClassToken *bool  `json:"class_token"`
}

// vl2Projector is DeepSeek-VL2's MlpProjectorConfig.
type vl2Projector struct {
	ProjectorType   string `json:"projector_type"`
	InputDim        *int64 `json:"input_dim"`
	NEmbed          *int64 `json:"n_embed"`
	Depth           *int64 `json:"depth"`
	MLPRatio        *int64 `json:"mlp_ratio"`
	DownsampleRatio *int64 `json:"downsample_ratio"`
	TokenPooling    *bool  `json:"token_pooling"`
}

// countFamiliesG dispatches kimi_vl and deepseek_vl_v2.
func countFamiliesG(c hfConfig, family string) (oomsim.Model, error) {
	switch family {
	case "kimi_vl", "kimi_k25":
		return countKimiVL(c, family)
	}
	return countDeepSeekVL2(c)
}

// countKimiVL counts KimiVLForConditionalGeneration (Kimi-VL-A3B-Instruct,
// -Thinking, -Thinking-2506): a DeepSeek-V3 language model in text_config
// (multi-head latent attention, 64 sigmoid-routed experts with a score
// bias, shared experts, the first layer dense), the MoonViT vision tower
// and the projector. MoonViT (modeling_kimi_vl.py; NVIDIA NeMo
// Automodel's checkpoint-compatible kimivl/model.py): a Conv2d patch
// embedding with a bias, a learned init_pos_emb_height × init_pos_emb_width
// position table (interpolated to the image), num_hidden_layers blocks of
// two LayerNorms, a fused wqkv and wo with biases and a two-Linear MLP
// with biases, a final LayerNorm (2D RoPE has no parameters). The
// projector: a LayerNorm on the vision width, then two Linear layers with
// biases over merge_kernel_size patches, out to the text hidden size.
//
// Kimi-K2.5 (KimiK25ForConditionalGeneration, "kimi_k25") is the same: Kimi
// K2's language model in text_config, and MoonViT under vt_ names with a
// temporal position table of init_pos_emb_time rows beside the spatial one
// (configuration_kimi_k25.py). Its tower is not checked against a published
// count (the Hub's count of the int4 release is not a parameter count
// devctl can reproduce); it is under 0.1% of the model.
func countKimiVL(c hfConfig, family string) (oomsim.Model, error) {
	if c.TextConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no text_config")
	}
	m, err := countDeepSeek(*c.TextConfig, "deepseek_v3")
	if err != nil {
		return oomsim.Model{}, fmt.Errorf("text_config: %w", err)
	}
	v := c.VisionConfig
	if v == nil {
		return oomsim.Model{}, fmt.Errorf("no vision_config")
	}
	var f fields
	d := f.need("vision_config.hidden_size", cmp.Or(v.HiddenSize, v.VtHiddenSize))
	layers := f.need("vision_config.num_hidden_layers", cmp.Or(v.NumHiddenLayers, v.VtNumHiddenLayers))
	inter := f.need("vision_config.intermediate_size", cmp.Or(v.IntermediateSize, v.VtIntermediateSize))
	posT := f.opt("vision_config.init_pos_emb_time", v.InitPosEmbTime, 0)
	patch := f.opt("vision_config.patch_size", v.PatchSize, 14)
	posH := f.opt("vision_config.init_pos_emb_height", v.InitPosEmbHeight, 64)
	posW := f.opt("vision_config.init_pos_emb_width", v.InitPosEmbWidth, 64)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	kh, kw := int64(2), int64(2)
	if v.MergeKernelSize != nil {
		if len(v.MergeKernelSize) != 2 || v.MergeKernelSize[0] <= 0 || v.MergeKernelSize[1] <= 0 || v.MergeKernelSize[0] > 64 || v.MergeKernelSize[1] > 64 {
			return oomsim.Model{}, fmt.Errorf("vision_config merge_kernel_size %v: want two positive sizes", v.MergeKernelSize)
		}
		kh, kw = v.MergeKernelSize[0], v.MergeKernelSize[1]
	}
	text := int64(m.Arch.Hidden)
	merged := d * kh * kw
	for _, err := range []error{tooMany(layers, 4*d, d+inter), tooMany(posH, posW, d), tooMany(posT, d), tooMany(3*patch*patch, d), tooMany(merged, merged+text)} {
		if err != nil {
			return oomsim.Model{}, fmt.Errorf("vision_config: %w", err)
		}
	}
	block := 2*2*d + (d*3*d + 3*d) + (d*d + d) + (d*inter + inter) + (inter*d + d)
	tower := 3*patch*patch*d + d + posH*posW*d + posT*d + layers*block + 2*d
	projector := 2*d + merged*merged + merged + merged*text + text
	return withVisionTower(m, family, tower+projector), nil
}

// countDeepSeekVL2 counts DeepseekVLV2ForCausalLM (deepseek-vl2-tiny,
// -small, deepseek-vl2; deepseek-ai/DeepSeek-VL2 modeling_deepseek_vl_v2.py
// and siglip_vit.py): the DeepSeekMoE language model of language_config
// (multi-head latent attention, or Llama's attention when use_mla is
// false as in the tiny model), the SigLIP ViT and the adaptor.
func countDeepSeekVL2(c hfConfig) (oomsim.Model, error) {
	if c.LanguageConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no language_config")
	}
	lc := *c.LanguageConfig
	var m oomsim.Model
	var err error
	if flag(lc.UseMLA, true) {
		m, err = countDeepSeek(lc, "deepseek_v2")
	} else {
		m, err = countDeepSeekMHA(lc)
	}
	if err != nil {
		return oomsim.Model{}, fmt.Errorf("language_config: %w", err)
	}
	vision, err := vl2VisionParams(c.VisionConfig)
	if err != nil {
		return oomsim.Model{}, fmt.Errorf("vision_config: %w", err)
	}
	proj, err := vl2ProjectorParams(c.ProjectorConfig)
	if err != nil {
		return oomsim.Model{}, fmt.Errorf("projector_config: %w", err)
	}
	tile := "2D" // DeepseekVLV2Config's class default
	if c.TileTag != nil {
		tile = *c.TileTag
	}
	if tile != "2D" {
		return oomsim.Model{}, fmt.Errorf("tile_tag %q: only \"2D\" (image_newline and view_seperator) is counted", tile)
	}
	nEmbed, _ := opt("n_embed", c.ProjectorConfig.NEmbed, 2048)
	return withVisionTower(m, "deepseek_vl_v2", vision+proj+2*nEmbed), nil
}

// countDeepSeekMHA counts DeepSeek-VL2-Tiny's language model: DeepSeekMoE
// blocks (the first first_k_dense_replace dense, then routed and shared
// experts with a softmax gate) under Llama's attention (use_mla false:
// q, k, v and o of num_attention_heads × hidden/heads, biases when
// attention_bias), an untied head.
func countDeepSeekMHA(c hfConfig) (oomsim.Model, error) {
	var f fields
	d, denseFFN, err := shapedDecoder(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	x := readRoutedExperts(c, &f)
	expertFFN, E, nShared, topK, firstDense, freq := x.expertFFN, x.E, x.nShared, x.topK, x.firstDense, x.freq
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := x.check(); err != nil {
		return oomsim.Model{}, err
	}
	if err := tooMany(d.L, E+nShared, 3*d.h, max(expertFFN, denseFFN)); err != nil {
		return oomsim.Model{}, err
	}
	bias := flag(c.AttentionBias, false)
	d.qkvBias, d.oBias = bias, bias
	d.norms = 2
	d.tied = flag(c.TieWordEmbeddings, false)
	scoreBias := int64(0)
	if c.TopKMethod == "noaux_tc" {
		scoreBias = 1
	}
	h := d.h
	d.experts, d.topK = E, topK
	d.activeFFN = (topK + nShared) * expertFFN
	d.mlp = func(i int64) (int64, int64, int64) {
		if i < firstDense || (i-firstDense)%freq != 0 {
			p := 3 * h * denseFFN
			return p, p, p
		}
		one := 3 * h * expertFFN
		gate := h*E + scoreBias*E
		return E*one + gate + nShared*one, topK*one + gate + nShared*one, (E + nShared) * one
	}
	return d.count(), nil
}

// vl2VisionParams counts DeepSeek-VL2's timm VisionTransformer
// (siglip_vit.py, num_classes 0): a Conv2d patch embedding with a bias, a
// learned position per patch (and a class token when class_token), layers
// blocks of two LayerNorms, a fused qkv and a projection with biases and
// a two-Linear MLP of int(width × mlp_ratio) with biases, a final
// LayerNorm, and, for global_pool "map", the attention-pooling head
// (AttentionPoolLatent: a latent, q, kv and proj with biases, a LayerNorm
// and an MLP), which the checkpoints store although the model does not
// run it (ignore_head).
func vl2VisionParams(v *qwenVision) (int64, error) {
	if v == nil {
		return 0, fmt.Errorf("missing")
	}
	var f fields
	w := f.need("width", v.Width)
	layers := f.need("layers", v.Layers)
	patch := f.need("patch_size", v.PatchSize)
	image := f.need("image_size", v.ImageSize)
	if f.err != nil {
		return 0, f.err
	}
	if v.MLPRatio == nil || *v.MLPRatio <= 0 || *v.MLPRatio > 64 {
		return 0, fmt.Errorf("mlp_ratio is missing or not a positive ratio")
	}
	if patch <= 0 || image < patch {
		return 0, fmt.Errorf("image_size %d and patch_size %d do not make patches", image, patch)
	}
	mlp := int64(float64(w) * *v.MLPRatio)
	positions := (image / patch) * (image / patch)
	prefix := int64(0)
	if flag(v.ClassToken, false) {
		prefix = 1
	}
	for _, err := range []error{tooMany(layers, 4*w, w+mlp), tooMany(positions+prefix, w), tooMany(3*patch*patch, w)} {
		if err != nil {
			return 0, err
		}
	}
	block := 2*2*w + (w*3*w + 3*w) + (w*w + w) + (w*mlp + mlp) + (mlp*w + w)
	n := 3*patch*patch*w + w + (positions+prefix)*w + prefix*w + layers*block + 2*w
	pool := v.GlobalPool
	if pool == "" {
		pool = "map" // VisionEncoderConfig's default
	}
	switch pool {
	case "map":
		n += w + (w*w + w) + (w*2*w + 2*w) + (w*w + w) + 2*w + (w*mlp + mlp) + (mlp*w + w)
	case "token", "avg": // avg: fc_norm in place of the final norm, the same size
	default:
		return 0, fmt.Errorf("global_pool %q is not one of map, token, avg", v.GlobalPool)
	}
	return n, nil
}

// vl2ProjectorParams counts DeepSeek-VL2's MlpProjector.
func vl2ProjectorParams(p *vl2Projector) (int64, error) {
	if p == nil {
		return 0, fmt.Errorf("missing")
	}
	var f fields
	in := f.opt("input_dim", p.InputDim, 1152)
	n := f.opt("n_embed", p.NEmbed, 2048)
	depth := f.opt("depth", p.Depth, 2)
	ratio := f.opt("mlp_ratio", p.MLPRatio, 1)
	down := f.opt("downsample_ratio", p.DownsampleRatio, 2)
	if f.err != nil {
		return 0, f.err
	}
	if depth > maxLayers || ratio > 64 || down > 64 {
		return 0, fmt.Errorf("depth %d, mlp_ratio %d or downsample_ratio %d is out of range", depth, ratio, down)
	}
	if err := tooMany(depth+1, in*down*down+n*ratio, n*ratio); err != nil {
		return 0, err
	}
	linear := func(a, b int64) int64 { return a*b + b }
	var total int64
	kind := strings.TrimSpace(p.ProjectorType)
	if kind == "" {
		kind = "downsample_mlp_gelu"
	}
	switch kind {
	case "identity":
	case "linear":
		total = linear(in, n)
	case "mlp_gelu":
		total = linear(in, n) + max(depth-1, 0)*linear(n, n)
	case "downsample_mlp_gelu":
		hid := n * ratio
		total = linear(in*down*down, hid) + max(depth-2, 0)*linear(hid, hid) + linear(hid, n)
	default:
		return 0, fmt.Errorf("projector_type %q is not one of identity, linear, mlp_gelu, downsample_mlp_gelu", p.ProjectorType)
	}
	if flag(p.TokenPooling, false) {
		total += linear(in*4, in)
	}
	return total, nil
}
