package recommend

import (
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
)

// GLM-5, Llama-3.3-Nemotron-Super-49B, Kimi-K2.5 and MiMo-V2-Flash from
// their Hub config.json files (testdata/models/README.md names the copies):
// Super-49B's count is its published one; GLM-5's and MiMo-V2-Flash's are
// the Hub's less their multi-token-prediction layers, which devctl does
// not plan (9,952,920,576 for GLM-5's one, recounted by hand).
func TestParseHFConfig2026Families(t *testing.T) {
	cases := []struct {
		file, family    string
		params          int64
		kvLayers, kvHds int
	}{
		{"glm-5.config.json", "glm_moe_dsa", 753_864_139_008 - 9_952_920_576, 78, 64},
		{"llama-3_3-nemotron-super-49b-v1.config.json", "nemotron-nas", 49_867_145_216, 49, 8},
		{"mimo-v2-flash.config.json", "mimo_v2_flash", 309_785_318_400 - 1_006_537_536, 48, 8},
	}
	for _, c := range cases {
		m, err := ParseHFConfig(readModel(t, c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if m.Family != c.family || m.Params != c.params {
			t.Errorf("%s: %s with %d params, want %s with %d", c.file, m.Family, m.Params, c.family, c.params)
		}
		if m.Arch == nil || m.Arch.KVLayers != c.kvLayers {
			t.Errorf("%s: arch %+v, want %d KV layers", c.file, m.Arch, c.kvLayers)
		}
	}
	// MiMo-V2-Flash: 39 sliding-window blocks of 8 KV heads and 9 full
	// ones of 4, keys of 192 and values of 128 planned at 160 a head.
	m, _ := ParseHFConfig(readModel(t, "mimo-v2-flash.config.json"))
	if a := m.Arch; a == nil || a.SlidingLayers != 39 || a.SlidingWindow != 128 || a.KVHeads != 8 || a.FullKVHeads != 4 || a.HeadDim != 160 {
		t.Errorf("mimo arch %+v", m.Arch)
	}
	// Kimi-K2.5: Kimi K2's language model (its own count) and a MoonViT
	// tower; the int4 experts are read from text_config's block.
	k, notes, err := ModelFromFiles("moonshotai/Kimi-K2.5", readModel(t, "kimi-k2.5.config.json"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if k.Family != "kimi_k25" || k.VisionParams <= 0 || k.Params-k.VisionParams != 1_026_408_232_448 {
		t.Errorf("kimi-k2.5: %s, %d params of which %d vision; want Kimi K2's 1,026,408,232,448 plus a tower", k.Family, k.Params, k.VisionParams)
	}
	if k.Stored == nil || k.Stored.Precision != capability.Int4 || !strings.Contains(k.Stored.From, "text_config.quantization_config") {
		t.Errorf("kimi-k2.5 storage %+v (notes %v), want int4 from text_config", k.Stored, notes)
	}
	for _, bad := range []string{
		`{"model_type": "nemotron-nas", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 10}`,
		`{"model_type": "nemotron-nas", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 10, "block_configs": [{"attention": {"n_heads_in_group": 3}, "ffn": {"ffn_mult": 1}}]}`,
		`{"model_type": "nemotron-nas", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 10, "block_configs": [{"attention": {"no_op": true}, "ffn": {"ffn_mult": -1}}]}`,
		`{"model_type": "mimo_v2_flash", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 10, "intermediate_size": 8, "n_routed_experts": 4, "moe_intermediate_size": 8, "num_experts_per_tok": 2, "hybrid_layer_pattern": [0, 1], "moe_layer_freq": [0]}`,
		`{"model_type": "mimo_v2_flash", "hidden_size": 64, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32, "vocab_size": 10, "intermediate_size": 8, "n_routed_experts": 4, "moe_intermediate_size": 8, "num_experts_per_tok": 2, "hybrid_layer_pattern": [0, 2], "moe_layer_freq": [0, 1]}`,
		`{"model_type": "deepseek_v3", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 10, "moe_layer_freq": [0, 1]}`,
		`{"model_type": "mimo_v2_flash", "moe_layer_freq": [0, 7]}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil {
			t.Errorf("%s: accepted, want one clear error", bad)
		}
	}
}
