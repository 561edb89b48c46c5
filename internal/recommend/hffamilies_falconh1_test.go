package recommend

import (
	"strings"
	"testing"
)

// Falcon-H1-0.5B-Base counts the Hub's 521,411,104
// (testdata/models/README.md); attention runs in every layer, so every
// layer keeps a KV cache.
func TestParseHFConfigFalconH1(t *testing.T) {
	data := readModel(t, "falcon-h1-0.5b-base.published.config.json")
	m, err := ParseHFConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "falcon_h1" || m.Params != 521_411_104 || m.HeadParams != 32784*1024 {
		t.Errorf("%s: %d params (head %d), want 521,411,104", m.Family, m.Params, m.HeadParams)
	}
	if a := m.Arch; a == nil || a.Layers != 36 || a.KVLayers != 36 || a.KVHeads != 2 || a.HeadDim != 64 || !a.Gated {
		t.Errorf("arch %+v, want 36 KV layers of 2 heads of 64", m.Arch)
	}
	// mamba_d_ssm null is mamba_expand × hidden_size (2 × 1024 here, not
	// 1536): in_proj, conv and out_proj shrink by 512 channels.
	null := strings.Replace(string(data), `"mamba_d_ssm": 1536`, `"mamba_d_ssm": null`, 1)
	if m2, err := ParseHFConfig([]byte(null)); err != nil || m2.Params != 521_411_104+36*(1024*1024+512*4+512+1024*512) {
		t.Errorf("mamba_d_ssm null: %d, %v", m2.Params, err)
	}
	for _, bad := range []string{
		`{"model_type": "falcon_h1", "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 10}`,
		`{"model_type": "falcon_h1", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 10, "mamba_d_ssm": "big"}`,
		`{"model_type": "falcon_h1", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 10, "mamba_n_heads": 0}`,
		`{"model_type": "falcon_h1", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 3, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 10}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "falcon_h1") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
