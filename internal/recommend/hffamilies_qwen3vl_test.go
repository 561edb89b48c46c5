package recommend

import (
	"fmt"
	"strings"
	"testing"
)

// Qwen3-VL's counts are the safetensors sums of the three releases
// (testdata/models/README.md): a Qwen3 or Qwen3-MoE language model and the
// vision encoder with its three DeepStack mergers. The 235B file is
// transformers 5's print, whose text_config says tied where the model is
// not, and whose experts are num_local_experts.
func TestParseHFConfigQwen3VLMatchesSafetensors(t *testing.T) {
	for _, c := range []struct {
		file           string
		family         string
		params, vision int64
	}{
		{"qwen3-vl-8b-instruct.config.json", "qwen3_vl", 8_767_123_696, 576_388_336},
		{"qwen3-vl-30b-a3b-instruct.config.json", "qwen3_vl_moe", 31_070_754_032, 538_631_408},
		{"qwen3-vl-235b-a22b-instruct.config.json", "qwen3_vl_moe", 235_670_022_896, 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Family != c.family || m.Params != c.params {
				t.Errorf("%s %d params, want %s %d", m.Family, m.Params, c.family, c.params)
			}
			if c.vision > 0 && m.VisionParams != c.vision {
				t.Errorf("vision encoder %d, want %d", m.VisionParams, c.vision)
			}
			if len(m.Notes) == 0 || !strings.Contains(m.Notes[len(m.Notes)-1], fmt.Sprintf("(%d parameters by vision_config) are counted", m.VisionParams)) {
				t.Errorf("notes %q, want the vision encoder's count", m.Notes)
			}
		})
	}
	// No text_config: one clear error.
	if _, err := ParseHFConfig([]byte(`{"model_type": "qwen3_vl", "vision_config": {"depth": 2}}`)); err == nil || !strings.Contains(err.Error(), "text_config") {
		t.Errorf("qwen3_vl without text_config: %v", err)
	}
}

// GLM-4.7-Flash (glm4_moe_lite) is DeepSeek-V3's layer under GLM's name:
// its count is the language model without the multi-token-prediction
// layer the checkpoint also stores (testdata/models/README.md).
func TestParseHFConfigGLM47Flash(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "glm-4.7-flash.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "glm4_moe_lite" || m.Params != 29_943_393_920 || m.Experts != 64 || m.ExpertsPerToken != 4 {
		t.Errorf("%s: %d params, %d experts (%d a token); want 29,943,393,920 and 64 (4)", m.Family, m.Params, m.Experts, m.ExpertsPerToken)
	}
}
