package recommend

import (
	"strings"
	"testing"
)

// ERNIE-4.5-21B-A3B's count is the Hub's (testdata/models/README.md): layer
// 0 dense, layers 1-27 route among 64 experts, 6 a token, beside a shared
// MLP of 2 × 1536; every layer keeps a KV cache.
func TestParseHFConfigErnieMoE(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "ernie-4.5-21b-a3b.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "ernie4_5_moe" || m.Params != 21_825_437_888 || m.HeadParams != 0 || m.Experts != 64 || m.ExpertsPerToken != 6 {
		t.Errorf("%s: %d params (head %d), %d experts (%d a token); want 21,825,437,888, tied, 64 (6)", m.Family, m.Params, m.HeadParams, m.Experts, m.ExpertsPerToken)
	}
	if a := m.Arch; a == nil || a.Layers != 28 || a.KVLayers != 28 || a.KVHeads != 4 || a.HeadDim != 128 || a.FFN != 12288 || !a.Gated {
		t.Errorf("arch %+v, want 28 KV layers of 4 heads of 128, FFN 12288", m.Arch)
	}
	if want := m.Params - 27*58*3*2560*1536; m.ActiveParams != want {
		t.Errorf("active %d, want %d", m.ActiveParams, want)
	}
	for _, bad := range []string{
		`{"model_type": "ernie4_5_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}`,
		`{"model_type": "ernie4_5_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128, "moe_num_experts": 4, "moe_k": 8}`,
		`{"model_type": "ernie4_5_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128, "moe_layer_start_index": -3}`,
		`{"model_type": "ernie4_5_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 100, "intermediate_size": 128}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "ernie4_5_moe") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
