package recommend

import (
	"strings"
	"testing"
)

// Gemma 4's counts: the 26B-A4B as transformers built it in a training log
// (its experts beside a dense MLP, full layers with k as v), the 31B as the
// bnb-4bit re-upload's Hub count (testdata/models/README.md); both with the
// vision encoder; the active count is the language model's (eight of 128
// experts). The full-attention layers' KV cache is 2 or 4 heads of
// 512, the sliding layers' 8 or 16 of 256 within 1,024 tokens.
func TestParseHFConfigGemma4(t *testing.T) {
	for _, c := range []struct {
		file                   string
		params, active, vision int64
		experts, sliding       int
		fullKV, fullHD         int
	}{
		{"gemma-4-26b-a4b-it.config.json", 25_805_933_872, 3_822_530_560, 572_792_112, 128, 25, 2, 512},
		{"gemma-4-31b-it.config.json", 31_273_086_512, 0, 575_741_232, 0, 50, 4, 512},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Family != "gemma4" || m.Params != c.params || m.ActiveParams != c.active || m.VisionParams != c.vision || m.Experts != c.experts {
				t.Errorf("%s: %d params (%d active, %d vision, %d experts), want %d (%d, %d, %d)",
					m.Family, m.Params, m.ActiveParams, m.VisionParams, m.Experts, c.params, c.active, c.vision, c.experts)
			}
			a := m.Arch
			if a == nil || a.SlidingLayers != c.sliding || a.SlidingWindow != 1024 || a.FullKVHeads != c.fullKV || a.FullHeadDim != c.fullHD || a.HeadDim != 256 {
				t.Errorf("arch %+v, want %d sliding layers of 1024 and full layers of %d × %d", a, c.sliding, c.fullKV, c.fullHD)
			}
		})
	}
	for _, bad := range []string{
		`{"model_type": "gemma4"}`,
		`{"model_type": "gemma4_text", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "head_dim": 32, "intermediate_size": 64, "vocab_size": 10, "layer_types": ["sliding_attention"]}`,
		`{"model_type": "gemma4_text", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "head_dim": 32, "intermediate_size": 64, "vocab_size": 10, "layer_types": ["full_attention"], "enable_moe_block": true, "num_experts": 4, "top_k_experts": 8, "moe_intermediate_size": 16}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "gemma4") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
