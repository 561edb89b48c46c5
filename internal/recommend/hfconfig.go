package recommend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
)

// SupportedFamilies are the model_type values ParseHFConfig counts exactly.
var SupportedFamilies = []string{"llama", "mistral", "qwen2", "qwen3", "phi3", "gemma", "gemma2", "gemma3_text", "gemma3",
	"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "falcon", "gpt_neox", "opt", "bloom",
	"phi", "gpt_bigcode", "gpt_neo", "gptj", "stablelm", "olmo2", "internlm2", "chatglm",
	"whisper", "gpt2", "bert", "t5", "qwen", "RefinedWebModel", "RefinedWeb",
	"granite", "glm", "glm4", "gpt_oss", "llama4", "llama4_text", "cohere", "cohere2", "starcoder2", "olmo", "olmoe", "mpt",
	"mistral3", "qwen2_vl", "qwen2_5_vl", "granitemoe", "granitemoeshared", "phimoe", "exaone", "smollm3", "ernie4_5", "dbrx",
	"mt5", "umt5", "qwen3_next", "internlm", "baichuan", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "glm4_moe",
	"qwen3_vl", "qwen3_vl_moe", "glm4_moe_lite", "gemma4", "gemma4_text", "nemotron_h", "minicpm", "distilbert", "mllama", "gemma3n", "gemma3n_text",
	"lfm2", "granitemoehybrid", "ernie4_5_moe", "minimax_m2", "deepseek_v32", "glm_moe_dsa", "nemotron-nas", "mimo_v2_flash", "kimi_k2", "minimax", "minimax_m1",
	"llava", "llava_next", "internvl", "falcon_h1",
	"glm4v", "glm4v_moe", "seed_oss", "olmo3", "exaone4",
	"hunyuan_v1_moe", "hunyuan_v1_dense", "bailing_moe", "lfm2_moe", "qwen2_5_omni", "hunyuan",
	"kimi_vl", "kimi_k25", "deepseek_vl_v2", "phi3_v", "qwen3_omni_moe"}

// ErrUnsupportedFamily marks a config.json of a model_type devctl cannot count.
var ErrUnsupportedFamily = errors.New("unsupported model family")

// hfConfig holds the config.json fields the counters read. Pointers tell
// "absent" from zero.
type hfConfig struct {
	NameOrPath string `json:"_name_or_path"`
	ModelType  string `json:"model_type"`
	TorchDtype string `json:"torch_dtype"`

	HiddenSize            *int64 `json:"hidden_size"`
	NumHiddenLayers       *int64 `json:"num_hidden_layers"`
	NumAttentionHeads     *int64 `json:"num_attention_heads"`
	NumKeyValueHeads      *int64 `json:"num_key_value_heads"`
	HeadDim               *int64 `json:"head_dim"`
	IntermediateSize      *int64 `json:"intermediate_size"`
	VocabSize             *int64 `json:"vocab_size"`
	MaxPositionEmbeddings *int64 `json:"max_position_embeddings"`
	TieWordEmbeddings     *bool  `json:"tie_word_embeddings"`
	// Dropout on the attention probabilities, by the names families give it
	// (T5's dropout_rate applies to them too).
	AttentionProbsDropout *float64 `json:"attention_probs_dropout_prob"`
	AttnPdrop             *float64 `json:"attn_pdrop"`
	AttentionDropout      *float64 `json:"attention_dropout"`
	DropoutRate           *float64 `json:"dropout_rate"`
	AttentionBias         *bool    `json:"attention_bias"`
	MLPBias               *bool    `json:"mlp_bias"`

	// Mixture of experts (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3)
	NumLocalExperts              *int64    `json:"num_local_experts"`
	NumExperts                   *int64    `json:"num_experts"`
	NRoutedExperts               *int64    `json:"n_routed_experts"`
	NSharedExperts               *int64    `json:"n_shared_experts"`
	NumExpertsPerTok             *int64    `json:"num_experts_per_tok"`
	MoEIntermediateSize          *int64    `json:"moe_intermediate_size"`
	SharedExpertIntermediateSize *int64    `json:"shared_expert_intermediate_size"`
	DecoderSparseStep            *int64    `json:"decoder_sparse_step"`
	MLPOnlyLayers                []int64   `json:"mlp_only_layers"`
	FirstKDenseReplace           *int64    `json:"first_k_dense_replace"`
	MoELayerFreq                 layerFreq `json:"moe_layer_freq"`
	TopKMethod                   string    `json:"topk_method"`
	// DeepSeek multi-head latent attention
	QLoraRank     *int64 `json:"q_lora_rank"`
	KVLoraRank    *int64 `json:"kv_lora_rank"`
	QKNopeHeadDim *int64 `json:"qk_nope_head_dim"`
	QKRopeHeadDim *int64 `json:"qk_rope_head_dim"`
	VHeadDim      *int64 `json:"v_head_dim"`

	// Falcon, BLOOM, OPT
	NewDecoderArchitecture *bool  `json:"new_decoder_architecture"`
	MultiQuery             *bool  `json:"multi_query"`
	NumKVHeads             *int64 `json:"num_kv_heads"`
	NHeadKV                *int64 `json:"n_head_kv"` // Falcon's first (RefinedWeb) configs
	Bias                   *bool  `json:"bias"`
	NEmbedBloom            *int64 `json:"n_embed"`
	FFNDim                 *int64 `json:"ffn_dim"`
	WordEmbedProjDim       *int64 `json:"word_embed_proj_dim"`
	DoLayerNormBefore      *bool  `json:"do_layer_norm_before"`
	EnableBias             *bool  `json:"enable_bias"`

	// Whisper
	EncoderLayers         *int64 `json:"encoder_layers"`
	DecoderLayers         *int64 `json:"decoder_layers"`
	EncoderFFNDim         *int64 `json:"encoder_ffn_dim"`
	DecoderFFNDim         *int64 `json:"decoder_ffn_dim"`
	EncoderAttentionHeads *int64 `json:"encoder_attention_heads"`
	NumMelBins            *int64 `json:"num_mel_bins"`
	MaxSourcePositions    *int64 `json:"max_source_positions"`
	MaxTargetPositions    *int64 `json:"max_target_positions"`

	// Phi-1/1.5/2, StableLM, OLMo 2, InternLM2
	QKLayernorm         *bool `json:"qk_layernorm"`
	UseQKVBias          *bool `json:"use_qkv_bias"`
	UseParallelResidual *bool `json:"use_parallel_residual"`

	// ChatGLM (GLM-4)
	FFNHiddenSize       *int64 `json:"ffn_hidden_size"`
	KVChannels          *int64 `json:"kv_channels"`
	MultiQueryAttention *bool  `json:"multi_query_attention"`
	MultiQueryGroupNum  *int64 `json:"multi_query_group_num"`
	PaddedVocabSize     *int64 `json:"padded_vocab_size"`
	AddQKVBias          *bool  `json:"add_qkv_bias"`
	AddBiasLinear       *bool  `json:"add_bias_linear"`
	PostLayerNorm       *bool  `json:"post_layer_norm"`
	RMSNorm             *bool  `json:"rmsnorm"`
	// ChatGLM-6B (the first generation)
	InnerHiddenSize   *int64 `json:"inner_hidden_size"`
	MaxSequenceLength *int64 `json:"max_sequence_length"`

	// Qwen (the first generation, remote code)
	NoBias    *bool  `json:"no_bias"`
	SeqLength *int64 `json:"seq_length"`

	// Gemma 3 (multimodal) keeps the language model's fields here.
	TextConfig *hfConfig `json:"text_config"`

	// GPT-2
	NEmbd      *int64 `json:"n_embd"`
	NLayer     *int64 `json:"n_layer"`
	NHead      *int64 `json:"n_head"`
	NInner     *int64 `json:"n_inner"`
	NPositions *int64 `json:"n_positions"`

	// BERT
	TypeVocabSize *int64 `json:"type_vocab_size"`

	// T5
	DModel                      *int64 `json:"d_model"`
	DKV                         *int64 `json:"d_kv"`
	DFF                         *int64 `json:"d_ff"`
	NumLayers                   *int64 `json:"num_layers"`
	NumDecoderLayers            *int64 `json:"num_decoder_layers"`
	NumHeads                    *int64 `json:"num_heads"`
	FeedForwardProj             string `json:"feed_forward_proj"`
	RelativeAttentionNumBuckets *int64 `json:"relative_attention_num_buckets"`

	hfConfig2026
	hfSliding
	mllamaFields
	gemma3nFields
	hfConvHybrid
	hfMambaHybrid
	hfErnieMoE
	hfMiniMax
	hfDSA
	hfVLWrapper
	hfFalconH1
	hfFamE
	hfMoEVariants
	hfFamG
	hfPhi3V
	hfNemotronNAS
	hfMiMo
	hfMTP
}

// Bounds on config.json dimensions, far above any published model, chosen
// so that no product in the counters can overflow int64 (layers × width ×
// heads × head_dim stays below 2^60). The total is then held to MaxParams.
const (
	maxDim    = 1 << 22 // positions
	maxWidth  = 1 << 20 // hidden, intermediate, vocabulary
	maxLayers = 1 << 12
	maxHeads  = 1 << 12 // heads, KV heads, head_dim, d_kv, buckets
)

// nullNonFinite turns the bare NaN, Infinity and -Infinity that Python's
// json module writes (transformers saves Mamba2's time_step_limit as
// [0.0, Infinity]: nvidia/Nemotron-H-*'s config.json) into null, which
// encoding/json reads as "not set"; inside strings they are left alone.
// Nothing devctl counts is ever one of them.
func nullNonFinite(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		return data
	}
	out := make([]byte, 0, len(data))
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			out = append(out, c)
			continue
		}
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(data[i:], []byte(tok)) {
				out = append(out, "null"...)
				i += len(tok) - 1
				c = 0
				break
			}
		}
		if c != 0 {
			out = append(out, c)
		}
	}
	return out
}

// ParseHFConfig reads a Hugging Face config.json and counts the model's
// parameters exactly for the llama, mistral, qwen2 (GQA, tied or untied
// embeddings, qkv bias), gpt2, bert and t5 families. It returns the shape
// for activation and KV-cache estimates. Counts are of the model as
// trained: XForCausalLM for decoders, BertModel (with pooler) for BERT,
// T5ForConditionalGeneration for T5; HeadParams is an untied LM head.
func ParseHFConfig(data []byte) (oomsim.Model, error) {
	var c hfConfig
	// Editors on Windows save JSON with a UTF-8 byte-order mark, which
	// encoding/json refuses; anything after the one object (a second
	// object, a stray brace, a concatenated file) is refused, not ignored.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	data = nullNonFinite(data)
	data, topWidths, textWidths := liftPerLayerWidths(dropPerLayerMoEWidths(data))
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return oomsim.Model{}, fmt.Errorf("not a valid config.json: %v", err)
	}
	c.intermediateSizes = topWidths
	if c.TextConfig != nil {
		c.TextConfig.intermediateSizes = textWidths
	}
	if tok, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("unexpected %v after the JSON object", tok)
		}
		return oomsim.Model{}, fmt.Errorf("not a valid config.json: %v", err)
	}
	family := strings.ToLower(strings.TrimSpace(c.ModelType))
	switch {
	case family == "gemma3_text":
		gemma3TextDefaults(&c)
	case family == "gemma3" && c.TextConfig != nil:
		gemma3TextDefaults(c.TextConfig)
	}
	var m oomsim.Model
	var err error
	switch family {
	case "llama", "mistral", "qwen2":
		m, err = countDecoder(c, family)
	case "minicpm":
		// MiniCPM (remote code): Llama's blocks; scale_emb, scale_depth
		// and dim_model_base are scalars that scale the residual stream.
		m, err = countDecoder(c, family)
	case "qwen3", "phi3", "gemma", "gemma2", "gemma3_text", "mixtral", "qwen2_moe", "qwen3_moe":
		m, err = countModernDecoder(c, family)
	case "gemma3":
		if c.TextConfig == nil {
			return oomsim.Model{}, fmt.Errorf("gemma3 config.json: no text_config")
		}
		tc := *c.TextConfig
		m, err = countModernDecoder(tc, "gemma3_text")
		if err == nil {
			if n, verr := siglipParams(c.VisionConfig, int64(m.Arch.Hidden)); verr == nil {
				m = withVisionTower(m, "gemma3", n)
			} else {
				m.Notes = append(m.Notes, "gemma3: the language model only; the vision tower (SigLIP) is not counted: "+verr.Error())
			}
		}
	case "deepseek_v2", "deepseek_v3":
		m, err = countDeepSeek(c, family)
	case "kimi_k2":
		// Kimi K2 (moonshotai/Kimi-K2-Instruct and -Base, K2-Thinking):
		// DeepseekV3ForCausalLM under Moonshot's name (384 experts, 64
		// heads, one dense layer), counted as DeepSeek-V3.
		m, err = countDeepSeek(c, "deepseek_v3")
	case "deepseek_v32":
		m, err = countDeepSeekV32(c)
	case "nemotron-nas":
		m, err = countNemotronNAS(c)
	case "mimo_v2_flash":
		m, err = countMiMoV2Flash(c)
	case "glm_moe_dsa":
		// GLM-5 (GlmMoeDsaForCausalLM): DeepSeek-V3.2's layer under GLM's
		// name: multi-head latent attention with the sparse-attention
		// indexer, sigmoid-routed experts with a shared one, the first
		// first_k_dense_replace layers dense. zai-org/GLM-5's count is this
		// plus its one multi-token-prediction layer, which devctl leaves
		// out as for DeepSeek-V3.
		m, err = countDeepSeekV32(c)
		if err == nil {
			m.Notes = append(m.Notes, "glm_moe_dsa: GLM-5, counted as DeepSeek-V3.2 (multi-head latent attention with DeepSeek sparse attention's indexer)")
		}
	case "glm4_moe_lite":
		// GLM-4.7-Flash: DeepSeek-V3's layer (multi-head latent attention,
		// a sigmoid-routed mixture of experts with a shared expert, the
		// first first_k_dense_replace layers dense) under GLM's name.
		m, err = countDeepSeek(c, "deepseek_v3")
	case "phi":
		m, err = countPhi(c)
	case "gpt_bigcode":
		m, err = countBigCode(c)
	case "gpt_neo":
		m, err = countGPTNeo(c)
	case "gptj":
		m, err = countGPTJ(c)
	case "stablelm", "olmo2", "internlm2":
		m, err = countNormVariant(c, family)
	case "chatglm":
		m, err = countChatGLM(c)
	case "falcon":
		m, err = countFalcon(c)
	case "refinedwebmodel", "refinedweb":
		m, err = countRefinedWeb(c, family)
	case "qwen":
		m, err = countQwen(c)
	case "gpt_neox":
		m, err = countNeoX(c)
	case "opt":
		m, err = countOPT(c)
	case "bloom":
		m, err = countBLOOM(c)
	case "whisper":
		m, err = countWhisper(c)
	case "gpt2":
		m, err = countGPT2(c)
	case "bert":
		m, err = countBERT(c)
	case "t5":
		m, err = countT5(c)
	case "":
		return oomsim.Model{}, fmt.Errorf("%w: config.json has no model_type (supported: %s)", ErrUnsupportedFamily, strings.Join(SupportedFamilies, ", "))
	default:
		var ok bool
		if m, ok, err = countFamily2026(c, family); ok {
			break
		}
		return oomsim.Model{}, fmt.Errorf("%w %q (supported: %s; use --model-params for others)", ErrUnsupportedFamily, c.ModelType, strings.Join(SupportedFamilies, ", "))
	}
	if err != nil {
		return oomsim.Model{}, fmt.Errorf("%s config.json: %w", family, err)
	}
	if m.Params > MaxParams {
		return oomsim.Model{}, fmt.Errorf("%s config.json: %d parameters is more than the %g devctl accepts", family, m.Params, float64(MaxParams))
	}
	m.Family = family
	m.Name = c.NameOrPath
	m.MTPLayers = mtpLayers(c, family)
	m.LargestLayerParams = oomsim.LargestLayer(m)
	if m.Arch != nil {
		m.Arch.AttnDropout = attnDropout(c, family)
		text := c
		if family == "gemma3" && c.TextConfig != nil {
			text = *c.TextConfig
		}
		if m.Arch.SlidingLayers == 0 { // Gemma 4's counter sets them itself
			m.Arch.SlidingWindow, m.Arch.SlidingLayers = slidingLayers(text.hfSliding, text.LayerTypes, family, m.Arch.KVLayers)
		}
	}
	return m, nil
}

// attnDropout is the config's dropout on the attention probabilities: the
// first of the names families use that is set, in [0, 1); a config that
// leaves it out gets its family's config-class default, as transformers
// does (GPT2Config attn_pdrop, BertConfig attention_probs_dropout_prob and
// T5Config dropout_rate are 0.1; the LLM families' are 0).
func attnDropout(c hfConfig, family string) float64 {
	for _, v := range []*float64{c.AttentionProbsDropout, c.AttnPdrop, c.AttentionDropout} {
		if v != nil {
			return clampDropout(*v)
		}
	}
	switch family {
	case "t5", "mt5":
		if c.DropoutRate != nil {
			return clampDropout(*c.DropoutRate)
		}
		return 0.1
	case "gpt2", "bert":
		return 0.1
	}
	return 0
}

func clampDropout(p float64) float64 {
	if p > 0 && p < 1 {
		return p
	}
	return 0
}

// need reads a required dimension and checks its range.
func need(name string, v *int64) (int64, error) {
	if v == nil {
		return 0, fmt.Errorf("missing %s", name)
	}
	limit := int64(maxDim)
	switch name {
	case "num_hidden_layers", "n_layer", "n_layers", "depth", "num_layers", "num_decoder_layers", "encoder_layers", "decoder_layers", "first_k_dense_replace":
		limit = maxLayers
	case "num_attention_heads", "num_key_value_heads", "n_head", "num_heads", "head_dim", "d_kv", "relative_attention_num_buckets",
		"num_kv_heads", "n_head_kv", "encoder_attention_heads", "num_experts_per_tok", "kv_channels", "multi_query_group_num", "n_shared_experts", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "moe_layer_freq", "decoder_sparse_step", "num_mel_bins",
		"n_heads", "kv_n_heads", "moe_top_k", "in_chans", "in_channels", "patch_size", "spatial_merge_size", "temporal_patch_size", "interleave_moe_layer_step", "full_attention_interval",
		"linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim",
		"index_n_heads", "index_head_dim":
		limit = maxHeads
	case "hidden_size", "n_embd", "d_model", "intermediate_size", "n_inner", "d_ff", "vocab_size", "type_vocab_size",
		"n_embed", "ffn_dim", "word_embed_proj_dim", "moe_intermediate_size", "shared_expert_intermediate_size", "q_lora_rank", "kv_lora_rank",
		"encoder_ffn_dim", "decoder_ffn_dim", "ffn_hidden_size", "padded_vocab_size", "inner_hidden_size",
		"intermediate_size_mlp", "shared_intermediate_size", "embed_dim", "out_hidden_size":
		limit = maxWidth
	case "num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts":
		limit = 1 << 12
		limit = maxWidth
	}
	if *v <= 0 || *v > limit {
		return 0, fmt.Errorf("%s = %d is out of range (1..%d)", name, *v, limit)
	}
	return *v, nil
}

func opt(name string, v *int64, def int64) (int64, error) {
	if v == nil {
		return def, nil
	}
	return need(name, v)
}

// fields reads a config's numbers with a sticky error, like bufio.Scanner:
// a counter reads every field it needs and checks err once. After the
// first failure every read returns 0, so check err before dividing.
type fields struct{ err error }

func (f *fields) need(name string, v *int64) int64 {
	if f.err != nil {
		return 0
	}
	n, err := need(name, v)
	f.err = err
	return n
}

func (f *fields) opt(name string, v *int64, def int64) int64 {
	if f.err != nil {
		return 0
	}
	n, err := opt(name, v, def)
	f.err = err
	return n
}

// headsFit refuses more heads than hidden units when the head size is
// derived from them: the head size would be 0 and the KV cache vanish.
func headsFit(heads, hidden int64, headsName, hiddenName string) error {
	if heads > hidden {
		return fmt.Errorf("%s %d is more than %s %d", headsName, heads, hiddenName, hidden)
	}
	return nil
}

func flag(v *bool, def bool) bool {
	if v == nil {
		return def
	}
	return *v
}

func countDecoder(c hfConfig, family string) (oomsim.Model, error) {
	var m oomsim.Model
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	nh := f.need("num_attention_heads", c.NumAttentionHeads)
	kv := f.opt("num_key_value_heads", c.NumKeyValueHeads, nh)
	if f.err != nil {
		return m, f.err
	}
	if c.HeadDim == nil {
		if err := headsFit(nh, h, "num_attention_heads", "hidden_size"); err != nil {
			return m, err
		}
	}
	hd := f.opt("head_dim", c.HeadDim, h/nh)
	ffn := f.need("intermediate_size", c.IntermediateSize)
	V := f.need("vocab_size", c.VocabSize)
	if f.err != nil {
		return m, f.err
	}
	maxPos, _ := opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if nh%kv != 0 {
		return m, fmt.Errorf("num_attention_heads %d is not a multiple of num_key_value_heads %d", nh, kv)
	}
	qkvBias := flag(c.AttentionBias, false)
	oBias := qkvBias
	if family == "qwen2" { // Qwen2 always has q/k/v biases and no o_proj bias.
		qkvBias, oBias = true, false
	}
	mlpBias := flag(c.MLPBias, false)
	tied := flag(c.TieWordEmbeddings, false)

	q, k := nh*hd, kv*hd
	linear := h*q + 2*h*k + q*h + 3*h*ffn
	perLayer := linear + 2*h // two RMSNorms
	if qkvBias {
		perLayer += q + 2*k
	}
	if oBias {
		perLayer += h
	}
	if mlpBias {
		perLayer += 2*ffn + h
	}
	m.Params = V*h + L*perLayer + h
	if !tied {
		m.HeadParams = V * h
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - L*linear
	m.BufferBytes = hd / 2 * 4 // rotary inv_freq, fp32
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L), Hidden: int(h), Heads: int(nh), KVHeads: int(kv),
		HeadDim: int(hd), FFN: int(ffn), Vocab: int(V), MaxPositions: int(maxPos), Gated: true}
	return m, nil
}

// countGPT2 counts GPT2LMHeadModel (its head is tied to wte).
func countGPT2(c hfConfig) (oomsim.Model, error) {
	var m oomsim.Model
	var f fields
	h := f.need("n_embd", c.NEmbd)
	L := f.need("n_layer", c.NLayer)
	nh := f.need("n_head", c.NHead)
	inner := f.opt("n_inner", c.NInner, 4*h)
	V := f.need("vocab_size", c.VocabSize)
	P := f.need("n_positions", c.NPositions)
	if f.err != nil {
		return m, f.err
	}
	if err := headsFit(nh, h, "n_head", "n_embd"); err != nil {
		return m, err
	}
	linear := h*3*h + h*h + h*inner + inner*h
	perLayer := linear + 3*h + h + inner + h + 4*h // biases + two LayerNorms
	m.Params = V*h + P*h + L*perLayer + 2*h
	m.UnquantizedParams = m.Params - L*linear
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L), Hidden: int(h), Heads: int(nh), KVHeads: int(nh),
		HeadDim: int(h / nh), FFN: int(inner), Vocab: int(V), MaxPositions: int(P)}
	return m, nil
}

// countBERT counts BertModel with its pooler (what AutoModel builds and
// KerasHub and accelerate report).
func countBERT(c hfConfig) (oomsim.Model, error) {
	var m oomsim.Model
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	nh := f.need("num_attention_heads", c.NumAttentionHeads)
	ffn := f.need("intermediate_size", c.IntermediateSize)
	V := f.need("vocab_size", c.VocabSize)
	P := f.opt("max_position_embeddings", c.MaxPositionEmbeddings, 512)
	T := f.opt("type_vocab_size", c.TypeVocabSize, 2)
	if f.err != nil {
		return m, f.err
	}
	if err := headsFit(nh, h, "num_attention_heads", "hidden_size"); err != nil {
		return m, err
	}
	linear := 4*h*h + h*ffn + ffn*h
	perLayer := linear + 4*h + ffn + h + 4*h // biases + two LayerNorms
	m.Params = V*h + P*h + T*h + 2*h + L*perLayer + h*h + h
	m.UnquantizedParams = m.Params - L*linear
	m.BufferBytes = 2 * P * 8 // int64 position_ids and token_type_ids
	m.Arch = &oomsim.Arch{Layers: int(L), Hidden: int(h), Heads: int(nh), KVHeads: int(nh), HeadDim: int(h / nh),
		FFN: int(ffn), Vocab: int(V), MaxPositions: int(P)}
	return m, nil
}

// countT5 counts T5ForConditionalGeneration: the shared embedding once,
// encoder and decoder stacks (relative position bias in each stack's first
// block), and an LM head when untied (T5 v1.1, T0).
func countT5(c hfConfig) (oomsim.Model, error) {
	var m oomsim.Model
	var f fields
	d := f.need("d_model", c.DModel)
	dkv := f.need("d_kv", c.DKV)
	dff := f.need("d_ff", c.DFF)
	enc := f.need("num_layers", c.NumLayers)
	dec := f.opt("num_decoder_layers", c.NumDecoderLayers, enc)
	nh := f.need("num_heads", c.NumHeads)
	V := f.need("vocab_size", c.VocabSize)
	buckets := f.opt("relative_attention_num_buckets", c.RelativeAttentionNumBuckets, 32)
	if f.err != nil {
		return m, f.err
	}
	inner := nh * dkv
	attn := 4 * d * inner
	ffMats := int64(2)
	if strings.HasPrefix(strings.ToLower(c.FeedForwardProj), "gated") {
		ffMats = 3
	}
	ff := ffMats * d * dff
	encLayer := attn + ff + 2*d
	decLayer := 2*attn + ff + 3*d
	m.Params = V*d + enc*encLayer + buckets*nh + d + dec*decLayer + buckets*nh + d
	if !flag(c.TieWordEmbeddings, true) {
		m.HeadParams = V * d
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - enc*(attn+ff) - dec*(2*attn+ff)
	m.Arch = &oomsim.Arch{Layers: int(enc + dec), KVLayers: int(2 * dec), Hidden: int(d), Heads: int(nh), KVHeads: int(nh),
		HeadDim: int(dkv), FFN: int(dff), Vocab: int(V), MaxPositions: 512}
	return m, nil
}

// gemma3TextDefaults fills what a Gemma 3 config.json leaves to
// transformers' Gemma3TextConfig defaults: the Hub's own config.json of
// google/gemma-3-12b-it (transformers 4.50) gives no vocab_size,
// head_dim, max_position_embeddings or tie_word_embeddings,
// and the class's 262,208, 256, 131,072 and true apply; a sliding window
// left out is 4,096.
func gemma3TextDefaults(c *hfConfig) {
	def := func(p **int64, v int64) {
		if *p == nil {
			*p = &v
		}
	}
	def(&c.VocabSize, 262_208)
	def(&c.HeadDim, 256)
	def(&c.MaxPositionEmbeddings, 131_072)
	if c.TieWordEmbeddings == nil {
		t := true
		c.TieWordEmbeddings = &t
	}
	if len(c.hfSliding.SlidingWindow) == 0 {
		c.hfSliding.SlidingWindow = json.RawMessage("4096")
	}
}
