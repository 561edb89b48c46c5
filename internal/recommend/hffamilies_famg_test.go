package recommend

import (
	"strings"
	"testing"
)

// Kimi-VL-A3B-Instruct: the language model is Moonlight-16B-A3B's
// (15,960,110,208 by the DeepSeek counter), the rest MoonViT and the
// projector. The Hub count (llmfit 16,407,657,776) is 1,728 more, the same
// 27 × 64 stored values beyond the modules that Moonlight's Hub count has;
// Kimi-VL's minus Moonlight's Hub count, 447,545,840, is the vision tower
// and projector counted here exactly (testdata/models/README.md).
func TestParseHFConfigKimiVL(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "kimi-vl-a3b-instruct.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "kimi_vl" || m.Params != 16_407_656_048 || m.VisionParams != 447_545_840 || m.Experts != 64 || m.ExpertsPerToken != 6 || m.HeadParams != 163_840*2048 {
		t.Errorf("%s: %d params (%d vision), %d experts (%d a token), head %d; want 16,407,656,048 (447,545,840), 64 (6), untied",
			m.Family, m.Params, m.VisionParams, m.Experts, m.ExpertsPerToken, m.HeadParams)
	}
	if a := m.Arch; a == nil || a.KVLayers != 27 || a.KVHeads != 16 || a.HeadDim != 128 || a.LatentKV != 512+64 || a.Hidden != 2048 || a.FFN != 8*1408 {
		t.Errorf("arch %+v, want 27 layers of 16 heads of 128, a latent of 576, an active MLP of (6 + 2) × 1408", m.Arch)
	}
	base := string(readModel(t, "kimi-vl-a3b-instruct.published.config.json"))
	for i, bad := range []string{
		`{"model_type": "kimi_vl", "vision_config": {"hidden_size": 1152, "num_hidden_layers": 27, "intermediate_size": 4304}}`,
		strings.Replace(base, `"vision_config"`, `"vision_cfg"`, 1),
		strings.Replace(base, `"intermediate_size": 4304,`, ``, 1),
		strings.Replace(base, `"merge_kernel_size": [2, 2]`, `"merge_kernel_size": [2]`, 1),
		strings.Replace(base, `"merge_kernel_size": [2, 2]`, `"merge_kernel_size": [0, 2]`, 1),
		strings.Replace(base, `"kv_lora_rank": 512,`, ``, 1),
		strings.Replace(base, `"hidden_size": 1152,`, `"hidden_size": 100000000000,`, 1),
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "kimi_vl") {
			t.Errorf("case %d: %v, want one clear kimi_vl error", i, err)
		}
	}
}

// DeepSeek-VL2-Tiny (Llama attention, use_mla false) and -Small (multi-head
// latent attention, DeepSeek-V2-Lite's language model): SigLIP-SO400M with
// its attention-pooling head, the 2 × 2 downsampling MLP adaptor and the
// two 2D tile tokens; both equal the Hub counts (llmfit).
func TestParseHFConfigDeepSeekVL2(t *testing.T) {
	tiny, err := ParseHFConfig(readModel(t, "deepseek-vl2-tiny.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	// SigLIP 412,987,248 + its pool 15,238,352 + adaptor 7,539,200 + 2 × 1280
	if tiny.Family != "deepseek_vl_v2" || tiny.Params != 3_370_501_440 || tiny.VisionParams != 435_767_360 || tiny.Experts != 64 || tiny.ExpertsPerToken != 6 {
		t.Errorf("tiny: %d params (%d vision), %d experts (%d a token); want 3,370,501,440 (435,767,360), 64 (6)", tiny.Params, tiny.VisionParams, tiny.Experts, tiny.ExpertsPerToken)
	}
	if a := tiny.Arch; a == nil || a.KVLayers != 12 || a.KVHeads != 10 || a.HeadDim != 128 || a.LatentKV != 0 || a.FFN != 8*896 {
		t.Errorf("tiny arch %+v, want 12 layers of 10 KV heads of 128, no latent, an active MLP of (6 + 2) × 896", tiny.Arch)
	}
	small, err := ParseHFConfig(readModel(t, "deepseek-vl2-small.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if small.Params != 16_148_349_504 || small.Params-small.VisionParams != 15_706_484_224 || small.Experts != 64 {
		t.Errorf("small: %d params (%d vision), %d experts; want 16,148,349,504 of which 15,706,484,224 DeepSeek-V2-Lite's", small.Params, small.VisionParams, small.Experts)
	}
	if a := small.Arch; a == nil || a.KVLayers != 27 || a.KVHeads != 16 || a.LatentKV != 576 {
		t.Errorf("small arch %+v, want 27 layers of 16 heads, a latent of 576", small.Arch)
	}
	base := string(readModel(t, "deepseek-vl2-tiny.published.config.json"))
	for _, bad := range []string{
		`{"model_type": "deepseek_vl_v2", "vision_config": {}, "projector_config": {}}`,
		strings.Replace(base, `"vision_config"`, `"vision_cfg"`, 1),
		strings.Replace(base, `"projector_config"`, `"projector_cfg"`, 1),
		strings.Replace(base, `"width": 1152,`, ``, 1),
		strings.Replace(base, `"mlp_ratio": 3.7362,`, ``, 1),
		strings.Replace(base, `"image_size": 384,`, `"image_size": 7,`, 1),
		strings.Replace(base, `"global_pool": "map"`, `"global_pool": "max"`, 1),
		strings.Replace(base, `"projector_type": "downsample_mlp_gelu"`, `"projector_type": "conv"`, 1),
		strings.Replace(base, `"tile_tag": "2D"`, `"tile_tag": "1D"`, 1),
		strings.Replace(base, `"moe_intermediate_size": 896,`, ``, 1),
		strings.Replace(base, `"num_experts_per_tok": 6,`, `"num_experts_per_tok": 65,`, 1),
		strings.Replace(base, `"use_mla": false,`, `"use_mla": true,`, 1), // MLA without kv_lora_rank
		strings.Replace(base, `"depth": 2,`, `"depth": 100000,`, 1),
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "deepseek_vl_v2") {
			t.Errorf("%.80s...: %v, want one clear deepseek_vl_v2 error", bad, err)
		}
	}
	// The 2D tile tokens, the adaptor's default and a linear projector.
	lin := strings.Replace(base, `"projector_type": "downsample_mlp_gelu"`, `"projector_type": "linear"`, 1)
	l, err := ParseHFConfig([]byte(lin))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tiny.Params-l.Params, int64(7_539_200-(1152*1280+1280)); got != want {
		t.Errorf("linear projector: %d fewer, want %d", got, want)
	}
}
