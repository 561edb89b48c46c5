package recommend

import (
	"strings"
	"testing"
)

// Hunyuan-A13B-Instruct's config.json as Tencent's GitHub repository has
// it says model_type "hunyuan" (the remote-code name); the Hub's file now
// says hunyuan_v1_moe, transformers' name, which the test sets. The count
// is the one the safetensors headers sum to (testdata/models/README.md).
func TestParseHFConfigHunyuanMoE(t *testing.T) {
	data := strings.Replace(string(readModel(t, "hunyuan-a13b-instruct.config.json")), `"model_type": "hunyuan"`, `"model_type": "hunyuan_v1_moe"`, 1)
	m, err := ParseHFConfig([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "hunyuan_v1_moe" || m.Params != 80_393_183_232 || m.Experts != 64 || m.ExpertsPerToken != 8 || m.HeadParams != 0 {
		t.Errorf("%s: %d params, %d experts (%d a token), head %d; want 80,393,183,232, 64 (8), tied", m.Family, m.Params, m.Experts, m.ExpertsPerToken, m.HeadParams)
	}
	// 13B active: attention, 8 routed experts and the shared one a layer.
	if m.ActiveParams != 12_747_448_320 {
		t.Errorf("active %d, want 12,747,448,320", m.ActiveParams)
	}
	if a := m.Arch; a == nil || a.KVLayers != 32 || a.KVHeads != 8 || a.HeadDim != 128 || a.FFN != 9*3072 || !a.Gated {
		t.Errorf("arch %+v, want 32 KV layers of 8 heads of 128, an active MLP of 9 × 3072", m.Arch)
	}
	// The dense models: the same attention and a SwiGLU MLP; Hunyuan-7B's
	// shapes (its Hub config.json: 4096 hidden, 32 layers, 32 heads, 8 KV
	// heads, MLP 14336, 128167 tokens, tied).
	dense := `{"model_type": "hunyuan_v1_dense", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
		"num_key_value_heads": 8, "attention_head_dim": 128, "intermediate_size": 14336, "vocab_size": 128167, "tie_word_embeddings": true}`
	d, err := ParseHFConfig([]byte(dense))
	if err != nil {
		t.Fatal(err)
	}
	// 128167 × 4096 + 32 × (41,943,040 attention + 256 q/k norms + 8,192 norms + 176,160,768 MLP) + 4096
	if d.Params != 7_504_568_320 || d.Experts != 0 || d.Arch.KVHeads != 8 || d.Arch.HeadDim != 128 {
		t.Errorf("hunyuan_v1_dense: %d params, arch %+v; want 7,504,568,320", d.Params, d.Arch)
	}
	for _, bad := range []string{
		`{"model_type": "hunyuan_v1_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32}`,
		`{"model_type": "hunyuan_v1_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32, "num_experts": 4, "moe_topk": [2]}`,
		`{"model_type": "hunyuan_v1_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32, "num_experts": 4, "moe_topk": [2, 3]}`,
		`{"model_type": "hunyuan_v1_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32, "num_experts": 4, "moe_topk": 5}`,
		`{"model_type": "hunyuan_v1_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32, "num_experts": 4, "moe_topk": "two"}`,
		`{"model_type": "hunyuan_v1_dense", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10}`,
		`{"model_type": "hunyuan_v1_dense", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32, "use_cla": true}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "hunyuan_v1_") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}

// Ling-lite (the first generation) and Ling-mini-2.0 (the second, with q/k
// norms and a dense first layer) both say bailing_moe; both counts are the
// Hub's (testdata/models/README.md).
func TestParseHFConfigBailingMoE(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "ling-lite.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "bailing_moe" || m.Params != 16_801_974_272 || m.Experts != 64 || m.ExpertsPerToken != 6 || m.HeadParams == 0 {
		t.Errorf("%s: %d params, %d experts (%d a token); want 16,801,974,272 and 64 (6), untied", m.Family, m.Params, m.Experts, m.ExpertsPerToken)
	}
	if a := m.Arch; a == nil || a.KVLayers != 28 || a.KVHeads != 4 || a.HeadDim != 128 || a.FFN != 8*1408 {
		t.Errorf("arch %+v, want 28 KV layers of 4 heads of 128, an active MLP of (6 + 2) × 1408", m.Arch)
	}
	v2, err := ParseHFConfig(readModel(t, "ling-mini-2.0.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Params != 16_255_643_392 || v2.Experts != 256 || v2.ExpertsPerToken != 8 || v2.Arch.KVLayers != 20 || v2.Arch.FFN != 5120 {
		t.Errorf("Ling-mini-2.0: %d params, %d experts, arch %+v; want 16,255,643,392, 256", v2.Params, v2.Experts, v2.Arch)
	}
	// A multi-token-prediction layer adds an attention, a mixture of
	// experts, eh_proj and five norms.
	mtp, err := ParseHFConfig([]byte(strings.Replace(string(readModel(t, "ling-mini-2.0.published.config.json")),
		`"num_nextn_predict_layers": 0`, `"num_nextn_predict_layers": 1`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	// attention 10,486,016, experts 805,306,368, router 524,288 and its bias 256, shared expert 3,145,728, eh_proj 8,388,608, five norms 10,240
	if want := v2.Params + 10_486_016 + 805_306_368 + 524_288 + 256 + 3_145_728 + 8_388_608 + 10_240; mtp.Params != want {
		t.Errorf("with one MTP layer: %d, want %d", mtp.Params, want)
	}
	for _, bad := range []string{
		`{"model_type": "bailing_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32}`,
		`{"model_type": "bailing_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10, "num_experts": 4, "num_experts_per_tok": 2}`,
		`{"model_type": "bailing_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10, "num_experts": 4, "num_experts_per_tok": 8, "moe_intermediate_size": 16}`,
		`{"model_type": "bailing_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 10, "intermediate_size": 32, "num_nextn_predict_layers": 1}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "bailing_moe") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}

// LFM2-8B-A1B's shapes, from a fine-tune's config.json (the count is the
// Hub's of LiquidAI/LFM2-8B-A1B): 6 of 24 layers attend; 2 dense layers.
func TestParseHFConfigLFM2MoE(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "lfm2-8b-a1b-augment-multi-ft2.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "lfm2_moe" || m.Params != 8_339_929_856 || m.Experts != 32 || m.ExpertsPerToken != 4 || m.HeadParams != 0 {
		t.Errorf("%s: %d params, %d experts (%d a token); want 8,339,929,856 and 32 (4), tied", m.Family, m.Params, m.Experts, m.ExpertsPerToken)
	}
	if a := m.Arch; a == nil || a.Layers != 24 || a.KVLayers != 6 || a.KVHeads != 8 || a.HeadDim != 64 || a.FFN != 7168 {
		t.Errorf("arch %+v, want 6 KV layers of 8 heads of 64 in 24, a widest active MLP of 7168", m.Arch)
	}
	for _, bad := range []string{
		`{"model_type": "lfm2_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10}`,
		`{"model_type": "lfm2_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32, "num_dense_layers": 3}`,
		`{"model_type": "lfm2_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "num_dense_layers": 0, "num_experts": 2, "num_experts_per_tok": 4}`,
		`{"model_type": "lfm2_moe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "num_dense_layers": 0, "layer_types": ["conv"]}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "lfm2_moe") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}

// Qwen2.5-Omni-7B's thinker: the Qwen2 language model with its own head,
// the Qwen2.5-VL vision encoder and the Whisper-style audio encoder; the
// count is the Hub's of a thinker-only checkpoint of these shapes
// (testdata/models/README.md).
func TestParseHFConfigQwen25Omni(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "qwen2.5-omni-7b.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	// 7,615,616,512 (Qwen2-7B) + 676,550,144 (vision) + 639,647,232 (audio)
	if m.Family != "qwen2_5_omni" || m.Params != 8_931_813_888 || m.VisionParams != 676_550_144+639_647_232 || m.HeadParams == 0 {
		t.Errorf("%s: %d params, %d in the encoders, head %d; want 8,931,813,888 and 1,316,197,376, untied", m.Family, m.Params, m.VisionParams, m.HeadParams)
	}
	if a := m.Arch; a == nil || a.KVLayers != 28 || a.KVHeads != 4 || a.HeadDim != 128 || a.Hidden != 3584 {
		t.Errorf("arch %+v, want the language model's 28 KV layers of 4 heads of 128", m.Arch)
	}
	for _, bad := range []string{
		`{"model_type": "qwen2_5_omni"}`,
		`{"model_type": "qwen2_5_omni", "thinker_config": {"text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10}}}`,
		`{"model_type": "qwen2_5_omni", "thinker_config": {"text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32}, "vision_config": {"depth": 2}}}`,
		`{"model_type": "qwen2_5_omni", "thinker_config": {"text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32}, "audio_config": {"d_model": 30, "encoder_attention_heads": 4}}}`,
		`{"model_type": "qwen2_5_omni", "thinker_config": {"text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32}, "audio_config": {"encoder_layers": 0}}}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "qwen2_5_omni") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
	// Without the towers, the language model alone, and the notes say so.
	lm, err := ParseHFConfig([]byte(`{"model_type": "qwen2_5_omni", "thinker_config": {"text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32}}}`))
	if err != nil || lm.VisionParams != 0 || !strings.Contains(strings.Join(lm.Notes, " "), "not counted") {
		t.Errorf("no towers: %v, %+v", err, lm)
	}
}

// The Hub's own Hunyuan-A13B config.json says model_type "hunyuan" (the
// remote code's name): counted as hunyuan_v1_moe, with the same count;
// cross-layer attention (Hunyuan-Large) stays refused.
func TestHunyuanRemoteCodeName(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "hunyuan-a13b-instruct.config.json"))
	if err != nil || m.Params != 80_393_183_232 || m.Experts != 64 {
		t.Fatalf("%d params, %d experts (%v); want 80,393,183,232 and 64", m.Params, m.Experts, err)
	}
	bad := `{"model_type": "hunyuan", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "intermediate_size": 32, "use_cla": true}`
	if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "use_cla") {
		t.Errorf("use_cla: %v, want it refused", err)
	}
}
