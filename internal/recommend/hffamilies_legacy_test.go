package recommend

import "testing"

// The remote-code configs of the first Qwen and ChatGLM generations and of
// Falcon's first release, counted and held to a published figure
// (testdata/models/README.md): the parameter counts calflops prints for
// Qwen-7B and chatglm-6b, and the total_size of Falcon's own
// pytorch_model.bin.index.json, which also stores lm_head.weight, a copy of
// the tied word embedding.
func TestParseHFConfigLegacyRemoteCodeFamilies(t *testing.T) {
	cases := []struct {
		file   string
		family string
		params int64 // published
		extra  int64 // parameters the published figure adds to the count
		where  string
	}{
		{"qwen-7b-chat.config.json", "qwen", 7_721_324_544, 0, "calflops README, Qwen-7B 7721324544 (MrYxJ/calculate-flops.pytorch@29ca58443fc1)"},
		{"chatglm-6b.config.json", "chatglm", 6_173_286_400, 0, "calflops README, chatglm-6b 6173286400 (MrYxJ/calculate-flops.pytorch@29ca58443fc1)"},
		{"falcon-7b.config.json", "refinedwebmodel", 14_434_379_520 / 2, 65024 * 4544, "total_size 14434379520 of kimborgen/falcon-llm@fb7e051b1d55 falcon7b-pretrained-configs/pytorch_model.bin.index.json, bf16"},
		{"falcon-40b.config.json", "refinedweb", 83_671_941_120 / 2, 65024 * 8192, "total_size 83671941120 of Decentralised-AI/falcon-40b@6e61c89591cc pytorch_model.bin.index.json, bf16"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Family != c.family || m.Params+c.extra != c.params {
				t.Errorf("%s: %d params + %d, want %d (%s)", m.Family, m.Params, c.extra, c.params, c.where)
			}
			if m.Arch == nil || m.Arch.KVHeads <= 0 || m.Arch.HeadDim <= 0 {
				t.Errorf("no usable shape: %+v", m.Arch)
			}
		})
	}
}

// The shapes the planner reads from these configs: Falcon-7B is
// multi-query, Falcon-40B keeps 8 key/value heads, Qwen's MLP is half its
// configured intermediate size, ChatGLM-6B attends with all 32 heads.
func TestLegacyFamiliesShapes(t *testing.T) {
	cases := []struct {
		file              string
		kvHeads, headDim  int
		ffn, maxPositions int
		tiedHead          bool
	}{
		{"falcon-7b.config.json", 1, 64, 4 * 4544, 0, true},
		{"falcon-40b.config.json", 8, 64, 4 * 8192, 0, true},
		{"qwen-7b-chat.config.json", 32, 128, 11008, 2048, false},
		{"qwen-1.8b.config.json", 16, 128, 5504, 8192, false},
		{"chatglm-6b.config.json", 32, 128, 16384, 2048, true},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			a := m.Arch
			if a.KVHeads != c.kvHeads || a.HeadDim != c.headDim || a.FFN != c.ffn || a.MaxPositions != c.maxPositions {
				t.Errorf("kv heads %d, head dim %d, ffn %d, positions %d; want %d, %d, %d, %d", a.KVHeads, a.HeadDim, a.FFN, a.MaxPositions, c.kvHeads, c.headDim, c.ffn, c.maxPositions)
			}
			if (m.HeadParams == 0) != c.tiedHead {
				t.Errorf("head params %d, want tied %v", m.HeadParams, c.tiedHead)
			}
		})
	}
}
