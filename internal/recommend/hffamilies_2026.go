package recommend

import (
	"fmt"
	"slices"

	"github.com/devctl/devctl/internal/oomsim"
)

// hfConfig2026 holds the config.json fields of the families added in 2026
// (embedded in hfConfig, so one Unmarshal fills both).
type hfConfig2026 struct {
	// Llama 4
	IntermediateSizeMLP    *int64   `json:"intermediate_size_mlp"`
	InterleaveMoELayerStep *int64   `json:"interleave_moe_layer_step"`
	MoELayers              []int64  `json:"moe_layers"`
	SharedIntermediateSize *int64   `json:"shared_intermediate_size"` // GraniteMoeShared
	UseQKNorm              *bool    `json:"use_qk_norm"`              // Cohere
	UseBias                *bool    `json:"use_bias"`                 // StarCoder2, ERNIE 4.5
	LMHeadBias             *bool    `json:"lm_head_bias"`             // PhiMoE
	FullAttentionInterval  *int64   `json:"full_attention_interval"`  // Qwen3-Next
	LayerTypes             []string `json:"layer_types"`
	LinearNumKeyHeads      *int64   `json:"linear_num_key_heads"`
	LinearNumValueHeads    *int64   `json:"linear_num_value_heads"`
	LinearKeyHeadDim       *int64   `json:"linear_key_head_dim"`
	LinearValueHeadDim     *int64   `json:"linear_value_head_dim"`
	LinearConvKernelDim    *int64   `json:"linear_conv_kernel_dim"`

	// MPT and DBRX (MosaicML's names)
	NHeads         *int64      `json:"n_heads"`
	NLayers        *int64      `json:"n_layers"`
	ExpansionRatio *float64    `json:"expansion_ratio"`
	MaxSeqLen      *int64      `json:"max_seq_len"`
	AttnConfig     *mosaicAttn `json:"attn_config"`
	VisionConfig   *qwenVision `json:"vision_config"`
	FFNConfig      *dbrxFFN    `json:"ffn_config"`

	// Gemma 4
	GlobalHeadDim           *int64        `json:"global_head_dim"`
	NumGlobalKeyValueHeads  *int64        `json:"num_global_key_value_heads"`
	AttentionKEqV           *bool         `json:"attention_k_eq_v"`
	EnableMoEBlock          *bool         `json:"enable_moe_block"`
	TopKExperts             *int64        `json:"top_k_experts"`
	HiddenSizePerLayerInput *int64        `json:"hidden_size_per_layer_input"`
	VocabSizePerLayerInput  *int64        `json:"vocab_size_per_layer_input"`
	NumKVSharedLayers       *int64        `json:"num_kv_shared_layers"`
	UseDoubleWideMLP        *bool         `json:"use_double_wide_mlp"`
	AudioConfig             *gemma3nAudio `json:"audio_config"`

	// Nemotron-H (hybrid Mamba-2)
	HybridOverridePattern           string `json:"hybrid_override_pattern"`
	MambaNumHeads                   *int64 `json:"mamba_num_heads"`
	MambaHeadDim                    *int64 `json:"mamba_head_dim"`
	NGroups                         *int64 `json:"n_groups"`
	SSMStateSize                    *int64 `json:"ssm_state_size"`
	ConvKernel                      *int64 `json:"conv_kernel"`
	UseConvBias                     *bool  `json:"use_conv_bias"`
	MambaProjBias                   *bool  `json:"mamba_proj_bias"`
	MoESharedExpertIntermediateSize *int64 `json:"moe_shared_expert_intermediate_size"`

	// DistilBERT
	Dim       *int64 `json:"dim"`
	HiddenDim *int64 `json:"hidden_dim"`
}

// qwenVision holds the vision_config fields of Qwen2-VL and Qwen2.5-VL.
type qwenVision struct {
	Depth             *int64   `json:"depth"`
	EmbedDim          *int64   `json:"embed_dim"`
	HiddenSize        *int64   `json:"hidden_size"`
	IntermediateSize  *int64   `json:"intermediate_size"`
	OutHiddenSize     *int64   `json:"out_hidden_size"`
	MLPRatio          *float64 `json:"mlp_ratio"`
	InChans           *int64   `json:"in_chans"`
	InChannels        *int64   `json:"in_channels"`
	PatchSize         *int64   `json:"patch_size"`
	SpatialMergeSize  *int64   `json:"spatial_merge_size"`
	TemporalPatchSize *int64   `json:"temporal_patch_size"`
	// Qwen3.5's learned position table
	NumPositionEmbeddings *int64 `json:"num_position_embeddings"`
	// Qwen3-VL's DeepStack: the blocks whose features a merger of their
	// own feeds into the language model's first layers
	DeepstackVisualIndexes []int64 `json:"deepstack_visual_indexes"`
	// Gemma 4's vision tower
	NumAttentionHeads     *int64 `json:"num_attention_heads"`
	NumKeyValueHeads      *int64 `json:"num_key_value_heads"`
	HeadDim               *int64 `json:"head_dim"`
	PositionEmbeddingSize *int64 `json:"position_embedding_size"`
	// SigLIP (Gemma 3's vision tower)
	NumHiddenLayers *int64 `json:"num_hidden_layers"`
	ImageSize       *int64 `json:"image_size"`
	NumChannels     *int64 `json:"num_channels"`
	// Llama 3.2 Vision's tiles
	mllamaVisionFields
	// LLaVA's CLIP and InternVL's InternViT
	wrappedVisionFields
	// Kimi-VL's MoonViT and DeepSeek-VL2's SigLIP
	famGVisionFields
	// Gemma 3n's timm tower and its soft-token vocabulary
	Architecture string `json:"architecture"`
	VocabSize    *int64 `json:"vocab_size"`
}

// siglipParams counts Gemma 3's vision tower and projector: SigLIP's
// patch Conv2d with a bias, a learned position per patch ((image_size /
// patch_size)²), num_hidden_layers blocks of two LayerNorms, q, k, v and
// an output projection with biases and a two-Linear MLP with biases, a
// post-LayerNorm; then the multimodal projector, a hidden × text hidden
// matrix and its RMSNorm (Gemma3MultiModalProjector).
func siglipParams(v *qwenVision, textHidden int64) (int64, error) {
	if v == nil {
		return 0, fmt.Errorf("no vision_config")
	}
	var f fields
	h := f.need("hidden_size", v.HiddenSize)
	inter := f.need("intermediate_size", v.IntermediateSize)
	layers := f.need("num_hidden_layers", v.NumHiddenLayers)
	patch := f.opt("patch_size", v.PatchSize, 14)
	image := f.opt("image_size", v.ImageSize, 896)
	ch := f.opt("num_channels", v.NumChannels, 3)
	if f.err != nil {
		return 0, f.err
	}
	if patch <= 0 || image < patch {
		return 0, fmt.Errorf("image_size %d and patch_size %d do not make patches", image, patch)
	}
	positions := (image / patch) * (image / patch)
	block := 2*h + 4*(h*h+h) + 2*h + (h*inter + inter) + (inter*h + h)
	for _, err := range []error{tooMany(layers, block), tooMany(positions, h), tooMany(ch*patch*patch, h), tooMany(h, textHidden)} {
		if err != nil {
			return 0, err
		}
	}
	return ch*patch*patch*h + h + positions*h + layers*block + 2*h + h*textHidden + h, nil
}

type mosaicAttn struct {
	KVNHeads *int64 `json:"kv_n_heads"`
}

type dbrxFFN struct {
	FFNHiddenSize *int64 `json:"ffn_hidden_size"`
	MoENumExperts *int64 `json:"moe_num_experts"`
	MoETopK       *int64 `json:"moe_top_k"`
}

// countFamily2026 dispatches the families added in 2026; ok is false for
// any other model_type.
func countFamily2026(c hfConfig, family string) (m oomsim.Model, ok bool, err error) {
	switch family {
	case "granite", "smollm3":
		// Granite 3.x is Llama with embedding, attention, residual and
		// logits multipliers (scalars, no parameters); SmolLM3 is Llama
		// with RoPE left out of every fourth layer (no parameters either)
		// whose embeddings are tied unless the file says otherwise.
		if family == "smollm3" && c.TieWordEmbeddings == nil {
			tied := true
			c.TieWordEmbeddings = &tied
		}
		m, err = countDecoder(c, "llama")
	case "exaone":
		// EXAONE 3/3.5 (remote code) is Llama under other names: num_layers,
		// a fused-free attention and c_fc_0/c_fc_1/c_proj MLP.
		if c.NumHiddenLayers == nil {
			c.NumHiddenLayers = c.NumLayers
		}
		m, err = countDecoder(c, "llama")
	case "ernie4_5":
		m, err = countErnie(c)
	case "glm", "glm4":
		m, err = countGLM(c, family)
	case "gpt_oss":
		m, err = countGPTOSS(c)
	case "llama4", "llama4_text":
		tc := c
		if family == "llama4" {
			if c.TextConfig == nil {
				return m, true, fmt.Errorf("no text_config")
			}
			tc = *c.TextConfig
		}
		m, err = countLlama4(tc)
		if err == nil && family == "llama4" {
			m.Notes = append(m.Notes, "llama4: the language model only; the vision encoder and its projector are not counted")
		}
	case "cohere", "cohere2":
		m, err = countCohere(c)
	case "starcoder2":
		m, err = countStarCoder2(c)
	case "olmo":
		m, err = countOLMo(c)
	case "olmoe", "granitemoe", "granitemoeshared", "phimoe":
		m, err = countMoE2026(c, family)
	case "mpt":
		m, err = countMPT(c)
	case "dbrx":
		m, err = countDBRX(c)
	case "mistral3", "qwen2_vl", "qwen2_5_vl":
		m, err = countVisionLanguage(c, family)
	case "mt5":
		m, err = countT5(c)
	case "umt5":
		m, err = countUMT5(c)
	case "qwen3_next":
		m, err = countQwen3Next(c)
	case "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text":
		m, err = countQwen35(c, family)
	case "glm4_moe":
		m, err = countGLM4MoE(c)
	case "qwen3_vl", "qwen3_vl_moe":
		m, err = countQwen3VL(c, family)
	case "gemma4", "gemma4_text":
		m, err = countGemma4(c, family)
	case "nemotron_h":
		m, err = countNemotronH(c)
	case "distilbert":
		m, err = countDistilBERT(c)
	case "mllama":
		m, err = countMllama(c)
	case "gemma3n", "gemma3n_text":
		m, err = countGemma3n(c, family)
	case "lfm2":
		m, err = countLFM2(c)
	case "granitemoehybrid":
		m, err = countGraniteMoeHybrid(c)
	case "ernie4_5_moe":
		m, err = countErnieMoE(c)
	case "minimax_m2":
		m, err = countMiniMaxM2(c)
	case "minimax", "minimax_m1":
		m, err = countMiniMax(c, family)
	case "internlm":
		m, err = countInternLM(c)
	case "baichuan":
		m, err = countBaichuan(c)
	case "llava", "llava_next":
		m, err = countLlava(c, family)
	case "internvl":
		m, err = countInternVL(c)
	case "falcon_h1":
		m, err = countFalconH1(c)
	case "glm4v", "glm4v_moe", "seed_oss", "olmo3", "exaone4":
		m, err = countFamilyE(c, family)
	case "hunyuan_v1_moe", "hunyuan_v1_dense", "bailing_moe", "lfm2_moe", "qwen2_5_omni", "hunyuan":
		m, err = countFamiliesF(c, family)
	case "kimi_vl", "kimi_k25", "deepseek_vl_v2":
		m, err = countFamiliesG(c, family)
	case "phi3_v":
		m, err = countPhi3V(c)
	case "qwen3_omni_moe":
		m, err = countQwen3OmniMoe(c)
	default:
		return m, false, nil
	}
	return m, true, err
}

// countErnie counts Ernie4_5ForCausalLM: Llama with use_bias on every
// attention and MLP projection, an explicit head_dim, tied embeddings by
// default.
func countErnie(c hfConfig) (oomsim.Model, error) {
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	bias := flag(c.UseBias, false)
	d.norms, d.qkvBias, d.oBias = 2, bias, bias
	d.tied = flag(c.TieWordEmbeddings, true)
	d.mlp, d.activeFFN = dense(d.h, ffn, bias), ffn
	return d.count(), nil
}

// countGLM counts GlmForCausalLM (GLM-4-9B in transformers' own format,
// "glm") and Glm4ForCausalLM (GLM-4-0414, "glm4"): q/k/v with biases
// (attention_bias, true by default) and o_proj without, a fused gate_up
// MLP (the count of a gated one), RMSNorms, an untied head. GLM-4-0414 adds
// post-norms after attention and after the MLP (four norms a block).
// head_dim is transformers' default 128 when the file does not say.
func countGLM(c hfConfig, family string) (oomsim.Model, error) {
	var f fields
	d := standardShape(c, &f)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if c.HeadDim == nil {
		hd := int64(128)
		c.HeadDim = &hd
	}
	if err := d.checkHeads(c, &f); err != nil {
		return oomsim.Model{}, err
	}
	ffn := f.need("intermediate_size", c.IntermediateSize)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	d.norms = 2
	if family == "glm4" {
		d.norms = 4
	}
	d.qkvBias, d.oBias = flag(c.AttentionBias, true), false
	d.tied = flag(c.TieWordEmbeddings, false)
	d.mlp, d.activeFFN = dense(d.h, ffn, false), ffn
	return d.count(), nil
}

// countGPTOSS counts GptOssForCausalLM: attention with biases on q, k, v
// and o and a learned sink logit per head, layers alternating sliding-window
// and full attention (the same parameters), and a mixture of experts whose
// router and experts all carry biases (a fused gate_up of twice the
// intermediate size, then down). The count is of the bf16 model; the Hub
// checkpoints store the experts as MXFP4 blocks and scales.
func countGPTOSS(c hfConfig) (oomsim.Model, error) {
	var f fields
	d, ffn, err := shapedDecoder(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	E := f.need("num_local_experts", c.NumLocalExperts)
	topK := f.need("num_experts_per_tok", c.NumExpertsPerTok)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if err := tooMany(d.L, E, 3*d.h, ffn); err != nil {
		return oomsim.Model{}, err
	}
	d.norms = 2
	d.qkvBias = flag(c.AttentionBias, true)
	d.oBias = d.qkvBias
	d.attnExtra = d.heads // sinks
	d.tied = flag(c.TieWordEmbeddings, false)
	h := d.h
	one := 3*h*ffn + 2*ffn + h // gate_up and down with their biases
	router := h*E + E
	d.experts, d.topK, d.activeFFN = E, topK, topK*ffn
	d.mlp = func(int64) (int64, int64, int64) {
		return E*one + router, topK*one + router, E * 3 * h * ffn
	}
	return d.count(), nil
}

// countLlama4 counts Llama4ForCausalLM's text model (llama4_text): layers
// listed in moe_layers (by default every interleave_moe_layer_step-th) hold
// routed experts (fused gate_up and down, a router without bias) and a
// shared expert of intermediate_size; the others a dense MLP of
// intermediate_size_mlp. The q/k L2 norm has no parameters; the head is
// untied.
func countLlama4(c hfConfig) (oomsim.Model, error) {
	var f fields
	d, ffn, err := shapedDecoder(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	denseFFN := f.opt("intermediate_size_mlp", c.IntermediateSizeMLP, ffn)
	E := f.need("num_local_experts", c.NumLocalExperts)
	topK := f.opt("num_experts_per_tok", c.NumExpertsPerTok, 1)
	step := f.opt("interleave_moe_layer_step", c.InterleaveMoELayerStep, 1)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if err := tooMany(d.L, E+1, 3*d.h, max(ffn, denseFFN)); err != nil {
		return oomsim.Model{}, err
	}
	d.norms = 2
	d.qkvBias = flag(c.AttentionBias, false)
	d.oBias = d.qkvBias
	d.tied = flag(c.TieWordEmbeddings, false)
	moeLayers := c.MoELayers
	if moeLayers == nil {
		for i := step - 1; i < d.L; i += step {
			moeLayers = append(moeLayers, i)
		}
	}
	h := d.h
	one := 3 * h * ffn
	denseMLP := dense(h, denseFFN, false)
	d.experts, d.topK, d.activeFFN = E, topK, (topK+1)*ffn
	d.mlp = func(i int64) (int64, int64, int64) {
		if !slices.Contains(moeLayers, i) {
			return denseMLP(i)
		}
		return E*one + one + h*E, topK*one + one + h*E, (E + 1) * one
	}
	return d.count(), nil
}

// countCohere counts CohereForCausalLM (Command R, Aya 23, Aya Expanse) and
// Cohere2ForCausalLM (Command R7B, Command A; sliding-window layers with the
// same parameters): one LayerNorm without bias per block feeding attention
// and the MLP in parallel, optional per-head LayerNorms on q and k
// (use_qk_norm), no biases, a head tied to the embedding by default.
func countCohere(c hfConfig) (oomsim.Model, error) {
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	d.norms = 1
	d.qkvBias = flag(c.AttentionBias, false)
	d.oBias = d.qkvBias
	if flag(c.UseQKNorm, false) {
		d.attnExtra = (d.heads + d.kv) * d.hd
	}
	d.tied = flag(c.TieWordEmbeddings, true)
	d.mlp, d.activeFFN = dense(d.h, ffn, false), ffn
	return d.count(), nil
}

// countStarCoder2 counts Starcoder2ForCausalLM: grouped-query attention
// with biases on q, k, v and o (use_bias), a two-matrix GELU MLP with
// biases, LayerNorms with biases, rotary positions, a tied head.
func countStarCoder2(c hfConfig) (oomsim.Model, error) {
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	bias := flag(c.UseBias, true)
	d.norms, d.normBias = 2, true
	d.qkvBias, d.oBias = bias, bias
	d.tied = flag(c.TieWordEmbeddings, true)
	d.mlp, d.activeFFN = plain(d.h, ffn, bias), ffn
	return d.count(), nil
}

// countOLMo counts OlmoForCausalLM (OLMo 1 in transformers' format): its
// LayerNorms have neither weight nor bias, so the blocks hold only the
// attention and the gated MLP, without biases.
func countOLMo(c hfConfig) (oomsim.Model, error) {
	d, ffn, err := readDecoder(c)
	if err != nil {
		return oomsim.Model{}, err
	}
	d.norms, d.noFinalNorm = 0, true
	d.qkvBias = flag(c.AttentionBias, false)
	d.oBias = d.qkvBias
	d.tied = flag(c.TieWordEmbeddings, false)
	d.mlp, d.activeFFN = dense(d.h, ffn, false), ffn
	return d.count(), nil
}

// countMoE2026 counts mixtures of experts whose every layer routes:
// OLMoE (RMSNorms over the whole q and k projections, 64 experts of
// intermediate_size), Granite MoE (Granite's multipliers; each expert's
// fused input_linear and output_linear; GraniteMoeShared adds a shared
// expert of shared_intermediate_size) and PhiMoE (LayerNorms with biases,
// biases on q/k/v/o, Mixtral's experts, an untied head with a bias).
// Routers have no bias.
func countMoE2026(c hfConfig, family string) (oomsim.Model, error) {
	var f fields
	d, ffn, err := shapedDecoder(c, &f)
	if err != nil {
		return oomsim.Model{}, err
	}
	var E int64
	if family == "olmoe" {
		E = f.need("num_experts", c.NumExperts)
	} else {
		E = f.need("num_local_experts", c.NumLocalExperts)
	}
	topK := f.need("num_experts_per_tok", c.NumExpertsPerTok)
	var shared int64
	if family == "granitemoeshared" {
		shared = f.opt("shared_intermediate_size", c.SharedIntermediateSize, 0)
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if err := tooMany(d.L, E+1, 3*d.h, max(ffn, shared)); err != nil {
		return oomsim.Model{}, err
	}
	d.norms = 2
	d.qkvBias = flag(c.AttentionBias, false)
	d.oBias = d.qkvBias
	d.tied = flag(c.TieWordEmbeddings, false)
	switch family {
	case "olmoe":
		d.attnExtra = (d.heads + d.kv) * d.hd
	case "phimoe":
		d.normBias = true
		d.headBias = flag(c.LMHeadBias, false)
	}
	h := d.h
	one := 3 * h * ffn
	d.experts, d.topK, d.activeFFN = E, topK, topK*ffn+shared
	d.mlp = func(int64) (int64, int64, int64) {
		p, a, lin := E*one+h*E, topK*one+h*E, E*one
		p, a, lin = p+3*h*shared, a+3*h*shared, lin+3*h*shared
		return p, a, lin
	}
	return d.count(), nil
}

// countMPT counts MptForCausalLM (MPT-7B, MPT-30B): ALiBi (no position
// parameters), a fused Wqkv and out_proj, an up/down MLP of expansion_ratio
// times d_model, LayerNorms whose bias transformers drops (weights only),
// no Linear biases (no_bias), a head tied to wte.
func countMPT(c hfConfig) (oomsim.Model, error) {
	var f fields
	d := decoder{norms: 2, tied: true}
	d.h = f.need("d_model", c.DModel)
	d.L = f.need("n_layers", c.NLayers)
	d.heads = f.need("n_heads", c.NHeads)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.maxPos, _ = opt("max_seq_len", c.MaxSeqLen, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(d.heads, d.h, "n_heads", "d_model"); err != nil {
		return oomsim.Model{}, err
	}
	ratio := 4.0
	if c.ExpansionRatio != nil {
		ratio = *c.ExpansionRatio
	}
	if !(ratio > 0 && ratio <= 64) {
		return oomsim.Model{}, fmt.Errorf("expansion_ratio %v is out of range (0..64]", ratio)
	}
	ffn := int64(ratio * float64(d.h))
	if ffn <= 0 {
		return oomsim.Model{}, fmt.Errorf("expansion_ratio %v gives no MLP", ratio)
	}
	bias := !flag(c.NoBias, true)
	d.hd, d.kv = d.h/d.heads, d.heads
	d.qkvBias, d.oBias = bias, bias
	d.mlp, d.activeFFN = plain(d.h, ffn, bias), ffn
	m := d.count()
	m.BufferBytes = 0 // ALiBi, no rotary table
	return m, nil
}

// countDBRX counts DbrxForCausalLM: a fused Wqkv with attn_config's
// kv_n_heads key/value heads and out_proj, LayerNorms without biases, and
// in every block a mixture of ffn_config's moe_num_experts gated experts
// (w1, v1, w2) with a router, all without biases; an untied head.
func countDBRX(c hfConfig) (oomsim.Model, error) {
	if c.AttnConfig == nil || c.FFNConfig == nil {
		return oomsim.Model{}, fmt.Errorf("missing attn_config or ffn_config")
	}
	var f fields
	d := decoder{norms: 2}
	d.h = f.need("d_model", c.DModel)
	d.L = f.need("n_layers", c.NLayers)
	d.heads = f.need("n_heads", c.NHeads)
	d.vocab = f.need("vocab_size", c.VocabSize)
	d.kv = f.opt("kv_n_heads", c.AttnConfig.KVNHeads, 1)
	ffn := f.need("ffn_hidden_size", c.FFNConfig.FFNHiddenSize)
	E := f.need("moe_num_experts", c.FFNConfig.MoENumExperts)
	topK := f.need("moe_top_k", c.FFNConfig.MoETopK)
	d.maxPos, _ = opt("max_seq_len", c.MaxSeqLen, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := headsFit(d.heads, d.h, "n_heads", "d_model"); err != nil {
		return oomsim.Model{}, err
	}
	if d.heads%d.kv != 0 {
		return oomsim.Model{}, fmt.Errorf("n_heads %d is not a multiple of kv_n_heads %d", d.heads, d.kv)
	}
	if topK > E {
		return oomsim.Model{}, fmt.Errorf("moe_top_k %d is more than the %d experts", topK, E)
	}
	if err := tooMany(d.L, E, 3*d.h, ffn); err != nil {
		return oomsim.Model{}, err
	}
	d.hd = d.h / d.heads
	d.tied = flag(c.TieWordEmbeddings, false)
	h := d.h
	one := 3 * h * ffn
	d.experts, d.topK, d.activeFFN = E, topK, topK*ffn
	d.mlp = func(int64) (int64, int64, int64) {
		return E*one + h*E, topK*one + h*E, E * one
	}
	return d.count(), nil
}

// countVisionLanguage counts the language model of a vision-language
// config: Mistral 3 (Mistral Small 3.1/3.2, text_config of model_type
// mistral) and Qwen2-VL / Qwen2.5-VL (a Qwen2 language model whose fields
// sit at the top level, or in text_config in newer files). The vision
// encoder and the projector are not counted; the notes say so.
func countVisionLanguage(c hfConfig, family string) (oomsim.Model, error) {
	tc := c
	if c.TextConfig != nil {
		tc = *c.TextConfig
	} else if family == "mistral3" {
		return oomsim.Model{}, fmt.Errorf("no text_config")
	}
	if family != "mistral3" && tc.TieWordEmbeddings == nil {
		tc.TieWordEmbeddings = c.TieWordEmbeddings
	}
	lm := "qwen2"
	if family == "mistral3" {
		lm = "mistral"
	}
	m, err := countDecoder(tc, lm)
	if err != nil {
		return m, err
	}
	if family == "mistral3" {
		m.Notes = append(m.Notes, family+": the language model only; the Pixtral vision encoder and the multimodal projector are not counted")
		return m, nil
	}
	n, err := qwenVisionParams(c.VisionConfig, family)
	if err != nil {
		m.Notes = append(m.Notes, family+": the language model only; the vision encoder and its merger are not counted")
		return m, nil
	}
	return withVisionTower(m, family, n), nil
}

// withVisionTower adds a vision-language model's vision encoder to the
// count: it is loaded with the language model and stays on the device
// whatever the input (the checkpoints' indexes hold it). 8-bit and 4-bit
// releases keep it 16-bit (Qwen's GPTQ and AWQ checkpoints quantise the
// language model only), so it is counted with the unquantised parameters.
// Its activations, for images, are not planned.
func withVisionTower(m oomsim.Model, family string, n int64) oomsim.Model {
	return withEncoder(m, n, fmt.Sprintf("%s: the vision encoder and its merger (%d parameters by vision_config) are counted, 16-bit under quantised weights; image activations are not planned", family, n))
}

// withEncoder adds an encoder of n parameters that a quantised release
// keeps 16-bit (VisionParams), with the note that says so.
func withEncoder(m oomsim.Model, n int64, note string) oomsim.Model {
	m.Params += n
	m.UnquantizedParams += n
	m.VisionParams += n
	m.Notes = append(m.Notes, note)
	return m
}

// withAudioEncoder adds an omni model's audio encoder as withVisionTower
// adds a vision tower: resident, kept 16-bit under quantised weights
// (counted with VisionParams, the encoders a quantised release keeps), its
// activations not planned.
func withAudioEncoder(m oomsim.Model, family string, n int64) oomsim.Model {
	return withEncoder(m, n, fmt.Sprintf("%s: the audio encoder (%d parameters by audio_config) is counted, 16-bit under quantised weights; audio activations are not planned", family, n))
}

// qwenVisionParams counts the vision encoder of Qwen2-VL (LayerNorms, an
// MLP of mlp_ratio × embed_dim with biases, out to the language model's
// hidden_size) or Qwen2.5-VL (RMSNorms, a gated MLP of intermediate_size
// with biases, out to out_hidden_size): a bias-free Conv3d patch embedding,
// depth blocks with a fused qkv and a projection (both with biases), and
// the merger, a norm and two Linear layers with biases over
// spatial_merge_size² patches.
func qwenVisionParams(v *qwenVision, family string) (int64, error) {
	if v == nil || family == "mistral3" {
		return 0, fmt.Errorf("no vision_config")
	}
	var f fields
	depth := f.need("depth", v.Depth)
	in := f.opt("in_chans", v.InChans, 0)
	if in == 0 {
		in = f.opt("in_channels", v.InChannels, 3)
	}
	patch := f.opt("patch_size", v.PatchSize, 14)
	merge := f.opt("spatial_merge_size", v.SpatialMergeSize, 2)
	temporal := f.opt("temporal_patch_size", v.TemporalPatchSize, 2)
	var ed, mlp, out, norm int64
	gated := family == "qwen2_5_vl"
	if gated {
		ed = f.need("hidden_size", v.HiddenSize)
		mlp = f.need("intermediate_size", v.IntermediateSize)
		out = f.need("out_hidden_size", v.OutHiddenSize)
		norm = ed // RMSNorm
	} else {
		ed = f.need("embed_dim", v.EmbedDim)
		out = f.need("hidden_size", v.HiddenSize)
		ratio := 4.0
		if v.MLPRatio != nil {
			ratio = *v.MLPRatio
		}
		if !(ratio > 0 && ratio <= 64) {
			return 0, fmt.Errorf("mlp_ratio %v is out of range", ratio)
		}
		mlp = int64(ratio * float64(ed))
		norm = 2 * ed // LayerNorm
	}
	if f.err != nil {
		return 0, f.err
	}
	hidden := ed * merge * merge
	for _, err := range []error{tooMany(depth, ed, 4*ed+3*mlp), tooMany(hidden, hidden+out), tooMany(in*temporal*patch*patch, ed)} {
		if err != nil {
			return 0, err
		}
	}
	block := 2*norm + ed*3*ed + 3*ed + ed*ed + ed
	if gated {
		block += 2*(ed*mlp+mlp) + mlp*ed + ed
	} else {
		block += ed*mlp + mlp + mlp*ed + ed
	}
	merger := norm + hidden*hidden + hidden + hidden*out + out
	return in*temporal*patch*patch*ed + depth*block + merger, nil
}

// countUMT5 counts UMT5ForConditionalGeneration (umT5, MT5's successor):
// T5 v1.1 blocks whose every layer, not only the first, has its own
// relative position bias.
func countUMT5(c hfConfig) (oomsim.Model, error) {
	m, err := countT5(c)
	if err != nil {
		return m, err
	}
	// countT5 read these already, so they are present and in range.
	enc := *c.NumLayers
	dec, _ := opt("num_decoder_layers", c.NumDecoderLayers, enc)
	buckets, _ := opt("relative_attention_num_buckets", c.RelativeAttentionNumBuckets, 32)
	extra := (enc - 1 + dec - 1) * buckets * *c.NumHeads
	m.Params += extra
	m.UnquantizedParams += extra
	return m, nil
}

// countQwen3Next counts Qwen3NextForCausalLM: a hybrid of Gated DeltaNet
// linear-attention layers and, every full_attention_interval-th layer (or
// as layer_types says), gated full attention (q_proj twice as wide for the
// output gate, per-head q/k RMSNorms); every layer a mixture of experts with
// a shared expert and its sigmoid gate. The multi-token-prediction block
// the checkpoint also stores is not loaded by transformers and not counted.
func countQwen3Next(c hfConfig) (oomsim.Model, error) {
	return countHybrid(c, "qwen3_next", true)
}

// countHybrid counts Qwen3-Next's hybrid decoder (see countQwen3Next) under
// the name the notes give it; with moe false every layer has a dense gated
// MLP of intermediate_size instead (Qwen3.5's dense models).
func countHybrid(c hfConfig, name string, moe bool) (oomsim.Model, error) {
	var f fields
	d := standardShape(c, &f)
	if err := d.checkHeads(c, &f); err != nil {
		return oomsim.Model{}, err
	}
	var E, expertFFN, shared, topK, ffn int64
	if moe {
		E = f.need("num_experts", c.NumExperts)
		expertFFN = f.need("moe_intermediate_size", c.MoEIntermediateSize)
		shared = f.opt("shared_expert_intermediate_size", c.SharedExpertIntermediateSize, 0)
		topK = f.need("num_experts_per_tok", c.NumExpertsPerTok)
	} else {
		ffn = f.need("intermediate_size", c.IntermediateSize)
	}
	interval := f.opt("full_attention_interval", c.FullAttentionInterval, 4)
	kHeads := f.need("linear_num_key_heads", c.LinearNumKeyHeads)
	vHeads := f.need("linear_num_value_heads", c.LinearNumValueHeads)
	kDim := f.need("linear_key_head_dim", c.LinearKeyHeadDim)
	vDim := f.need("linear_value_head_dim", c.LinearValueHeadDim)
	kernel := f.opt("linear_conv_kernel_dim", c.LinearConvKernelDim, 4)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if moe && topK > E {
		return oomsim.Model{}, fmt.Errorf("num_experts_per_tok %d is more than the %d experts", topK, E)
	}
	if err := tooMany(d.L, E+1, 3*d.h, max(expertFFN, shared, ffn, kHeads*kDim+vHeads*vDim)); err != nil {
		return oomsim.Model{}, err
	}
	if c.LayerTypes != nil && int64(len(c.LayerTypes)) != d.L {
		return oomsim.Model{}, fmt.Errorf("layer_types has %d entries for %d layers", len(c.LayerTypes), d.L)
	}
	full := func(i int64) bool {
		if c.LayerTypes != nil {
			return c.LayerTypes[i] == "full_attention"
		}
		return (i+1)%interval == 0
	}
	h := d.h
	q, k := d.heads*d.hd, d.kv*d.hd
	fullLinear := h*2*q + 2*h*k + q*h
	fullAttn := fullLinear + 2*d.hd
	keyDim, valueDim := kHeads*kDim, vHeads*vDim
	linLinear := h*(2*keyDim+2*valueDim) + h*2*vHeads + valueDim*h
	linAttn := linLinear + (2*keyDim+valueDim)*kernel + 2*vHeads + vDim
	mlp, mlpActive, mlpLinear, activeFFN := 3*h*ffn, 3*h*ffn, 3*h*ffn, ffn
	if moe {
		one := 3 * h * expertFFN
		mlp = E*one + h*E + 3*h*shared + h
		mlpActive = topK*one + h*E + 3*h*shared + h
		mlpLinear = E*one + 3*h*shared
		activeFFN = topK*expertFFN + shared
	}
	var body, active, linear, nFull int64
	for i := range d.L {
		attn, attnLin := linAttn, linLinear
		if full(i) {
			attn, attnLin = fullAttn, fullLinear
			nFull++
		}
		body += attn + 2*h + mlp
		active += attn + 2*h + mlpActive
		linear += attnLin + mlpLinear
	}
	var m oomsim.Model
	emb := d.vocab * h
	m.Params = emb + body + h
	m.ActiveParams = emb + active + h
	if !flag(c.TieWordEmbeddings, false) {
		m.HeadParams = emb
		m.Params += emb
		m.ActiveParams += emb
	}
	if !moe {
		m.ActiveParams = 0
	}
	m.UnquantizedParams = m.Params - linear
	m.BufferBytes = d.hd / 2 * 4
	m.Experts, m.ExpertsPerToken = int(E), int(topK)
	m.Notes = append(m.Notes, fmt.Sprintf("%s: %d of %d layers have full attention and a KV cache; the rest are linear attention with a fixed-size state per sequence; the multi-token-prediction block is not counted", name, nFull, d.L))
	// A Gated DeltaNet layer keeps, per sequence, its state (value heads
	// × key size × value size) and the last kernel − 1 inputs of its
	// convolution over q, k and v.
	state := (d.L - nFull) * (vHeads*kDim*vDim + (2*keyDim+valueDim)*(kernel-1))
	m.Arch = &oomsim.Arch{Layers: int(d.L), KVLayers: int(nFull), Hidden: int(h), Heads: int(d.heads), KVHeads: int(d.kv),
		HeadDim: int(d.hd), FFN: int(activeFFN), Vocab: int(d.vocab), MaxPositions: int(d.maxPos), Gated: true, StateValues: state}
	return m, nil
}
