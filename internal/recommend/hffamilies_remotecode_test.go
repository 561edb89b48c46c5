package recommend

import (
	"bytes"
	"testing"
)

// InternLM-20B's config.json (model_type internlm, "bias": false) as the
// Hub repo internlm/internlm-20b had it before it moved to the llama type,
// held to the total_size of the same repository's
// pytorch_model.bin.index.json (bf16): yangulei/internlm-20b, config.json at
// c56a72957239, index at b8825fe33946 (testdata/models/README.md).
func TestParseHFConfigInternLM(t *testing.T) {
	data := readModel(t, "internlm-20b.config.json")
	m, err := ParseHFConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "internlm" || m.Params*2 != 40_177_428_480 {
		t.Errorf("%s: %d params x 2 B = %d, want the index's total_size 40177428480", m.Family, m.Params, m.Params*2)
	}
	if a := m.Arch; a.Layers != 60 || a.KVHeads != 40 || a.HeadDim != 128 || a.Vocab != 103168 {
		t.Errorf("shape %+v", *a)
	}
	// With "bias": true (InternLM-7B's setting and the config's default)
	// q, k, v and o each gain a bias of hidden_size.
	biased := bytes.Replace(data, []byte(`"bias": false`), []byte(`"bias": true`), 1)
	mb, err := ParseHFConfig(biased)
	if err != nil {
		t.Fatal(err)
	}
	if d := mb.Params - m.Params; d != 60*4*5120 {
		t.Errorf("biases add %d, want 60 layers x 4 x 5120", d)
	}
}

// Baichuan-7B's numbers (the defaults of BaiChuanConfig in
// baichuan-inc/Baichuan-7B, models/configuration_baichuan.py) held to
// calflops' "baichuan-7B 7000559616" (MrYxJ/calculate-flops.pytorch@29ca58443fc1
// README.md).
func TestParseHFConfigBaichuan(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "baichuan-7b.published.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != "baichuan" || m.Params != 7_000_559_616 {
		t.Errorf("%s: %d params, want calflops' 7000559616", m.Family, m.Params)
	}
	if a := m.Arch; a.Layers != 32 || a.KVHeads != 32 || a.HeadDim != 128 || a.Vocab != 64000 {
		t.Errorf("shape %+v", *a)
	}
}
