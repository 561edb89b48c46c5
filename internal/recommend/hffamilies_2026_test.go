package recommend

import (
	"testing"
)

// The families added in 2026, each counted from a config.json and held to
// a parameter count published elsewhere (testdata/models/README.md names
// every source). extra is what the published figure holds beyond the
// counted model: a block transformers does not load, a vision tower.
var families2026 = []struct {
	file      string
	family    string
	published int64
	extra     int64
	where     string
}{
	{"gpt-oss-20b.config.json", "gpt_oss", 20_914_757_184, 0, "llmfit unsloth/gpt-oss-20b-BF16 (the Hub count of the bf16 checkpoint)"},
	{"gpt-oss-120b.config.json", "gpt_oss", 116_829_156_672, 0, "llmfit unsloth/gpt-oss-120b-BF16"},
	{"starcoder2-7b.config.json", "starcoder2", 7_173_923_840, 0, "llmfit bigcode/starcoder2-7b"},
	{"aya-23-8b.config.json", "cohere", 8_028_033_024, 0, "llmfit CohereLabs/aya-23-8B"},
	// The Hub checkpoint also stores the multi-token-prediction block:
	// fc (2h→h), two pre-fc RMSNorms, one full-attention MoE layer and its
	// norm, 8,388,608 + 4,096 + 1,642,076,672 + 2,048 parameters.
	{"qwen3-next-80b-a3b.config.json", "qwen3_next", 81_324_862_720, 1_650_471_424, "llmfit Qwen/Qwen3-Next-80B-A3B-Instruct, with its MTP block"},
}

func TestParseHFConfig2026FamiliesMatchPublishedCounts(t *testing.T) {
	for _, c := range families2026 {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Family != c.family || m.Params+c.extra != c.published {
				t.Errorf("%s: %d params + %d = %d, want %d (%s)", m.Family, m.Params, c.extra, m.Params+c.extra, c.published, c.where)
			}
			if m.Arch == nil || m.Arch.KVHeads <= 0 || m.Arch.HeadDim <= 0 || m.Arch.Layers <= 0 {
				t.Errorf("no usable shape: %+v", m.Arch)
			}
		})
	}
}

// gpt-oss's model card figures, 20.91B total / 3.61B active for gpt-oss-20b
// and 116.83B / 5.13B for gpt-oss-120b (as quoted by
// https://www.morphllm.com/gpt-oss), count the unembedding but not the
// embedding lookup in the active share; devctl's active count, like its
// other mixtures', holds both.
func TestGPTOSSActiveParams(t *testing.T) {
	for _, c := range []struct {
		file     string
		activeB  float64
		experts  int
		perToken int
	}{{"gpt-oss-20b.config.json", 3.61, 32, 4}, {"gpt-oss-120b.config.json", 5.13, 128, 4}} {
		m, err := ParseHFConfig(readModel(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if m.Experts != c.experts || m.ExpertsPerToken != c.perToken {
			t.Errorf("%s: experts %d × %d, want %d × %d", c.file, m.Experts, m.ExpertsPerToken, c.experts, c.perToken)
		}
		withoutEmbedding := float64(m.ActiveParams-m.HeadParams) / 1e9 // the head equals the embedding in size
		if withoutEmbedding < c.activeB-0.005 || withoutEmbedding >= c.activeB+0.005 {
			t.Errorf("%s: active params less the embedding %.3fB, want %.2fB", c.file, withoutEmbedding, c.activeB)
		}
	}
}
