package recommend

import (
	"strings"
	"testing"
)

// LFM2's counts are the Hub's (testdata/models/README.md): LFM2-700M in
// the first configs' names (block_ff_dim, full_attn_idxs), an LFM2-1.2B
// fine-tune in transformers 5's (layer_types, intermediate_size,
// tie_embedding). Only the six attention layers keep a KV cache.
func TestParseHFConfigLFM2(t *testing.T) {
	for _, tc := range []struct {
		file          string
		params        int64
		hidden, heads int
		ffn           int
	}{
		{"lfm2-700m.config.json", 742_489_344, 1536, 24, 6912},
		{"lfm2-1.2b-p-vector.config.json", 1_170_340_608, 2048, 32, 8192},
	} {
		m, err := ParseHFConfig(readModel(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if m.Family != "lfm2" || m.Params != tc.params || m.HeadParams != 0 {
			t.Errorf("%s: %s %d params (head %d), want lfm2 %d, tied", tc.file, m.Family, m.Params, m.HeadParams, tc.params)
		}
		a := m.Arch
		if a == nil || a.Layers != 16 || a.KVLayers != 6 || a.KVHeads != 8 || a.HeadDim != 64 || a.Hidden != tc.hidden ||
			a.Heads != tc.heads || a.FFN != tc.ffn || !a.Gated {
			t.Errorf("%s: arch %+v, want 16 layers, 6 KV layers of 8 heads of 64, FFN %d", tc.file, a, tc.ffn)
		}
	}
}

// Lfm2MLP scales and rounds only when block_ffn_dim_multiplier is not
// null, and not at all without block_auto_adjust_ff_dim.
func TestParseHFConfigLFM2FFN(t *testing.T) {
	base := `"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100, "layer_types": ["conv", "full_attention"], "block_ff_dim": 300`
	for _, tc := range []struct {
		extra string
		ffn   int
	}{
		{``, 256},
		{`, "block_ffn_dim_multiplier": null`, 200},
		{`, "block_ffn_dim_multiplier": 1.5, "block_multiple_of": 64`, 320},
		{`, "block_auto_adjust_ff_dim": false`, 300},
	} {
		m, err := ParseHFConfig([]byte("{" + base + tc.extra + "}"))
		if err != nil {
			t.Fatalf("%s: %v", tc.extra, err)
		}
		if m.Arch.FFN != tc.ffn || m.Arch.KVLayers != 1 || m.Arch.KVHeads != 8 {
			t.Errorf("%s: FFN %d, %d KV layers of %d heads; want %d, 1 of 8", tc.extra, m.Arch.FFN, m.Arch.KVLayers, m.Arch.KVHeads, tc.ffn)
		}
	}
	for _, bad := range []string{
		`{"model_type": "lfm2", "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "block_ff_dim": 300}`,
		`{` + base + `, "block_ffn_dim_multiplier": 0}`,
		`{` + base + `, "block_ffn_dim_multiplier": "x"}`,
		`{"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100, "block_ff_dim": 300, "layer_types": ["conv"]}`,
		`{"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100, "block_ff_dim": 300, "layer_types": ["conv", "mamba"]}`,
		`{"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100, "block_ff_dim": 300, "full_attn_idxs": [2]}`,
		`{"model_type": "lfm2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 100, "block_ff_dim": 300}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "lfm2") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
