package recommend

import (
	"testing"

	"github.com/devctl/devctl/configs"
)

// The families added for issue 20, each counted from a config.json and
// held to a parameter count published elsewhere (testdata/models/README.md:
// the Hub's safetensors count, or a count printed by code that loaded the
// model). An exact ten-digit match checks the architecture numbers and the
// counter together.
func TestParseHFConfigMoreFamiliesMatchPublishedCounts(t *testing.T) {
	cases := []struct {
		file   string
		family string
		params int64
		where  string
	}{
		{"phi-2.config.json", "phi", 2_779_683_840, "the Hub's safetensors count for microsoft/phi-2, F16 2779683840 (search ids 48474337912, 68960744416)"},
		{"phi-1_5.config.json", "phi", 1_418_270_720, "microsoft/phi-1_5 'safetensors_total_params: 1418270720' (search ids 70228203983, 28190907095)"},
		{"starcoder-15b.published.config.json", "gpt_bigcode", 15_517_456_384, "a table of StarCoder-15B sizes, 15517456384 (search id 69542685706)"},
		{"gpt-neo-1.3b.published.config.json", "gpt_neo", 1_315_575_808, "a printed GPTNeoForCausalLM, 'all params:1315575808' (search id 58887566530)"},
		{"gpt-j-6b.published.config.json", "gptj", 6_050_882_784, "GPT-J-6B loaded and counted, '# of params: 6050882784' (search ids 37133021827, 37652160461)"},
		{"stablelm-2-1.6b.published.config.json", "stablelm", 1_644_515_328, "a StableLM 2 1.6B comparison table, 'Parameters 1644515328' (search id 35661935992)"},
		{"olmo-2-7b.published.config.json", "olmo2", 7_298_617_344, "allenai/OLMo-2-1124-7B's Hub count, safetensors total 7298617344 (search ids 71571056092, 65859659251)"},
		{"internlm2.5-7b.published.config.json", "internlm2", 7_737_708_544, "InternLM2.5-7B-Chat's count as lmdeploy prints it, 'with 7737708544 (7.7B) parameters' (search ids 41727181442, 12439498600)"},
		{"glm-4-9b.published.config.json", "chatglm", 9_399_951_360, "GLM-4-9B-Chat, '9399951360 (100.00%) are trainable' and lmdeploy's 'with 9399951360 (9.4B) parameters' (search ids 29151670186, 42305816254)"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if m.Family != c.family || m.Params != c.params {
				t.Errorf("%s: %d params, want %d (%s)", m.Family, m.Params, c.params, c.where)
			}
			if m.Arch == nil || m.Arch.KVHeads <= 0 || m.Arch.HeadDim <= 0 {
				t.Errorf("no usable shape: %+v", m.Arch)
			}
		})
	}
}

// phi-2 is in the model catalogue; its count there is the counter's.
func TestCataloguePhi2MatchesTheCounter(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "phi-2.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	models, err := LoadModels(configs.ModelsYAML)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := FindModel(models, "phi-2")
	if err != nil {
		t.Fatal(err)
	}
	if cm.Params != m.Params || cm.HeadParams != m.HeadParams {
		t.Errorf("catalogue phi-2 %d (+head %d), counter %d (+head %d)", cm.Params, cm.HeadParams, m.Params, m.HeadParams)
	}
}
