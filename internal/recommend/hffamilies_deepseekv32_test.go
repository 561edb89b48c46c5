package recommend

import (
	"strings"
	"testing"
)

// DeepSeek-V3.2-Exp (testdata/models/README.md): DeepSeek-V3's count plus
// 61 lightning indexers; with the multi-token-prediction layer (an MoE
// layer with its own indexer, eh_proj, three norms, its embedding and
// head) and the FP8 block scales it is llmfit's 685,396,921,376 for
// deepseek-ai/DeepSeek-V3.2-Exp and DeepSeek-V3.2.
func TestParseHFConfigDeepSeekV32(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "deepseek-v3.2-exp-ptpc.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	const h, V, H, qr, kvr, E, moeFFN, denseFFN = 7168, 129280, 128, 1536, 512, 256, 2048, 18432
	indexer := int64(qr*64*128 + h*128 + 2*128 + h*64) // wq_b, wk, k_norm (weight, bias), weights_proj
	if m.Family != "deepseek_v32" || m.Params != 671_026_419_200+61*indexer || m.Params != 671_877_944_064 {
		t.Errorf("%s: %d params, want DeepSeek-V3's 671,026,419,200 + 61 x %d = 671,877,944,064", m.Family, m.Params, indexer)
	}
	attn := int64(h*qr+qr+qr*H*192) + h*(kvr+64) + kvr + kvr*H*256 + H*128*h
	moe := int64(E+1)*3*h*moeFFN + h*E + E
	mtp := attn + indexer + 2*h + moe + 2*h + 2*h*h + h + 2*V*h
	layerScales := fp8Blocks(qr, h) + fp8Blocks(H*192, qr) + fp8Blocks(kvr+64, h) + fp8Blocks(H*256, kvr) + fp8Blocks(h, H*128) +
		fp8Blocks(64*128, qr) + fp8Blocks(128, h) // the indexer's wq_b and wk (weights_proj stays bf16)
	moeScales := (E + 1) * (2*fp8Blocks(moeFFN, h) + fp8Blocks(h, moeFFN))
	denseScales := 2*fp8Blocks(denseFFN, h) + fp8Blocks(h, denseFFN)
	scales := 62*layerScales + 3*denseScales + 59*moeScales // 58 MoE layers and the MTP layer's; its eh_proj stays bf16
	// Without the scales: the Hub's later count of deepseek-ai/DeepSeek-V3.2
	// (the MoE-grouping journal of testdata/models/README.md).
	if got := m.Params + mtp; got != 685_355_329_792 {
		t.Errorf("%d + MTP %d = %d, want the Hub's 685,355,329,792", m.Params, mtp, got)
	}
	if got := m.Params + mtp + scales; got != 685_396_921_376 {
		t.Errorf("%d + MTP %d + FP8 scales %d = %d, want llmfit's 685,396,921,376", m.Params, mtp, scales, got)
	}
	if a := m.Arch; a == nil || a.KVLayers != 61 || a.LatentKV != 576 || a.LatentRank != 512 || m.Experts != 256 || m.ExpertsPerToken != 8 {
		t.Errorf("arch %+v, experts %d/%d, want 61 layers caching a 576-value latent, 8 of 256 experts", m.Arch, m.ExpertsPerToken, m.Experts)
	}
	if !strings.Contains(strings.Join(m.Notes, " "), "indexer") {
		t.Errorf("notes %q do not mention the indexer", m.Notes)
	}
	base := `{"model_type":"deepseek_v32","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"kv_lora_rank":8,"qk_nope_head_dim":4,"qk_rope_head_dim":4,"v_head_dim":4,"intermediate_size":32,"moe_intermediate_size":8,"n_routed_experts":4,"num_experts_per_tok":2`
	for _, bad := range []string{
		base + `}`, // no q_lora_rank: the indexer's wq_b reads the query latent
		base + `,"q_lora_rank":16,"index_n_heads":0}`,
		base + `,"q_lora_rank":16,"index_head_dim":8192}`,
		base + `,"q_lora_rank":16,"index_topk":-1}`,
		`{"model_type":"deepseek_v32","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10,"q_lora_rank":16}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "deepseek_v32") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
	small, err := ParseHFConfig([]byte(base + `,"q_lora_rank":16,"index_n_heads":2,"index_head_dim":8}`))
	v3, err2 := ParseHFConfig([]byte(strings.Replace(base, "deepseek_v32", "deepseek_v3", 1) + `,"q_lora_rank":16}`))
	if err != nil || err2 != nil || small.Params-v3.Params != 2*(16*2*8+64*8+2*8+64*2) {
		t.Errorf("indexers add %d (%v, %v), want 2 x (256 + 512 + 16 + 128)", small.Params-v3.Params, err, err2)
	}
}

// Kimi K2 (testdata/models/README.md) is DeepSeek-V3's architecture with
// 384 experts, 64 heads and one dense layer. The count is llmfit's for
// mlx-community/Kimi-K2.6-mlx-DQ3_K_M-q8 (an MLX re-save of a language
// model of K2's shapes). The Hub's count of moonshotai/Kimi-K2-Instruct
// without its FP8 scales, 1,026,408,235,864, is 3,416 (61 x 56) more: not a
// parameter of modeling_deepseek.py's modules, and not counted.
func TestParseHFConfigKimiK2(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "kimi-k2-instruct.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "kimi_k2" || m.Params != 1_026_408_232_448 || m.Params+61*56 != 1_026_408_235_864 {
		t.Errorf("%s: %d params, want 1,026,408,232,448 (the Hub table's 1,026,408,235,864 less 3,416)", m.Family, m.Params)
	}
	// The llmfit count of the FP8 checkpoint holds the 128 x 128 block
	// scales of every quantised matrix (attention, the dense MLP, the
	// experts and the shared expert) beside the table's count.
	const h, H, qr, kvr, E, moeFFN, denseFFN = 7168, 64, 1536, 512, 384, 2048, 18432
	attn := fp8Blocks(qr, h) + fp8Blocks(H*192, qr) + fp8Blocks(kvr+64, h) + fp8Blocks(H*256, kvr) + fp8Blocks(h, H*128)
	scales := 61*attn + 2*fp8Blocks(denseFFN, h) + fp8Blocks(h, denseFFN) + 60*(E+1)*(2*fp8Blocks(moeFFN, h)+fp8Blocks(h, moeFFN))
	if scales != 62_495_192 || 1_026_408_235_864+scales != 1_026_470_731_056 {
		t.Errorf("%d FP8 scales, want llmfit's 1,026,470,731,056 less the table's 1,026,408,235,864 = 62,495,192", scales)
	}
	if a := m.Arch; a == nil || a.KVLayers != 61 || a.Heads != 64 || a.LatentKV != 576 || m.Experts != 384 || m.ExpertsPerToken != 8 {
		t.Errorf("arch %+v, experts %d/%d, want 61 layers of 64 heads caching a 576-value latent, 8 of 384 experts", m.Arch, m.ExpertsPerToken, m.Experts)
	}
	// Moonshot: 32B activated parameters.
	if a := float64(m.ActiveParams) / 1e9; a < 32 || a >= 33 {
		t.Errorf("%.2fB active, want Moonshot's 32B", a)
	}
	if _, err := ParseHFConfig([]byte(`{"model_type":"kimi_k2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":10}`)); err == nil || !strings.Contains(err.Error(), "kimi_k2") {
		t.Errorf("kimi_k2 without its MLA fields: %v, want one clear error", err)
	}
}
