package recommend

import "testing"

// DistilBERT's encoder: 66,362,880 parameters for distilbert-base-uncased
// (its published size), no KV cache, BERT's dropout on the attention.
func TestParseHFConfigDistilBERT(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "distilbert-base-uncased.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "distilbert" || m.Params != 66_362_880 || m.Arch == nil || m.Arch.KVLayers != 0 || m.Arch.AttnDropout != 0.1 {
		t.Errorf("%s: %d params, arch %+v; want 66,362,880, an encoder with attention dropout 0.1", m.Family, m.Params, m.Arch)
	}
}
