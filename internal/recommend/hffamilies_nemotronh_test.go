package recommend

import (
	"strings"
	"testing"
)

// Nemotron-3-Nano's count is the Hub's (testdata/models/README.md); only
// its six attention blocks keep a KV cache, and its 52 one-sublayer blocks
// are planned as 26 transformer layers for the activations.
func TestParseHFConfigNemotronH(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "nvidia-nemotron-3-nano-30b-a3b.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "nemotron_h" || m.Params != 31_577_937_344 || m.Experts != 128 || m.ExpertsPerToken != 6 {
		t.Errorf("%s: %d params, %d experts (%d a token); want 31,577,937,344 and 128 (6)", m.Family, m.Params, m.Experts, m.ExpertsPerToken)
	}
	if a := m.Arch; a == nil || a.KVLayers != 6 || a.Layers != 26 || a.KVHeads != 2 || a.Gated {
		t.Errorf("arch %+v, want 6 KV layers of 2 heads, 26 layers, relu² MLPs", m.Arch)
	}
	for _, bad := range []string{
		`{"model_type": "nemotron_h", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 10}`,
		`{"model_type": "nemotron_h", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 10, "hybrid_override_pattern": "M*X"}`,
		`{"model_type": "nemotron_h", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 10, "hybrid_override_pattern": "M*", "num_hidden_layers": 3}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "nemotron_h") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
