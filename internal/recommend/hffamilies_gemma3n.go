package recommend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/devctl/devctl/internal/oomsim"
)

// gemma3nFields holds the config.json fields of Gemma 3n (embedded in
// hfConfig). intermediateSizes is intermediate_size when a file lists one
// width per layer, as Gemma 3n's do (liftPerLayerWidths).
type gemma3nFields struct {
	AltupNumInputs *int64 `json:"altup_num_inputs"`
	LaurelRank     *int64 `json:"laurel_rank"`

	intermediateSizes []int64
}

// gemma3nAudio is Gemma 3n's audio_config (Gemma 4 only asks whether one
// is there).
type gemma3nAudio struct {
	HiddenSize          *int64    `json:"hidden_size"`
	ConfNumHiddenLayers *int64    `json:"conf_num_hidden_layers"`
	ConfNumHeads        *int64    `json:"conf_num_attention_heads"`
	ConfConvKernelSize  *int64    `json:"conf_conv_kernel_size"`
	InputFeatSize       *int64    `json:"input_feat_size"`
	VocabSize           *int64    `json:"vocab_size"`
	SSCPChannels        []int64   `json:"sscp_conv_channel_size"`
	SSCPKernels         [][]int64 `json:"sscp_conv_kernel_size"`
	SSCPStrides         [][]int64 `json:"sscp_conv_stride_size"`
}

var perLayerWidths = regexp.MustCompile(`"intermediate_size"\s*:\s*\[`)

// liftPerLayerWidths takes a per-layer intermediate_size list (Gemma 3n's
// MatFormer widths) out of a config.json, at the top level or in
// text_config, so that the rest decodes into hfConfig's single width; the
// lists are returned beside. Any other file is returned as it came.
func liftPerLayerWidths(data []byte) (out []byte, top, text []int64) {
	if !perLayerWidths.Match(data) {
		return data, nil, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil {
		return data, nil, nil
	}
	lift := func(o map[string]json.RawMessage) []int64 {
		var w []int64
		if raw, ok := o["intermediate_size"]; ok && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) && json.Unmarshal(raw, &w) == nil {
			delete(o, "intermediate_size")
			return w
		}
		return nil
	}
	top = lift(obj)
	var tc map[string]json.RawMessage
	if raw, ok := obj["text_config"]; ok && json.Unmarshal(raw, &tc) == nil {
		if text = lift(tc); text != nil {
			b, err := json.Marshal(tc)
			if err != nil {
				return data, nil, nil
			}
			obj["text_config"] = b
		}
	}
	if top == nil && text == nil {
		return data, nil, nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return data, nil, nil
	}
	return b, top, text
}

// countGemma3n counts Gemma 3n (model_type gemma3n, the language model in
// text_config, or gemma3n_text alone) as transformers' modeling_gemma3n.py
// builds it:
//
//   - every block: Gemma 3's four RMSNorms and q/k norms (the v norm has no
//     scale), q and o; k and v (and the k norm) except in the last
//     num_kv_shared_layers blocks, which reuse an earlier block's cache; a
//     GeGLU MLP of that layer's intermediate_size; AltUp (a router of
//     hidden × altup_num_inputs with its norm, n × n correction and n × n²
//     prediction coefficients, an output scale); LAuReL (hidden × laurel_rank
//     and back, a norm); the per-layer input's gate, projection and norm;
//   - the embedding (tied to the head unless tie_word_embeddings is false),
//     the per-layer embedding table of vocab_size_per_layer_input × layers ×
//     hidden_size_per_layer_input with its projection from the hidden state
//     and norm, AltUp's altup_num_inputs − 1 projections in and out, a final
//     norm.
//
// gemma3n adds the audio encoder (gemma3nAudioParams) and the two
// multimodal embedders (Gemma3nMultimodalEmbedder: a vocabulary of soft
// tokens, two norms, a projection to the text hidden size). The vision
// tower is timm's MobileNetV5 named by vision_config.architecture, whose
// layers config.json does not give: it is not counted (325,588,032
// parameters in Gemma 3n E4B by the Hub's count), and the notes say so.
func countGemma3n(c hfConfig, family string) (oomsim.Model, error) {
	tc := c
	if family == "gemma3n" {
		if c.TextConfig == nil {
			return oomsim.Model{}, fmt.Errorf("no text_config")
		}
		tc = *c.TextConfig
		if c.TieWordEmbeddings != nil {
			tc.TieWordEmbeddings = c.TieWordEmbeddings
		}
	}
	m, err := countGemma3nText(tc)
	if err != nil || family == "gemma3n_text" {
		return m, err
	}
	h := int64(m.Arch.Hidden)
	var f fields
	visionHidden, visionVocab := int64(2048), int64(128)
	if v := c.VisionConfig; v != nil {
		visionHidden = f.opt("vision_config.hidden_size", v.HiddenSize, 2048)
		visionVocab = f.opt("vision_config.vocab_size", v.VocabSize, 128)
	}
	audio, audioHidden, audioVocab := int64(0), int64(1536), int64(128)
	if a := c.AudioConfig; a != nil {
		audioHidden = f.opt("audio_config.hidden_size", a.HiddenSize, 1536)
		audioVocab = f.opt("audio_config.vocab_size", a.VocabSize, 128)
		if f.err == nil {
			audio, f.err = gemma3nAudioParams(a)
		}
	}
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if err := tooMany(max(visionVocab, h)+max(audioVocab, h), max(visionHidden, audioHidden)); err != nil {
		return oomsim.Model{}, err
	}
	embedder := func(d, vocab int64) int64 { return vocab*d + 2*d + d*h }
	towers := audio + embedder(visionHidden, visionVocab) + embedder(audioHidden, audioVocab)
	m.Params += towers
	m.UnquantizedParams += towers
	m.VisionParams += towers
	m.Notes = append(m.Notes, fmt.Sprintf("gemma3n: the audio encoder and the image and audio embedders (%d parameters by audio_config and vision_config) are counted, 16-bit under quantised weights; the %s vision tower is not (its layers are not in config.json; 325,588,032 parameters in Gemma 3n E4B)",
		towers, visionArchitecture(c.VisionConfig)))
	return m, nil
}

func visionArchitecture(v *qwenVision) string {
	if v == nil || v.Architecture == "" {
		return "MobileNetV5"
	}
	return v.Architecture
}

func countGemma3nText(c hfConfig) (oomsim.Model, error) {
	var f fields
	h := f.need("hidden_size", c.HiddenSize)
	L := f.need("num_hidden_layers", c.NumHiddenLayers)
	heads := f.need("num_attention_heads", c.NumAttentionHeads)
	kv := f.opt("num_key_value_heads", c.NumKeyValueHeads, heads)
	hd := f.opt("head_dim", c.HeadDim, 256)
	V := f.need("vocab_size", c.VocabSize)
	pleV := f.opt("vocab_size_per_layer_input", c.VocabSizePerLayerInput, 262_144)
	ple := f.opt("hidden_size_per_layer_input", c.HiddenSizePerLayerInput, 256)
	n := f.opt("altup_num_inputs", c.AltupNumInputs, 4)
	rank := f.opt("laurel_rank", c.LaurelRank, 64)
	shared := int64(15)
	if c.NumKVSharedLayers != nil {
		shared = f.optZero("num_kv_shared_layers", c.NumKVSharedLayers)
	}
	widths := c.intermediateSizes
	if widths == nil {
		w := f.need("intermediate_size", c.IntermediateSize)
		widths = []int64{w}
	}
	maxPos, _ := opt("max_position_embeddings", c.MaxPositionEmbeddings, 0)
	if f.err != nil {
		return oomsim.Model{}, f.err
	}
	if len(widths) == 1 {
		widths = slicesRepeat(widths[0], L)
	}
	if int64(len(widths)) != L {
		return oomsim.Model{}, fmt.Errorf("intermediate_size lists %d widths for %d layers", len(widths), L)
	}
	var ffnMax int64
	for _, w := range widths {
		if w <= 0 || w > maxWidth {
			return oomsim.Model{}, fmt.Errorf("intermediate_size %d is out of range (1..%d)", w, maxWidth)
		}
		ffnMax = max(ffnMax, w)
	}
	layerTypes := c.LayerTypes
	if layerTypes == nil {
		for i := range L {
			t := "sliding_attention"
			if (i+1)%5 == 0 {
				t = "full_attention"
			}
			layerTypes = append(layerTypes, t)
		}
	}
	if int64(len(layerTypes)) != L {
		return oomsim.Model{}, fmt.Errorf("layer_types has %d entries for %d layers", len(layerTypes), L)
	}
	if shared >= L || kv == 0 || heads%kv != 0 {
		return oomsim.Model{}, fmt.Errorf("heads %d, key/value heads %d, shared layers %d of %d do not fit together", heads, kv, shared, L)
	}
	for _, err := range []error{tooMany(L, h, heads*hd+3*ffnMax+n*n+rank+ple), tooMany(pleV+h, L, ple), tooMany(V, h), tooMany(n, h, h), tooMany(n, n, n)} {
		if err != nil {
			return oomsim.Model{}, err
		}
	}
	var body, linear int64
	for i := range L {
		lin := 2*h*heads*hd + 3*h*widths[i] + h*n + 2*h*rank + 2*h*ple
		norms := 4*h + hd + // the block's norms, the q norm
			h + n*n + n*n*n + h + // AltUp: output scale, coefficients, router norm
			h + h // LAuReL's norm, the per-layer input's norm
		if i < L-shared {
			lin += 2 * h * kv * hd
			norms += hd // the k norm
		}
		body += lin + norms
		linear += lin
	}
	altup := 2 * (n - 1) * h * h
	extra := pleV*L*ple + h*L*ple + ple + altup
	linear += h*L*ple + altup
	var m oomsim.Model
	m.Params = V*h + extra + body + h
	if !flag(c.TieWordEmbeddings, true) {
		m.HeadParams = V * h
		m.Params += m.HeadParams
	}
	m.UnquantizedParams = m.Params - linear
	m.BufferBytes = hd / 2 * 4
	m.Arch = &oomsim.Arch{Layers: int(L), KVLayers: int(L - shared), Hidden: int(h), Heads: int(heads), KVHeads: int(kv),
		HeadDim: int(hd), FFN: int(ffnMax), Vocab: int(V), MaxPositions: int(maxPos), Gated: true}
	// The KV-sharing layers keep no cache: the window's layers are counted
	// among the others.
	sl := c.hfSliding
	if len(sl.SlidingWindow) == 0 {
		sl.SlidingWindow = json.RawMessage("512")
	}
	m.Arch.SlidingWindow, m.Arch.SlidingLayers = slidingLayers(sl, layerTypes[:L-shared], "gemma3n", m.Arch.KVLayers)
	return m, nil
}

func slicesRepeat(v, n int64) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// gemma3nAudioParams counts Gemma 3n's audio encoder (Gemma3nAudioEncoder,
// the Universal Speech Model's conformer): two bias-free Conv2d blocks
// over the mel features (sscp_conv_channel_size, kernel and stride sizes,
// a group norm's scale each) and a bias-free projection of the flattened
// result to hidden_size; then conf_num_hidden_layers conformer blocks of
// two feed-forward modules (norms before and after, hidden × 4·hidden and
// back), an attention module (q, k, v, a relative-position projection, a
// per-dimension scale, the output projection, two norms), a light
// convolution module (a norm, a GLU's hidden × 2·hidden projection, a
// depthwise Conv1d of conf_conv_kernel_size, a norm, a projection back) and
// a final norm. All weights are bias-free.
func gemma3nAudioParams(a *gemma3nAudio) (int64, error) {
	var f fields
	d := f.opt("audio_config.hidden_size", a.HiddenSize, 1536)
	layers := f.opt("audio_config.conf_num_hidden_layers", a.ConfNumHiddenLayers, 12)
	heads := f.opt("audio_config.conf_num_attention_heads", a.ConfNumHeads, 8)
	kernel := f.opt("audio_config.conf_conv_kernel_size", a.ConfConvKernelSize, 5)
	feat := f.opt("audio_config.input_feat_size", a.InputFeatSize, 128)
	if f.err != nil {
		return 0, f.err
	}
	channels, kernels, strides := a.SSCPChannels, a.SSCPKernels, a.SSCPStrides
	if channels == nil {
		channels = []int64{128, 32}
	}
	if kernels == nil {
		kernels = [][]int64{{3, 3}, {3, 3}}
	}
	if strides == nil {
		strides = [][]int64{{2, 2}, {2, 2}}
	}
	if len(channels) != 2 || len(kernels) != 2 || len(strides) != 2 {
		return 0, fmt.Errorf("audio_config: want two sub-sampling convolutions (sscp_conv_channel_size, sscp_conv_kernel_size, sscp_conv_stride_size)")
	}
	if heads > d || d%heads != 0 {
		return 0, fmt.Errorf("audio_config: conf_num_attention_heads %d does not divide hidden_size %d", heads, d)
	}
	var convs int64
	in, freq := int64(1), feat
	for i := range 2 {
		if len(kernels[i]) != 2 || len(strides[i]) != 2 {
			return 0, fmt.Errorf("audio_config: sub-sampling convolution %d wants a 2-D kernel and stride", i)
		}
		out, kh, kw, sw := channels[i], kernels[i][0], kernels[i][1], strides[i][1]
		for _, v := range []int64{out, kh, kw, sw} {
			if v <= 0 || v > maxHeads {
				return 0, fmt.Errorf("audio_config: sub-sampling size %d is out of range (1..%d)", v, maxHeads)
			}
		}
		freq = (freq+2-kw)/sw + 1 // padded by one on each side
		if freq <= 0 {
			return 0, fmt.Errorf("audio_config: input_feat_size %d leaves no features after the sub-sampling", feat)
		}
		convs += in*out*kh*kw + out
		in = out
	}
	for _, err := range []error{tooMany(layers, d, 16*d), tooMany(in, freq, d), tooMany(d, kernel)} {
		if err != nil {
			return 0, err
		}
	}
	ffw := 2*d + 8*d*d
	attn := 2*d + 5*d*d + d/heads
	lconv := 2*d + 3*d*d + kernel*d
	return convs + in*freq*d + layers*(2*ffw+attn+lconv+d), nil
}
