package recommend

import (
	"strings"
	"testing"
)

// Gemma 3n E4B (testdata/models/README.md): the language model, the audio
// encoder and the two embedders are counted; the MobileNetV5 vision tower,
// which config.json does not describe, is the stated 325,588,032 short of
// the Hub's 7,849,978,192. Only the first 20 of 35 layers keep a KV cache,
// 16 of them sliding.
func TestParseHFConfigGemma3n(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "gemma-3n-e4b-it.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	const hub, visionTower = 7_849_978_192, 325_588_032
	if m.Family != "gemma3n" || m.Params != hub-visionTower || m.VisionParams != 681_348_640+7_805_952 || m.HeadParams != 0 {
		t.Errorf("%s: %d params (towers %d, head %d); want %d, the audio encoder and embedders 689,154,592, tied", m.Family, m.Params, m.VisionParams, m.HeadParams, hub-visionTower)
	}
	if a := m.Arch; a == nil || a.Layers != 35 || a.KVLayers != 20 || a.KVHeads != 2 || a.HeadDim != 256 || a.SlidingLayers != 16 || a.SlidingWindow != 512 || a.FFN != 16384 {
		t.Errorf("arch %+v, want 35 layers, 20 with a KV cache of 2 heads of 256, 16 of them sliding (512)", m.Arch)
	}
	if !strings.Contains(strings.Join(m.Notes, "\n"), "mobilenetv5_300m_enc vision tower is not") {
		t.Errorf("notes %q, want the uncounted vision tower named", m.Notes)
	}
	// gemma3n_text alone is the language model: 6,835,235,568.
	text := `{"model_type": "gemma3n_text", "hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers": 35, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 262400}`
	if m, err := ParseHFConfig([]byte(text)); err != nil || m.Params != 6_835_235_568 {
		t.Errorf("gemma3n_text: %d, %v; want 6,835,235,568", m.Params, err)
	}
	for _, bad := range []string{
		`{"model_type": "gemma3n"}`,
		`{"model_type": "gemma3n_text", "hidden_size": 64, "intermediate_size": [128, 128], "num_hidden_layers": 3, "num_attention_heads": 2, "vocab_size": 10}`,
		`{"model_type": "gemma3n_text", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3, "num_attention_heads": 2, "vocab_size": 10, "num_kv_shared_layers": 3}`,
		`{"model_type": "gemma3n_text", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 2, "vocab_size": 10}`,
		`{"model_type": "gemma3n", "text_config": {"hidden_size": 64, "intermediate_size": [128, 128], "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "num_kv_shared_layers": 1},
			"audio_config": {"sscp_conv_channel_size": [4]}}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "gemma3n") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
