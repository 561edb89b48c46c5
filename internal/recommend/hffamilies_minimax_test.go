package recommend

import (
	"strings"
	"testing"
)

// fp8Blocks is the number of weight_scale_inv entries of a rows × cols
// matrix stored in FP8 with 128 × 128 blocks (weight_block_size).
func fp8Blocks(rows, cols int64) int64 {
	return (rows + 127) / 128 * ((cols + 127) / 128)
}

// MiniMax-M2 (testdata/models/README.md): the count is the Hub's for
// MiniMaxAI/MiniMax-M2.7 without the FP8 scales, and with them llmfit's
// 228,703,644,928 of MiniMax-M2, M2.1, M2.5 and M2.7; every one of the 62
// layers is full attention with a KV cache of 8 heads of 128.
func TestParseHFConfigMiniMaxM2(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "minimax-m2.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "minimax_m2" || m.Params != 228_689_764_864 || m.Experts != 256 || m.ExpertsPerToken != 8 {
		t.Errorf("%s: %d params, %d experts (%d a token); want 228,689,764,864 and 256 (8)", m.Family, m.Params, m.Experts, m.ExpertsPerToken)
	}
	// The checkpoint's weight_scale_inv: q, k, v and o and every expert's
	// three matrices (the router and the head are not quantised).
	const h, q, kv, ffn = 3072, 48 * 128, 8 * 128, 1536
	scales := 62 * (fp8Blocks(q, h) + 2*fp8Blocks(kv, h) + fp8Blocks(h, q) + 256*(2*fp8Blocks(ffn, h)+fp8Blocks(h, ffn)))
	if m.Params+scales != 228_703_644_928 {
		t.Errorf("%d + %d FP8 scales = %d, want llmfit's 228,703,644,928", m.Params, scales, m.Params+scales)
	}
	if a := m.Arch; a == nil || a.Layers != 62 || a.KVLayers != 62 || a.KVHeads != 8 || a.HeadDim != 128 || a.SlidingLayers != 0 || !a.Gated {
		t.Errorf("arch %+v, want 62 full-attention KV layers of 8 heads of 128", m.Arch)
	}
	// MiniMax: 10B activated (the embedding and the head are 1.23B more).
	if a := float64(m.ActiveParams-2*200064*h) / 1e9; a < 9.5 || a >= 10.5 {
		t.Errorf("%.2fB active less the embedding and head, want about 10B", a)
	}
	base := `{"model_type":"minimax_m2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":32,"num_local_experts":4,"num_experts_per_tok":2,"vocab_size":10`
	full, err1 := ParseHFConfig([]byte(base + `}`))
	bare, err2 := ParseHFConfig([]byte(base + `,"use_qk_norm":false,"use_routing_bias":false,"attn_type_list":[1,1],"qk_norm_type":"per_layer"}`))
	if err1 != nil || err2 != nil || full.Params-bare.Params != 2*(4*16+2*16)+2*4 {
		t.Errorf("q/k norms and routing bias add %d (%v, %v), want 2 layers x (64 + 32 + 4)", full.Params-bare.Params, err1, err2)
	}
	for _, bad := range []string{
		base + `,"attn_type_list":[0,1]}`,
		base + `,"attn_type_list":[1]}`,
		base + `,"qk_norm_type":"per_head"}`,
		base + `,"shared_intermediate_size":64}`,
		`{"model_type":"minimax_m2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":32,"num_experts_per_tok":2,"vocab_size":10}`,
		`{"model_type":"minimax_m2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":32,"num_local_experts":4,"num_experts_per_tok":8,"vocab_size":10}`,
		`{"model_type":"minimax_m2","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":3,"intermediate_size":32,"num_local_experts":4,"num_experts_per_tok":2,"vocab_size":10}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "minimax_m2") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}

// MiniMax-M1 (testdata/models/README.md): 70 lightning-attention layers and
// 10 full-attention ones (every eighth), 32 experts of 9216, 2 a token;
// only the 10 full layers keep a KV cache.
func TestParseHFConfigMiniMaxM1(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "minimax-m1.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "minimax_m1" || m.Params != 456_089_655_296 || m.Experts != 32 || m.ExpertsPerToken != 2 {
		t.Errorf("%s: %d params, %d experts (%d a token); want 456,089,655,296 and 32 (2)", m.Family, m.Params, m.Experts, m.ExpertsPerToken)
	}
	if a := m.Arch; a == nil || a.Layers != 80 || a.KVLayers != 10 || a.KVHeads != 8 || a.HeadDim != 128 {
		t.Errorf("arch %+v, want 10 KV layers of 8 heads of 128 among 80", m.Arch)
	}
	// MiniMax: "456 billion parameters with 45.9 billion parameters
	// activated per token".
	if a := float64(m.ActiveParams-2*200064*6144) / 1e9; a < 45.85 || a >= 45.95 {
		t.Errorf("%.2fB active less the embedding and head, want MiniMax's 45.9B", a)
	}
	// transformers' MiniMaxConfig names the same layers by layer_types.
	base := `{"model_type":"minimax","hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":32,"num_local_experts":4,"num_experts_per_tok":2,"vocab_size":10`
	byList, err1 := ParseHFConfig([]byte(base + `,"attn_type_list":[0,0,0,1]}`))
	byTypes, err2 := ParseHFConfig([]byte(base + `,"layer_types":["linear_attention","linear_attention","linear_attention","full_attention"]}`))
	alternating, err3 := ParseHFConfig([]byte(base + `}`))
	if err1 != nil || err2 != nil || err3 != nil || byList.Params != byTypes.Params || byList.Arch.KVLayers != 1 || alternating.Arch.KVLayers != 2 {
		t.Errorf("attn_type_list %v, layer_types %v, default %v: %d/%d params, %d and %d KV layers", err1, err2, err3, byList.Params, byTypes.Params, byList.Arch.KVLayers, alternating.Arch.KVLayers)
	}
	// A lightning layer: qkv (64 x 192), gate (64 x 64), out (64 x 64) and a
	// norm of 64, against q, k, v, o of 64 x 64, 2 x 64 x 32 and 64 x 64.
	if d := byList.Params - alternating.Params; d != (64*192+64*64+64*64+64)-(64*64+2*64*32+64*64) {
		t.Errorf("one more lightning layer adds %d", d)
	}
	for _, bad := range []string{
		base + `,"attn_type_list":[0,1]}`,
		base + `,"attn_type_list":[0,1,2,1]}`,
		base + `,"layer_types":["linear_attention","sliding_attention","full_attention","full_attention"]}`,
		base + `,"shared_intermediate_size":64}`,
		`{"model_type":"minimax","hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"intermediate_size":32,"num_experts_per_tok":2,"vocab_size":10}`,
	} {
		if _, err := ParseHFConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "minimax") {
			t.Errorf("%s: %v, want one clear error", bad, err)
		}
	}
}
