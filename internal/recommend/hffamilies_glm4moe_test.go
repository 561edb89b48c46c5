package recommend

import "testing"

// GLM-4.5-Air (testdata/models/README.md): the count, its Hub count with
// the multi-token-prediction layer, and zai-org's "106 billion total
// parameters and 12 billion active parameters" (GLM-4.5 README).
func TestParseHFConfigGLM4MoE(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "glm-4.5-air.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	const h, V = 4096, 151552
	// The MTP layer: one MoE decoder layer (attention 109,066,240 with its
	// q/k/v biases, two norms, 128 experts and a shared one of 1408 with
	// the router, 2,232,418,432), eh_proj (2h→h) and three norms
	// (enorm, hnorm, shared_head.norm), and two vocabulary matrices
	// (embed_tokens and shared_head.head).
	mtp := int64(109_066_240+2*h+2_232_418_432) + 2*h*h + 3*h + 2*V*h
	if m.Family != "glm4_moe" || m.Params != 106_852_251_264 || m.Params+mtp != 110_468_824_832 {
		t.Errorf("%s: %d params + MTP %d = %d, want 106,852,251,264 and llmfit zai-org/GLM-4.5-Air's 110,468,824,832", m.Family, m.Params, mtp, m.Params+mtp)
	}
	// 12.18B active less the embedding and the head.
	if a := float64(m.ActiveParams-2*V*h) / 1e9; a < 12 || a >= 12.5 {
		t.Errorf("%.2fB active less the embedding and head, want zai-org's 12B", a)
	}
	if m.Experts != 128 || m.ExpertsPerToken != 8 || m.Arch.HeadDim != 128 || m.Arch.KVHeads != 8 {
		t.Errorf("experts %d/%d, arch %+v", m.ExpertsPerToken, m.Experts, m.Arch)
	}
	// GLM-4.5: q/k norms, 160 experts of 1536, the first 3 layers dense;
	// its MTP layer (an MoE decoder layer, eh_proj, three norms and two
	// vocabulary matrices) makes up llmfit's 358,337,791,296 (GLM-4.7 has
	// the same count); zai-org: "32 billion active parameters".
	big, err := ParseHFConfig(readModel(t, "glm-4.5.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	const h5 = 5120
	attn := int64(h5*96*128*2 + 2*h5*8*128 + 96*128 + 2*8*128 + 2*128)
	bigMTP := attn + 2*h5 + 160*3*h5*1536 + h5*160 + 160 + 3*h5*1536 + 2*h5*h5 + 3*h5 + 2*V*h5
	if big.Params != 352_797_829_024 || big.Params+bigMTP != 358_337_791_296 {
		t.Errorf("GLM-4.5: %d params + MTP %d = %d, want 352,797,829,024 and llmfit's 358,337,791,296", big.Params, bigMTP, big.Params+bigMTP)
	}
	if a := float64(big.ActiveParams-2*V*h5) / 1e9; a < 32 || a >= 33 {
		t.Errorf("GLM-4.5: %.2fB active less the embedding and head, want zai-org's 32B", a)
	}
	// use_qk_norm adds a head_dim norm on q and on k in every layer.
	if _, err := ParseHFConfig([]byte(`{"model_type":"glm4_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"head_dim":16,"intermediate_size":32,"moe_intermediate_size":8,"n_routed_experts":4,"num_experts_per_tok":5,"vocab_size":10}`)); err == nil {
		t.Error("5 experts per token of 4 accepted")
	}
	base := `{"model_type":"glm4_moe","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"intermediate_size":32,"moe_intermediate_size":8,"n_routed_experts":4,"num_experts_per_tok":2,"n_shared_experts":1,"first_k_dense_replace":1,"vocab_size":10`
	plain, err1 := ParseHFConfig([]byte(base + `}`))
	normed, err2 := ParseHFConfig([]byte(base + `,"use_qk_norm":true,"attention_bias":true}`))
	if err1 != nil || err2 != nil || normed.Params-plain.Params != 2*(2*16)+2*(4*16+2*2*16) {
		t.Errorf("q/k norms and biases add %d (%v, %v), want 2 layers x (2x16 + 128)", normed.Params-plain.Params, err1, err2)
	}
}
