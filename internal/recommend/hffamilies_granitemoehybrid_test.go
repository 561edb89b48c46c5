package recommend

import (
	"strings"
	"testing"
)

// granite-4.0-h-tiny's count is the Hub's (testdata/models/README.md): 36
// Mamba-2 and 4 attention layers, 64 experts (6 a token) and a shared MLP
// in every layer; only the attention layers keep a KV cache.
func TestParseHFConfigGraniteMoeHybrid(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "granite-4.0-h-tiny.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "granitemoehybrid" || m.Params != 6_939_037_248 || m.HeadParams != 0 || m.Experts != 64 || m.ExpertsPerToken != 6 {
		t.Errorf("%s: %d params (head %d), %d experts (%d a token); want 6,939,037,248, tied, 64 (6)", m.Family, m.Params, m.HeadParams, m.Experts, m.ExpertsPerToken)
	}
	if a := m.Arch; a == nil || a.Layers != 40 || a.KVLayers != 4 || a.KVHeads != 4 || a.HeadDim != 128 || a.FFN != 6*512+1024 || !a.Gated {
		t.Errorf("arch %+v, want 40 layers, 4 KV layers of 4 heads of 128, FFN 4096", m.Arch)
	}
}

func TestParseHFConfigGraniteMoeHybridShapes(t *testing.T) {
	base := `"model_type": "granitemoehybrid", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100`
	// num_local_experts 0 is a dense model: the shared MLP alone.
	m, err := ParseHFConfig([]byte(`{` + base + `, "num_local_experts": 0, "num_experts_per_tok": 0, "shared_intermediate_size": 128, "layer_types": ["mamba", "attention"], "mamba_n_heads": 4, "mamba_d_head": "auto", "mamba_d_state": 16}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Experts != 0 || m.ActiveParams != 0 || m.Arch.FFN != 128 || m.Arch.KVLayers != 1 {
		t.Errorf("dense: %d experts, active %d, arch %+v; want none, FFN 128, 1 KV layer", m.Experts, m.ActiveParams, m.Arch)
	}
	// No layer_types: every layer is Mamba (GraniteMoeHybridConfig).
	m, err = ParseHFConfig([]byte(`{` + base + `, "intermediate_size": 32, "mamba_n_heads": 8}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Arch.KVLayers != 0 || m.Experts != 8 || m.ExpertsPerToken != 2 {
		t.Errorf("defaults: %d KV layers, %d experts (%d a token); want 0, 8 (2)", m.Arch.KVLayers, m.Experts, m.ExpertsPerToken)
	}
	for _, bad := range []string{
		`{"model_type": "granitemoehybrid", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 32}`,
		`{` + base + `, "intermediate_size": 32, "layer_types": ["mamba"]}`,
		`{` + base + `, "intermediate_size": 32, "layer_types": ["mamba", "conv"]}`,
		`{` + base + `, "intermediate_size": 32, "mamba_n_heads": 3}`,
		`{` + base + `, "intermediate_size": 32, "mamba_n_heads": 8, "mamba_d_head": 32}`,
		`{` + base + `, "intermediate_size": 32, "mamba_n_heads": 8, "mamba_d_head": "big"}`,
		`{` + base + `, "intermediate_size": 32, "num_local_experts": 4, "num_experts_per_tok": 6, "layer_types": ["attention", "attention"]}`,
		`{` + base + `, "num_local_experts": 4, "num_experts_per_tok": 2, "layer_types": ["attention", "attention"]}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "granitemoehybrid") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
