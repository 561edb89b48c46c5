package recommend

import (
	"strings"
	"testing"
)

// LLaVA-1.5 and LLaVA-NeXT count as the Hub's safetensors totals
// (testdata/models/README.md): the language model from LlamaConfig's and
// MistralConfig's defaults where text_config is silent, the whole CLIP
// tower, the projector and (LLaVA-NeXT) image_newline.
func TestParseHFConfigLlava(t *testing.T) {
	for _, tc := range []struct {
		file, family        string
		params, vision      int64
		layers, kvHeads, hd int
	}{
		{"llava-1.5-7b-hf.config.json", "llava", 7_063_427_072, 324_487_168, 32, 32, 128},
		{"llava-v1.6-mistral-7b-3x3.config.json", "llava_next", 7_566_747_648, 324_491_264, 32, 8, 128},
	} {
		m, err := ParseHFConfig(readModel(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if m.Family != tc.family || m.Params != tc.params || m.VisionParams != tc.vision || m.HeadParams != 4096*32064 {
			t.Errorf("%s: %s %d params (vision %d, head %d), want %s %d (vision %d)", tc.file, m.Family, m.Params, m.VisionParams, m.HeadParams, tc.family, tc.params, tc.vision)
		}
		if a := m.Arch; a == nil || a.Layers != tc.layers || a.KVLayers != tc.layers || a.KVHeads != tc.kvHeads || a.HeadDim != tc.hd || a.Hidden != 4096 {
			t.Errorf("%s: arch %+v, want %d KV layers of %d heads of %d", tc.file, m.Arch, tc.layers, tc.kvHeads, tc.hd)
		}
	}
	// llava-hf/llava-v1.6-vicuna-7b-hf is LLaVA-1.5-7B's shapes under
	// llava_next: 4,096 more for image_newline, 7,063,431,168 on the Hub.
	next := strings.Replace(string(readModel(t, "llava-1.5-7b-hf.config.json")), `"model_type": "llava"`, `"model_type": "llava_next"`, 1)
	if m, err := ParseHFConfig([]byte(next)); err != nil || m.Params != 7_063_431_168 {
		t.Errorf("llava_next with LLaVA-1.5's shapes: %d, %v; want 7,063,431,168", m.Params, err)
	}
	// Two feature layers double the projector's input.
	two := strings.Replace(string(readModel(t, "llava-1.5-7b-hf.config.json")), `"vision_feature_layer": -2`, `"vision_feature_layer": [-2, -5]`, 1)
	if m, err := ParseHFConfig([]byte(two)); err != nil || m.Params != 7_063_427_072+1024*4096 {
		t.Errorf("two feature layers: %d, %v; want %d", m.Params, err, 7_063_427_072+1024*4096)
	}
	// A tower other than CLIP leaves the language model alone counted.
	siglip := strings.Replace(string(readModel(t, "llava-1.5-7b-hf.config.json")), `"clip_vision_model"`, `"siglip_vision_model"`, 1)
	if m, err := ParseHFConfig([]byte(siglip)); err != nil || m.VisionParams != 0 || m.Params != 7_063_427_072-324_487_168 {
		t.Errorf("siglip tower: %d (vision %d), %v; want the language model's 6,738,939,904", m.Params, m.VisionParams, err)
	}
	for _, bad := range []string{
		`{"model_type": "llava"}`,
		`{"model_type": "llava", "text_config": {"model_type": "gemma"}}`,
		`{"model_type": "llava_next", "text_config": {"model_type": "llama", "hidden_size": 0}}`,
		`{"model_type": "llava", "text_config": {"model_type": "llama"}, "vision_feature_layer": "last"}`,
		`{"model_type": "llava", "text_config": {"model_type": "llama"}, "vision_feature_layer": []}`,
		`{"model_type": "llava", "text_config": {"model_type": "llama"}, "vision_config": {"image_size": 14, "patch_size": 336}}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "llava") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
	// A size that is neither a number nor a pair fails the decoding.
	if _, err := ParseHFConfig([]byte(`{"model_type": "llava", "vision_config": {"image_size": [336]}}`)); err == nil || !strings.Contains(err.Error(), "image_size") {
		t.Errorf("image_size [336]: %v, want an error naming it", err)
	}
}
