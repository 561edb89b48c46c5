package recommend

import (
	"strings"
	"testing"
)

// Llama 3.2 11B Vision Instruct's count is the Hub's safetensors count
// (testdata/models/README.md): the language model with its 8
// cross-attention layers, the vision encoder and the projector. The file
// leaves the cross-attention layers and the tiling to the class defaults.
func TestParseHFConfigMllama(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "llama-3.2-11b-vision-instruct.thai-handwriting.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "mllama" || m.Params != 10_670_220_835 || m.VisionParams != 895_028_755 {
		t.Errorf("%s: %d params (vision encoder and projector %d); want 10,670,220,835 (895,028,755)", m.Family, m.Params, m.VisionParams)
	}
	// 4 tiles of 1,601 patches padded to 1,608: a 6,432² mask and 14
	// hidden-sized tensors of 6,432 rows, in 16 bits.
	if a := m.Arch; a == nil || a.ImageProfileBytes != 2*(6432*6432+14*6432*1280) {
		t.Errorf("arch %+v: want an image profile of 313,264,128 bytes", m.Arch)
	}
	if m.HeadParams != 128_256*4096 {
		t.Errorf("head %d, want the untied 128,256 x 4,096", m.HeadParams)
	}
	if a := m.Arch; a == nil || a.Layers != 40 || a.KVLayers != 32 || a.KVHeads != 8 || a.HeadDim != 128 || a.FFN != 14336 || !a.Gated {
		t.Errorf("arch %+v, want 40 layers, 32 of them with a KV cache of 8 heads of 128, a gated MLP of 14,336", m.Arch)
	}
	for _, bad := range []string{
		`{"model_type": "mllama"}`,
		`{"model_type": "mllama", "text_config": {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "cross_attention_layers": [4]}}`,
		`{"model_type": "mllama", "text_config": {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "cross_attention_layers": [1, 1]}}`,
		`{"model_type": "mllama", "text_config": {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4}}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "mllama") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
	// A vision_config that makes no patches leaves the encoder out, said.
	m, err = ParseHFConfig([]byte(`{"model_type": "mllama", "vision_config": {"image_size": 4, "patch_size": 14},
		"text_config": {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "cross_attention_layers": [1]}}`))
	if err != nil || m.VisionParams != 0 || !strings.Contains(strings.Join(m.Notes, "\n"), "vision encoder is not counted") {
		t.Errorf("%v, notes %q: want the language model alone, said", err, m.Notes)
	}
}
