package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/oomsim"
)

// omniThinker is Qwen2.5-Omni's thinker_config: the language model in
// text_config, the vision encoder (Qwen2.5-VL's) and the audio encoder.
type omniThinker struct {
	TextConfig        *hfConfig   `json:"text_config"`
	VisionConfig      *qwenVision `json:"vision_config"`
	AudioConfig       *omniAudio  `json:"audio_config"`
	TieWordEmbeddings *bool       `json:"tie_word_embeddings"`
}

// omniAudio is Qwen2.5-Omni's audio_config (Qwen2_5OmniAudioEncoderConfig).
type omniAudio struct {
	DModel         *int64 `json:"d_model"`
	EncoderLayers  *int64 `json:"encoder_layers"`
	EncoderHeads   *int64 `json:"encoder_attention_heads"`
	EncoderFFNDim  *int64 `json:"encoder_ffn_dim"`
	NumMelBins     *int64 `json:"num_mel_bins"`
	OutputDim      *int64 `json:"output_dim"`
	MaxSourcePos   *int64 `json:"max_source_positions"`
	ScaleEmbedding *bool  `json:"scale_embedding"`
	qwen3OmniAudioFields
}

// countQwen25Omni counts Qwen2.5-Omni (model_type qwen2_5_omni) as
// transformers' modeling_qwen2_5_omni.py builds its thinker
// (Qwen2_5OmniThinkerForConditionalGeneration), the part that reads text,
// images and audio and writes text:
//
//   - the language model of thinker_config.text_config: Qwen2 (q, k, v
//     biases), with a head of its own unless tie_word_embeddings (the
//     thinker's, else text_config's) says it is tied: the thinker's
//     default is untied;
//   - the vision encoder of vision_config: Qwen2.5-VL's (qwenVisionParams:
//     a patch embedding, blocks of RMSNorms, attention with biases and a
//     gated MLP with biases, the merger);
//   - the audio encoder of audio_config (omniAudioParams): Whisper's
//     encoder layers and convolutions, audio_bos_eos_token, ln_post and the
//     projection to output_dim. Its sinusoidal positions are a buffer.
//
// The talker (speech tokens) and token2wav (the DiT and BigVGAN vocoder)
// are not counted: they only run when the model speaks, and the notes say
// so. Qwen2.5-Omni-7B's thinker counts 8,931,813,888, the Hub's count of a
// thinker-only checkpoint of its shapes (LCO-Embedding-Omni-7B).
func countQwen25Omni(c hfConfig) (oomsim.Model, error) {
	th := c.ThinkerConfig
	if th == nil || th.TextConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no thinker_config.text_config")
	}
	tc := *th.TextConfig
	switch {
	case th.TieWordEmbeddings != nil:
		tc.TieWordEmbeddings = th.TieWordEmbeddings
	case tc.TieWordEmbeddings == nil:
		untied := false
		tc.TieWordEmbeddings = &untied
	}
	m, err := countDecoder(tc, "qwen2")
	if err != nil {
		return m, fmt.Errorf("thinker_config.text_config: %w", err)
	}
	var towers []string
	if th.VisionConfig != nil {
		n, err := qwenVisionParams(th.VisionConfig, "qwen2_5_vl")
		if err != nil {
			return oomsim.Model{}, fmt.Errorf("thinker_config.vision_config: %w", err)
		}
		m = withVisionTower(m, "qwen2_5_omni", n)
		towers = append(towers, "vision")
	} else {
		m.Notes = append(m.Notes, "qwen2_5_omni: no thinker_config.vision_config; the vision encoder is not counted")
	}
	if th.AudioConfig != nil {
		n, err := omniAudioParams(th.AudioConfig)
		if err != nil {
			return oomsim.Model{}, fmt.Errorf("thinker_config.audio_config: %w", err)
		}
		m = withAudioEncoder(m, "qwen2_5_omni", n)
		towers = append(towers, "audio")
	} else {
		m.Notes = append(m.Notes, "qwen2_5_omni: no thinker_config.audio_config; the audio encoder is not counted")
	}
	m.Notes = append(m.Notes, fmt.Sprintf("qwen2_5_omni: the thinker only (language model and %d encoders); the talker and token2wav, which speak, are not counted", len(towers)))
	return m, nil
}

// omniAudioParams counts Qwen2_5OmniAudioEncoder: conv1 (num_mel_bins to
// d_model) and conv2 (d_model to d_model), kernel 3 with biases;
// encoder_layers Whisper encoder layers (q, v and out_proj with biases, k
// without; two LayerNorms; fc1 and fc2 of encoder_ffn_dim with biases);
// audio_bos_eos_token (2 × output_dim); ln_post; proj to output_dim with a
// bias. Left out, Qwen2_5OmniAudioEncoderConfig's defaults apply (128 mel
// bins, 32 layers, 20 heads, 5120, 1280, output 3584).
func omniAudioParams(a *omniAudio) (int64, error) {
	var f fields
	d, layers, ffn, mel, out, err := omniAudioShape(a, &f)
	if err != nil {
		return 0, err
	}
	if err := tooMany(layers, d, 4*d+2*ffn); err != nil {
		return 0, err
	}
	layer := 4*d*d + 3*d + 2*d*ffn + ffn + d + 2*2*d
	convs := mel*d*3 + d + d*d*3 + d
	return convs + layers*layer + 2*out + 2*d + d*out + out, nil
}

// omniAudioShape reads the Whisper-style audio encoder's shape both
// Qwen Omni generations share, with their config classes' defaults (1280
// wide, 32 layers of 20 heads, FFN 5120, 128 mel bins, output 3584); f
// keeps reading what the caller reads next.
func omniAudioShape(a *omniAudio, f *fields) (d, layers, ffn, mel, out int64, err error) {
	d = f.opt("d_model", a.DModel, 1280)
	layers = f.opt("encoder_layers", a.EncoderLayers, 32)
	heads := f.opt("encoder_attention_heads", a.EncoderHeads, 20)
	ffn = f.opt("encoder_ffn_dim", a.EncoderFFNDim, 5120)
	mel = f.opt("num_mel_bins", a.NumMelBins, 128)
	out = f.opt("output_dim", a.OutputDim, 3584)
	if f.err != nil {
		return 0, 0, 0, 0, 0, f.err
	}
	if d%heads != 0 {
		return 0, 0, 0, 0, 0, fmt.Errorf("encoder_attention_heads %d does not divide d_model %d", heads, d)
	}
	return d, layers, ffn, mel, out, nil
}
