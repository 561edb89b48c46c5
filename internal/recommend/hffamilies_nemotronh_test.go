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

// Python's json module writes float('inf') as a bare Infinity, and
// transformers saves Mamba2's time_step_limit that way: the Hub's
// Nemotron-H configs hold "time_step_limit": [0.0, Infinity]. devctl reads
// it as not set; the same word inside a string stays as it is.
func TestConfigWithPythonsNonFiniteNumbers(t *testing.T) {
	cfg := []byte(`{"model_type": "nemotron_h", "_name_or_path": "NaN-Infinity/x", "hidden_size": 64, "num_attention_heads": 2,
		"num_key_value_heads": 1, "head_dim": 32, "vocab_size": 10, "intermediate_size": 128, "mamba_num_heads": 4, "mamba_head_dim": 16,
		"ssm_state_size": 8, "n_groups": 1, "conv_kernel": 4, "expand": 1, "num_hidden_layers": 3, "hybrid_override_pattern": "M*-",
		"time_step_limit": [0.0, Infinity], "time_step_min": -Infinity, "rescale": NaN}`)
	m, _, err := ModelFromFiles("nvidia/x", cfg, 0)
	if err != nil {
		t.Fatalf("a config with Infinity: %v", err)
	}
	if m.Family != "nemotron_h" || m.Params <= 0 {
		t.Errorf("parsed as %q with %d params", m.Family, m.Params)
	}
	if got := nullNonFinite([]byte(`{"a": "Infinity \"NaN\"", "b": [Infinity, -Infinity, NaN]}`)); string(got) != `{"a": "Infinity \"NaN\"", "b": [null, null, null]}` {
		t.Errorf("nullNonFinite: %s", got)
	}
}
