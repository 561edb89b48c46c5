package recommend

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
)

// qwen3OmniAudioFields are the audio_config fields Qwen3-Omni adds to
// Qwen2.5-Omni's (embedded in omniAudio).
type qwen3OmniAudioFields struct {
	DownsampleHiddenSize *int64 `json:"downsample_hidden_size"`
}

// countQwen3OmniMoe counts Qwen3-Omni (model_type qwen3_omni_moe:
// Qwen3-Omni-30B-A3B-Instruct, -Thinking, -Captioner) as transformers'
// modeling_qwen3_omni_moe.py builds its thinker
// (Qwen3OmniMoeThinkerForConditionalGeneration), the part that reads text,
// images, video and audio and writes text:
//
//   - the language model of thinker_config.text_config: Qwen3-MoE (q/k
//     norms, 128 experts, no shared expert), with its own head unless
//     tie_word_embeddings (the thinker's, else text_config's) says tied;
//     the thinker's default is untied;
//   - the vision encoder of vision_config: Qwen3-VL's (countQwen3VL: the
//     patch Conv3d with a bias, the learned position table, the blocks,
//     the merger and one merger per DeepStack index), fields left out
//     taking Qwen3OmniMoeVisionEncoderConfig's defaults;
//   - the audio encoder of audio_config (qwen3OmniAudioParams).
//
// The talker, its code predictor and code2wav, which speak, are not
// counted; the notes say so. Qwen3-Omni-30B-A3B's thinker counts
// 31,719,205,488, the safetensors total of Qwen3-Omni-30B-A3B-Thinking
// (thinker-only); the Instruct checkpoint adds 3,540,613,057 for the
// talker and code2wav (testdata/models/README.md).
func countQwen3OmniMoe(c hfConfig) (oomsim.Model, error) {
	th := c.ThinkerConfig
	if th == nil || th.TextConfig == nil {
		return oomsim.Model{}, fmt.Errorf("no thinker_config.text_config")
	}
	tc := *th.TextConfig
	tie := th.TieWordEmbeddings
	if tie == nil {
		tie = tc.TieWordEmbeddings
	}
	if tie == nil {
		untied := false
		tie = &untied
	}
	lm := hfConfig{TextConfig: &tc, TieWordEmbeddings: tie}
	if v := th.VisionConfig; v != nil {
		vc := qwen3OmniVisionDefaults(*v)
		if _, err := qwen35VisionParams(&vc); err != nil {
			return oomsim.Model{}, fmt.Errorf("thinker_config.vision_config: %w", err)
		}
		lm.VisionConfig = &vc
	}
	m, err := countQwen3VL(lm, "qwen3_vl_moe")
	if err != nil {
		return m, fmt.Errorf("thinker_config.text_config: %w", err)
	}
	for i, n := range m.Notes {
		if rest, ok := strings.CutPrefix(n, "qwen3_vl_moe: "); ok {
			m.Notes[i] = "qwen3_omni_moe: " + rest
		}
	}
	towers := 0
	if m.VisionParams > 0 {
		towers++
	}
	if th.AudioConfig != nil {
		n, err := qwen3OmniAudioParams(th.AudioConfig)
		if err != nil {
			return oomsim.Model{}, fmt.Errorf("thinker_config.audio_config: %w", err)
		}
		m = withAudioEncoder(m, "qwen3_omni_moe", n)
		towers++
	} else {
		m.Notes = append(m.Notes, "qwen3_omni_moe: no thinker_config.audio_config; the audio encoder is not counted")
	}
	m.Notes = append(m.Notes, fmt.Sprintf("qwen3_omni_moe: the thinker only (language model and %d encoders); the talker, its code predictor and code2wav, which speak, are not counted", towers))
	return m, nil
}

// qwen3OmniVisionDefaults fills the fields a vision_config leaves out with
// Qwen3OmniMoeVisionEncoderConfig's defaults (depth 27, 1152 wide, MLP 4304,
// out 3584, 2304 positions, DeepStack after blocks 8, 16 and 24).
func qwen3OmniVisionDefaults(v qwenVision) qwenVision {
	for _, d := range []struct {
		p   **int64
		def int64
	}{{&v.Depth, 27}, {&v.HiddenSize, 1152}, {&v.IntermediateSize, 4304}, {&v.OutHiddenSize, 3584}, {&v.NumPositionEmbeddings, 2304}} {
		if *d.p == nil {
			*d.p = ptr(d.def)
		}
	}
	if v.DeepstackVisualIndexes == nil { // absent; [] is none
		v.DeepstackVisualIndexes = []int64{8, 16, 24}
	}
	return v
}

// qwen3OmniAudioParams counts Qwen3OmniMoeAudioEncoder: three Conv2d of
// kernel 3 and stride 2 with biases (1 to downsample_hidden_size, then
// downsample_hidden_size to itself), conv_out (bias-free) from the
// downsampled mel bins to d_model, encoder_layers Whisper encoder layers
// (q, k, v and out_proj with biases; two LayerNorms; fc1 and fc2 with
// biases), ln_post, and proj1 (d_model) and proj2 (to output_dim) with
// biases. Its sinusoidal positions are a buffer. Left out,
// Qwen3OmniMoeAudioEncoderConfig's defaults apply (128 mel bins, 32 layers,
// 20 heads, 5120, 1280, output 3584, downsample 480).
func qwen3OmniAudioParams(a *omniAudio) (int64, error) {
	var f fields
	d, layers, ffn, mel, out, err := omniAudioShape(a, &f)
	if err != nil {
		return 0, err
	}
	ds := f.opt("downsample_hidden_size", a.DownsampleHiddenSize, 480)
	if f.err != nil {
		return 0, f.err
	}
	freq := ((((mel+1)/2+1)/2 + 1) / 2)
	for _, err := range []error{tooMany(layers, d, 4*d+2*ffn), tooMany(9, ds, ds), tooMany(ds, freq, d), tooMany(d, out)} {
		if err != nil {
			return 0, err
		}
	}
	layer := 4*(d*d+d) + 2*2*d + d*ffn + ffn + ffn*d + d
	convs := (9*ds + ds) + 2*(9*ds*ds+ds) + ds*freq*d
	return convs + layers*layer + 2*d + (d*d + d) + (d*out + out), nil
}
