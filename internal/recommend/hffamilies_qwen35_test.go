package recommend

import (
	"fmt"
	"strings"
	"testing"
)

// Qwen3.5's Hub counts (llmfit, the Hub's safetensors.total: see
// testdata/models/README.md) hold the language model and the vision
// encoder, which devctl counts (from vision_config), and the
// multi-token-prediction block: fc (2h→h), two pre-fc RMSNorms, one
// decoder layer with full attention and the model's MLP (its mixture of
// experts for qwen3_5_moe), its two norms and a final norm. Checkpoints
// re-exported without that block (or without the vision encoder) give the
// other counts, each a sum of the same parts.
func TestParseHFConfigQwen35MatchesHubCounts(t *testing.T) {
	for _, c := range []struct {
		file           string
		family         string
		text, vision   int64
		mtp            int64
		full, textOnly int64
		where          string
	}{
		{"qwen3.5-0.8b.published.config.json", "qwen3_5", 752_393_024, 100_592_896, 20_452_864, 873_438_784, 0,
			"llmfit Qwen/Qwen3.5-0.8B; unsloth/Qwen3.5-0.8B-Base 852,985,920 has no MTP block"},
		{"qwen3.5-2b.published.config.json", "qwen3_5", 1_881_825_088, 331_416_576, 60_828_160, 2_274_069_824, 0,
			"llmfit Qwen/Qwen3.5-2B"},
		{"qwen3.5-4b.published.config.json", "qwen3_5", 4_205_751_296, 333_514_240, 120_599_552, 4_659_865_088, 0,
			"llmfit Qwen/Qwen3.5-4B; unsloth/Qwen3.5-4B-Base 4,539,265,536 has no MTP block"},
		{"qwen3.5-9b.published.config.json", "qwen3_5", 8_953_803_264, 456_010_480, 243_290_624, 9_653_104_368, 8_953_803_264,
			"llmfit Qwen/Qwen3.5-9B; principled-intelligence/Qwen3.5-9B-text-only is the language model alone"},
		{"qwen3.5-27b.published.config.json", "qwen3_5", 26_895_998_464, 460_730_096, 424_699_392, 27_781_427_952, 0,
			"llmfit Qwen/Qwen3.5-27B and Qwen/Qwen3.6-27B; unsloth/Qwen3.5-27B 27,356,728,560 has no MTP block"},
		{"qwen3.5-35b-a3b.config.json", "qwen3_5_moe", 34_660_610_688, 446_571_248, 844_640_768, 35_951_822_704, 0,
			"llmfit Qwen/Qwen3.5-35B-A3B and Qwen/Qwen3.6-35B-A3B; mlx-community/Qwen3.6-35B-A3B-bf16 35,107,181,936 has no MTP block"},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Family != c.family || m.Params != c.text+c.vision || m.Params+c.mtp != c.full {
				t.Errorf("%s %d params + %d, want %d + %d + %d = %d (%s)", m.Family, m.Params, c.mtp, c.text, c.vision, c.mtp, c.full, c.where)
			}
			if c.textOnly != 0 && m.Params-c.vision != c.textOnly {
				t.Errorf("%d params without the vision encoder, want the text-only checkpoint's %d", m.Params-c.vision, c.textOnly)
			}
			if len(m.Notes) != 2 || !strings.Contains(m.Notes[1], fmt.Sprintf("(%d parameters by vision_config) are counted", c.vision)) {
				t.Errorf("notes %q, want the vision encoder's %d", m.Notes, c.vision)
			}
			if m.Arch == nil || m.Arch.KVLayers*4 != m.Arch.Layers {
				t.Errorf("arch %+v, want every 4th layer with a KV cache", m.Arch)
			}
		})
	}
}

// The text-only model types count the language model alone, and a
// multimodal file without its text_config is refused.
func TestParseHFConfigQwen35TextAndErrors(t *testing.T) {
	text := `{"model_type":"qwen3_5_text","vocab_size":100,"hidden_size":64,"intermediate_size":128,"num_hidden_layers":4,
		"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"linear_num_key_heads":2,"linear_num_value_heads":4,
		"linear_key_head_dim":8,"linear_value_head_dim":8,"tie_word_embeddings":true}`
	m, err := ParseHFConfig([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	// Per layer: norms 2x64 and the MLP 3x64x128. Linear attention (3 layers):
	// 64x(2x16+2x32) + 64x2x4 + 32x64, the conv 64x4, 2x4, 8. Full attention
	// (layer 4): 64x2x64 + 2x64x32 + 64x64, q/k norms 2x16.
	lin := int64(64*(2*16+2*32) + 64*2*4 + 32*64 + 64*4 + 2*4 + 8)
	full := int64(64*2*64 + 2*64*32 + 64*64 + 2*16)
	want := 100*64 + 3*lin + full + 4*(2*64+3*64*128) + 64
	if m.Params != want || len(m.Notes) != 1 {
		t.Errorf("qwen3_5_text: %d params, notes %q; want %d and one note", m.Params, m.Notes, want)
	}
	if _, err := ParseHFConfig([]byte(`{"model_type":"qwen3_5","vision_config":{"depth":2}}`)); err == nil || !strings.Contains(err.Error(), "no text_config") {
		t.Errorf("qwen3_5 without text_config: %v, want no text_config", err)
	}
}
