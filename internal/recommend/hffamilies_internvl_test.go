package recommend

import (
	"encoding/json"
	"strings"
	"testing"
)

// InternVL3-1B-hf counts the Hub's 938,193,024 (testdata/models/README.md).
// InternVL3-2B-hf, -8B-hf and InternVL3.5-8B-HF are the same tower and
// projector around the text shapes llmfit copies from their Hub configs,
// and count the Hub's totals too.
func TestParseHFConfigInternVL(t *testing.T) {
	data := readModel(t, "internvl3-1b-hf.published.config.json")
	m, err := ParseHFConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "internvl" || m.Params != 938_193_024 || m.VisionParams != 304_012_288+4_482_816 || m.HeadParams != 151_674*896 {
		t.Errorf("%s: %d params (vision %d, head %d), want 938,193,024 (vision 308,495,104)", m.Family, m.Params, m.VisionParams, m.HeadParams)
	}
	if a := m.Arch; a == nil || a.KVLayers != 24 || a.KVHeads != 2 || a.HeadDim != 64 || a.Hidden != 896 {
		t.Errorf("arch %+v, want 24 KV layers of 2 heads of 64", m.Arch)
	}
	for _, tc := range []struct {
		name   string
		text   string
		params int64
	}{
		{"InternVL3-2B-hf", `{"model_type": "qwen2", "hidden_size": 1536, "num_hidden_layers": 28, "num_attention_heads": 12, "num_key_value_heads": 2, "intermediate_size": 8960, "vocab_size": 151674}`, 2_088_957_440},
		{"InternVL3-8B-hf", `{"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 151674}`, 7_944_373_760},
		{"InternVL3_5-8B-HF", `{"model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 12288, "vocab_size": 151936}`, 8_528_318_464},
	} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatal(err)
		}
		obj["text_config"] = json.RawMessage(tc.text)
		b, _ := json.Marshal(obj)
		if m, err := ParseHFConfig(b); err != nil || m.Params != tc.params {
			t.Errorf("%s: %d, %v; want %d", tc.name, m.Params, err, tc.params)
		}
	}
	// InternViT-6B (InternVL3-38B/78B): RMSNorms, q/k norms, no qkv bias.
	six := strings.NewReplacer(`"hidden_size": 1024`, `"hidden_size": 3200`, `"intermediate_size": 4096`, `"intermediate_size": 12800`,
		`"num_hidden_layers": 24,
    "patch_size"`, `"num_hidden_layers": 45,
    "patch_size"`, `"norm_type": "layer_norm"`, `"norm_type": "rms_norm"`, `"attention_bias": true`, `"attention_bias": false`,
		`"use_qk_norm": false`, `"use_qk_norm": true`).Replace(string(data))
	h, L, ffn := int64(3200), int64(45), int64(12800)
	tower := h + 3*14*14*h + h + 1025*h + L*(4*h*h+h+2*h+2*h+2*h+h*ffn+ffn+ffn*h+h)
	proj := 2*4*h + 4*h*896 + 896 + 896*896 + 896
	if m, err := ParseHFConfig([]byte(six)); err != nil || m.VisionParams != tower+proj {
		t.Errorf("InternViT-6B: vision %d, %v; want %d", m.VisionParams, err, tower+proj)
	}
	for _, bad := range []string{
		`{"model_type": "internvl"}`,
		`{"model_type": "internvl", "text_config": {"model_type": "internlm2"}}`,
		`{"model_type": "internvl", "text_config": {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100}, "downsample_ratio": 0}`,
		`{"model_type": "internvl", "text_config": {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100}, "vision_config": {"norm_type": "batch_norm"}}`,
		`{"model_type": "internvl", "text_config": {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100}, "vision_config": {"patch_size": [14, 0]}}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "internvl") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
