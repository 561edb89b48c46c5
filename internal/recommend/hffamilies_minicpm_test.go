package recommend

import "testing"

// MiniCPM's blocks are Llama's: 2,442,057,984 parameters besides the tied
// embedding, the model card's "2.4B excluding embeddings".
func TestParseHFConfigMiniCPM(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "minicpm-2b-sft-bf16.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if emb := int64(122_753 * 2304); m.Family != "minicpm" || m.Params != 2_442_057_984+emb {
		t.Errorf("%s: %d params, want 2,442,057,984 + %d", m.Family, m.Params, emb)
	}
}
