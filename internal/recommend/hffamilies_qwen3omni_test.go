package recommend

import (
	"strings"
	"testing"
)

// Qwen3-Omni-30B-A3B-Instruct's thinker: the Qwen3-MoE language model
// (30,532,646,912), the vision encoder with its DeepStack mergers
// (538,631,408, Qwen3-VL-30B-A3B's) and the audio encoder (647,927,168),
// 31,719,205,488 in all, the safetensors total of the thinker-only
// Qwen3-Omni-30B-A3B-Thinking (testdata/models/README.md). The talker and
// code2wav are not counted.
func TestParseHFConfigQwen3Omni(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "qwen3-omni-30b-a3b-instruct.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "qwen3_omni_moe" || m.Params != 31_719_205_488 || m.VisionParams != 538_631_408+647_927_168 {
		t.Errorf("%s: %d params (encoders %d), want qwen3_omni_moe 31,719,205,488 (1,186,558,576)", m.Family, m.Params, m.VisionParams)
	}
	if m.Experts != 128 || m.ExpertsPerToken != 8 {
		t.Errorf("%d experts (%d a token), want 128 (8)", m.Experts, m.ExpertsPerToken)
	}
	a := m.Arch
	if a == nil || a.Layers != 48 || a.KVLayers != 48 || a.Heads != 32 || a.KVHeads != 4 || a.HeadDim != 128 || a.SlidingLayers != 0 || a.Vocab != 152064 {
		t.Errorf("arch %+v, want 48 layers of 32 heads (4 KV, head 128), no sliding layers, vocabulary 152064", a)
	}
	notes := strings.Join(m.Notes, "\n")
	for _, want := range []string{"qwen3_omni_moe: the vision encoder", "the audio encoder (647927168 parameters", "talker, its code predictor and code2wav, which speak, are not counted"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q, want %q", notes, want)
		}
	}
	if strings.Contains(notes, "qwen3_vl_moe") {
		t.Errorf("notes name qwen3_vl_moe: %q", notes)
	}
}

func TestParseHFConfigQwen3OmniBadInput(t *testing.T) {
	const text = `"text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100, "moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2}`
	for _, c := range []struct{ json, want string }{
		{`{"model_type": "qwen3_omni_moe"}`, "thinker_config.text_config"},
		{`{"model_type": "qwen3_omni_moe", "thinker_config": {}}`, "thinker_config.text_config"},
		{`{"model_type": "qwen3_omni_moe", "thinker_config": {"text_config": {"hidden_size": 64}}}`, "thinker_config.text_config"},
		{`{"model_type": "qwen3_omni_moe", "thinker_config": {` + text + `, "vision_config": {"depth": -1}}}`, "thinker_config.vision_config"},
		{`{"model_type": "qwen3_omni_moe", "thinker_config": {` + text + `, "audio_config": {"d_model": 100, "encoder_attention_heads": 3}}}`, "encoder_attention_heads"},
		{`{"model_type": "qwen3_omni_moe", "thinker_config": {` + text + `, "audio_config": {"downsample_hidden_size": 0}}}`, "downsample_hidden_size"},
		{`{"model_type": "qwen3_omni_moe", "thinker_config": {` + text + `, "audio_config": {"downsample_hidden_size": 4000000, "num_mel_bins": 4096, "d_model": 1000000, "encoder_attention_heads": 1}}}`, "more than"},
	} {
		_, err := ParseHFConfig([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), "qwen3_omni_moe config.json") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming qwen3_omni_moe and %s", c.json, err, c.want)
		}
	}
	// The language model alone: both encoders said not counted.
	m, err := ParseHFConfig([]byte(`{"model_type": "qwen3_omni_moe", "thinker_config": {` + text + `}}`))
	if err != nil || m.VisionParams != 0 || !strings.Contains(strings.Join(m.Notes, " "), "audio encoder is not counted") {
		t.Errorf("text only: %v, %d encoder params, notes %q", err, m.VisionParams, m.Notes)
	}
}
