package recommend

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GLM-4.5V, GLM-4.1V-9B-Thinking, Seed-OSS-36B, OLMo 3 7B and EXAONE 4.0 1.2B against the
// Hub's safetensors totals (testdata/models/README.md).
func TestParseHFConfigFamilyE(t *testing.T) {
	for _, tc := range []struct {
		file, family             string
		params, vision           int64
		layers, kvHeads, headDim int
		sliding, window          int
		experts, topK            int
	}{
		{"glm-4.5v.config.json", "glm4v_moe", 107_710_933_120, 858_681_856, 46, 8, 128, 0, 0, 128, 8},
		{"glm-4.1v-9b-thinking.published.config.json", "glm4v", 10_292_777_472, 892_498_432, 40, 2, 128, 0, 0, 0, 0},
		{"seed-oss-36b-4.3test2.config.json", "seed_oss", 36_151_104_512, 0, 64, 8, 128, 0, 0, 0, 0},
		{"olmo-3-7b.published.config.json", "olmo3", 7_298_011_136, 0, 32, 32, 128, 24, 4096, 0, 0},
		{"exaone-4.0-1.2b.published.config.json", "exaone4", 1_279_391_488, 0, 30, 8, 64, 0, 0, 0, 0},
	} {
		m, err := ParseHFConfig(readModel(t, tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if m.Family != tc.family || m.Params != tc.params || m.VisionParams != tc.vision {
			t.Errorf("%s: %s, %d params (%d vision), want %s, %d (%d)", tc.file, m.Family, m.Params, m.VisionParams, tc.family, tc.params, tc.vision)
		}
		if m.Experts != tc.experts || m.ExpertsPerToken != tc.topK {
			t.Errorf("%s: %d experts (%d a token), want %d (%d)", tc.file, m.Experts, m.ExpertsPerToken, tc.experts, tc.topK)
		}
		a := m.Arch
		if a == nil || a.Layers != tc.layers || a.KVLayers != tc.layers || a.KVHeads != tc.kvHeads || a.HeadDim != tc.headDim ||
			a.SlidingLayers != tc.sliding || a.SlidingWindow != tc.window {
			t.Errorf("%s: arch %+v, want %d KV layers of %d heads of %d, %d sliding of %d", tc.file, a, tc.layers, tc.kvHeads, tc.headDim, tc.sliding, tc.window)
		}
	}
}

// OLMo 3 32B's and EXAONE-4.0-32B's shapes (llmfit: the Hub's counts) with
// their config classes' default layer patterns, and Seed-OSS with an o_proj bias.
func TestFamilyEShapes(t *testing.T) {
	olmo32 := strings.NewReplacer(`"hidden_size": 4096`, `"hidden_size": 5120`, `"intermediate_size": 11008`, `"intermediate_size": 27648`,
		`"num_attention_heads": 32`, `"num_attention_heads": 40`, `"num_hidden_layers": 32`, `"num_hidden_layers": 64`,
		`"num_key_value_heads": 32`, `"num_key_value_heads": 8`)
	data := string(readModel(t, "olmo-3-7b.published.config.json"))
	// 64 layers: drop the 32-entry layer_types so Olmo3Config's default pattern applies.
	start, end := strings.Index(data, `"layer_types"`), strings.Index(data, `"max_position_embeddings"`)
	data = data[:start] + data[end:]
	m, err := ParseHFConfig([]byte(olmo32.Replace(data)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Params != 32_233_522_176 || m.Arch.KVHeads != 8 || m.Arch.SlidingLayers != 48 || m.Arch.SlidingWindow != 4096 {
		t.Errorf("OLMo 3 32B: %d params, arch %+v; want 32,233,522,176, 8 KV heads, 48 sliding layers of 4096", m.Params, m.Arch)
	}
	// EXAONE-4.0-32B's shapes (llmfit's record of its config): untied, and
	// Exaone4Config's default pattern of three sliding layers to a full one.
	exaone32 := strings.NewReplacer(`"hidden_size": 2048`, `"hidden_size": 5120`, `"intermediate_size": 4096`, `"intermediate_size": 27392`,
		`"head_dim": 64`, `"head_dim": 128`, `"num_attention_heads": 32`, `"num_attention_heads": 40`, `"num_hidden_layers": 30`, `"num_hidden_layers": 64`,
		`"sliding_window": null`, `"sliding_window": 4096`, `"tie_word_embeddings": true`, `"tie_word_embeddings": false`)
	data = string(readModel(t, "exaone-4.0-1.2b.published.config.json"))
	start, end = strings.Index(data, `"layer_types"`), strings.Index(data, `"max_position_embeddings"`)
	m, err = ParseHFConfig([]byte(exaone32.Replace(data[:start] + data[end:])))
	if err != nil || m.Params != 32_003_216_384 || m.Arch.SlidingLayers != 48 || m.Arch.SlidingWindow != 4096 {
		t.Errorf("EXAONE-4.0-32B: %d params, %v, arch %+v; want 32,003,216,384 with 48 sliding layers of 4096", m.Params, err, m.Arch)
	}
	seed := strings.Replace(string(readModel(t, "seed-oss-36b-4.3test2.config.json")), `"attention_out_bias": false`, `"attention_out_bias": true`, 1)
	if m, err := ParseHFConfig([]byte(seed)); err != nil || m.Params != 36_151_104_512+64*5120 {
		t.Errorf("Seed-OSS with an o_proj bias: %d, %v; want 64 x 5120 more", m.Params, err)
	}
}

func TestParseHFConfigFamilyEBad(t *testing.T) {
	glm := string(readModel(t, "glm-4.5v.config.json"))
	for _, bad := range []struct{ config, want string }{
		{`{"model_type": "glm4v"}`, "glm4v config.json: no text_config"},
		{`{"model_type": "glm4v_moe", "text_config": {"hidden_size": 64}}`, "glm4v_moe config.json: text_config: missing num_hidden_layers"},
		{strings.Replace(glm, `"depth": 24`, `"depth": 0`, 1), "glm4v_moe config.json: vision_config: depth = 0 is out of range"},
		{strings.Replace(glm, `"image_size": 336`, `"image_size": [336, 448]`, 1), "image_size and patch_size must be square"},
		{strings.Replace(glm, `"patch_size": 14`, `"patch_size": 400`, 1), "image_size 336 is less than patch_size 400"},
		{strings.NewReplacer(`"hidden_size": 1536`, `"hidden_size": 1048576`, `"depth": 24`, `"depth": 4096`).Replace(glm), "more than the"},
		{`{"model_type": "glm4v", "text_config": {"hidden_size": 8, "num_attention_heads": 16, "num_hidden_layers": 1, "vocab_size": 10, "intermediate_size": 8}}`, "num_attention_heads 16 is more than hidden_size 8"},
		{`{"model_type": "seed_oss", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10}`, "seed_oss config.json: missing intermediate_size"},
		{`{"model_type": "seed_oss", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 3, "num_hidden_layers": 2, "vocab_size": 10, "intermediate_size": 8}`, "not a multiple"},
		{`{"model_type": "olmo3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10, "intermediate_size": 8, "layer_types": ["full_attention"]}`, "olmo3 config.json: layer_types has 1 entries for 2 layers"},
		{`{"model_type": "olmo3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1, "vocab_size": 10, "intermediate_size": 8, "layer_types": ["linear_attention"]}`, "layer_types has \"linear_attention\""},
		{`{"model_type": "olmo3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1, "vocab_size": 10, "intermediate_size": 8, "sliding_window": -5}`, "sliding_window is -5"},
		{`{"model_type": "exaone4", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10, "intermediate_size": 8, "sliding_window_pattern": 0}`, "exaone4 config.json: sliding_window_pattern 0"},
		{`{"model_type": "exaone4", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 10}`, "exaone4 config.json: missing intermediate_size"},
	} {
		if _, err := ParseHFConfig([]byte(bad.config)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%.80s: %v, want %q", bad.config, err, bad.want)
		}
	}
	// A null window: every layer attends to everything.
	m, err := ParseHFConfig([]byte(`{"model_type": "olmo3", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 4, "vocab_size": 10, "intermediate_size": 8, "sliding_window": null}`))
	if err != nil || m.Arch.SlidingLayers != 0 {
		t.Errorf("null sliding_window: %v, %+v", err, m.Arch)
	}
	// No vision_config: the language model alone, said so.
	m, err = ParseHFConfig([]byte(strings.Replace(glm, `"vision_config"`, `"no_vision_config"`, 1)))
	if err != nil || m.Params != 106_852_251_264 || m.VisionParams != 0 || !strings.Contains(strings.Join(m.Notes, " "), "vision tower is not counted") {
		t.Errorf("GLM-4.5V without vision_config: %d, %v, %q", m.Params, err, m.Notes)
	}
}

// sliding_window_pattern may be a period or a string of L and G (EXAONE 4's
// docstring writes "LLLG"); both give the same sliding layers, and a string
// with other letters is one clear error.
func TestSlidingWindowPatternLetters(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", "exaone-4.0-1.2b.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg, "layer_types")
	cfg["sliding_window"] = 4096 // the 1.2B model has none; the 32B model's window
	var want int
	for i, pattern := range []any{4, "LLLG"} {
		cfg["sliding_window_pattern"] = pattern
		b, _ := json.Marshal(cfg)
		m, err := ParseHFConfig(b)
		if err != nil {
			t.Fatalf("pattern %v: %v", pattern, err)
		}
		if i == 0 {
			want = m.Arch.SlidingLayers
		}
		if m.Arch.SlidingLayers != want || want == 0 {
			t.Errorf("pattern %v: %d sliding layers, want %d (and some)", pattern, m.Arch.SlidingLayers, want)
		}
	}
	cfg["sliding_window_pattern"] = "LLXG"
	b, _ := json.Marshal(cfg)
	if _, err := ParseHFConfig(b); err == nil || !strings.Contains(err.Error(), "sliding_window_pattern") {
		t.Errorf("LLXG: %v, want an error naming sliding_window_pattern", err)
	}
}
