package recommend

import (
	"fmt"
	"strings"
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
	{"codefuse-codellama-34b.config.json", "llama", 33_743_970_304, 0, "llmfit meta-llama/CodeLlama-34b-Instruct-hf"},
	{"granite-3.3-8b-instruct.config.json", "granite", 8_170_864_640, 0, "llmfit ibm-granite/granite-3.3-8b-instruct"},
	{"granite-3.1-2b.published.config.json", "granite", 2_533_531_648, 0, "ibm-granite/granite-3.1-2b-instruct's count in a model table (search id 61249037944) and granite-guardian-3.1-2b's, params=2533531648 (search id 68688959620)"},
	{"olmo-1b.published.config.json", "olmo", 1_176_764_416, 0, "llmfit allenai/OLMo-1B-hf"},
	{"olmoe-1b-7b-0924.published.config.json", "olmoe", 6_919_161_856, 0, "llmfit allenai/OLMoE-1B-7B-0924-Instruct"},
	// Corpus models of families counted before, added for models.tsv.
	{"qwen2.5-72b-instruct.config.json", "qwen2", 72_706_203_648, 0, "llmfit Qwen/Qwen2.5-72B-Instruct (and Qwen/Qwen2-72B, the same count)"},
	{"phi-4.published.config.json", "phi3", 14_659_507_200, 0, "llmfit unsloth/phi-4 (microsoft/phi-4 converted to llama, the same shapes)"},
	// The Hub count holds the SigLIP tower (416,866,032: see medgemma) and
	// the projector, 1152x3840 and a 1152 norm: 421,290,864, which devctl
	// counts.
	{"gemma-3-12b.config.json", "gemma3", 12_187_325_040, 0, "llmfit google/gemma-3-12b-pt"},
	{"exaone-3.0-7.8b.config.json", "exaone", 7_818_448_896, 0, "llmfit LGAI-EXAONE/EXAONE-Deep-7.8B (the same shapes)"},
	{"glm-4-9b-chat-hf.published.config.json", "glm", 9_399_951_360, 0, "llmfit zai-org/glm-4-9b-chat-hf"},
	{"glm-4-9b-0414.published.config.json", "glm4", 9_400_279_040, 0, "llmfit zai-org/GLM-4-9B-0414"},
	{"ernie-4.5-0.3b.published.config.json", "ernie4_5", 360_748_032, 0, "an ERNIE model of 18 layers of 1024 loaded and counted, 'params=360748032' (search id 69642363455)"},
	// The language model is Mistral Small 24B's: devstral-small-2507's
	// count, held to its repository's safetensors index.
	{"mistral-small-3.1-24b.published.config.json", "mistral3", 23_572_403_200, 0, "fetchwiki/mistralai-Devstral-Small-2507 total_size 47,144,806,400 / 2"},
	{"mt5-small.config.json", "mt5", 300_176_768, 0, "mt5-small 'full': 300176768 in public vocabulary-trimming code (search ids 3882053679, 4201706983)"},
}

// Llama 4's Hub counts hold the vision encoder and projector, which are the
// same in Scout and Maverick (maxtext's *_for_vit numbers): what is left
// after devctl's text counts must be one and the same tower.
func TestLlama4TextCountsLeaveTheSameVisionTower(t *testing.T) {
	const visionTower = 871_932_416
	for _, c := range []struct {
		file      string
		published int64
		where     string
	}{
		{"llama-4-scout-17b-16e.published.config.json", 108_641_793_536, "llmfit jiangchengchengNLP/Llama-4-Scout-17B-16E-Instruct-abliterated-v2 (Scout's shapes)"},
		{"llama-4-maverick-17b-128e.published.config.json", 401_583_781_376, "llmfit meta-llama/Llama-4-Maverick-17B-128E-Instruct"},
	} {
		m, err := ParseHFConfig(readModel(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if m.Family != "llama4" || c.published-m.Params != visionTower {
			t.Errorf("%s: %s %d params leave %d of %d (%s), want the vision tower's %d", c.file, m.Family, m.Params, c.published-m.Params, c.published, c.where, visionTower)
		}
		// Meta: "17B active parameters" for both.
		if a := float64(m.ActiveParams) / 1e9; a < 17 || a >= 17.5 {
			t.Errorf("%s: %.2fB active, want 17B", c.file, a)
		}
	}
}

// Real config.json files from public mirrors of Hugging Face repositories,
// held to the same repository's safetensors (or PyTorch) index:
// metadata.total_size = bytes per parameter × (count + extra).
var indexTotals2026 = []struct {
	file      string
	family    string
	totalSize int64
	bytesPer  int64
	extra     int64
	source    string
}{
	{"granite-3.1-1b-a400m-instruct.config.json", "granitemoe", 5_338_513_408, 4, 0, "jeremieconte/granite-3.1-1b-a400m-instruct@0a854d48947b, stored in fp32"},
	{"qwen-72b.config.json", "qwen", 144_575_840_256, 2, 0, "mapengAdam/qianwen-72B@3334bfe3d6d9"},
	{"mpt-7b.config.json", "mpt", 13_298_573_312, 2, 0, "mikeybellissimo/LoRA-MPT@b280ee58a5a4, pytorch_model.bin.index.json"},
	// The file holds the SigLIP vision tower (patch embedding 678,528,
	// positions 4096x1152, 27 layers of 15,239,504, post-norm 2,304) and
	// the projector (1152x5376 and a 1152 norm): 423,060,336 parameters,
	// which devctl counts from vision_config.
	{"medgemma-27b-it.config.json", "gemma3", 54_864_813_280, 2, 0, "Ibtasam-98/medgemma-27b-it@248890241658"},
	// The file holds Qwen2-VL's vision encoder, 675,759,104 parameters
	// (the Qwen2-VL paper's "675M"): a 3x2x14x14 patch Conv3d, 32 blocks
	// of 19,677,440, the merger 44,575,744.
	{"smollm3-3b.config.json", "smollm3", 6_150_197_248, 2, 0, "fetchwiki/HuggingFaceTB-SmolLM3-3B@2db8990c473c (its index also says total_parameters 3075098624)"},
	{"olmocr-qwen2-vl-7b.config.json", "qwen2_vl", 16_582_751_232, 2, 0, "BrianYAU-NTEC/olmOCR: config.json@9ecf4b2a884a, index@d1c854fb7b08 (allenai olmOCR-7B, a Qwen2-VL-7B fine-tune)"},
	// Qwen2.5-VL's vision encoder: RMSNorms and a gated MLP (3420) with
	// biases in its 32 blocks of 19,702,200, the patch Conv3d 1,505,280,
	// the merger 44,574,464: 676,550,144.
	{"uni-mumer-qwen2.5-vl-7b.config.json", "qwen2_5_vl", 16_584_333_312, 2, 0, "KhaiHASO/Uni-MuMER-Qwen2.5-VL-7B-app@231df31b18f7 (a Qwen2.5-VL-7B-Instruct fine-tune)"},
}

// visionEncoders are the vision encoders the index totals above include,
// counted from vision_config.
var visionEncoders = map[string]int64{"olmocr-qwen2-vl-7b.config.json": 675_759_104, "uni-mumer-qwen2.5-vl-7b.config.json": 676_550_144, "medgemma-27b-it.config.json": 423_060_336}

func TestParseHFConfig2026MatchesIndexTotals(t *testing.T) {
	for _, c := range indexTotals2026 {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := (m.Params + c.extra) * c.bytesPer; m.Family != c.family || got != c.totalSize {
				t.Errorf("%s: (%d params + %d) x %d B = %d, want the index's total_size %d (%s)", m.Family, m.Params, c.extra, c.bytesPer, got, c.totalSize, c.source)
			}
			// The vision encoder is in the index and in devctl's count.
			if vision := visionEncoders[c.file]; vision != 0 && (len(m.Notes) != 1 || !strings.Contains(m.Notes[0], fmt.Sprintf("(%d parameters by vision_config) are counted", vision))) {
				t.Errorf("notes %q, want the vision encoder's %d counted", m.Notes, vision)
			}
		})
	}
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

func TestParseHFConfig2026Rejects(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"gpt_oss with more experts per token than experts", `{"model_type":"gpt_oss","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,"intermediate_size":8,"num_local_experts":2,"num_experts_per_tok":4,"vocab_size":10}`, "more than the 2 experts"},
		{"llama4 without a text_config", `{"model_type":"llama4"}`, "no text_config"},
		{"mistral3 without a text_config", `{"model_type":"mistral3"}`, "no text_config"},
		{"dbrx without ffn_config", `{"model_type":"dbrx","d_model":64,"n_heads":4,"n_layers":1,"vocab_size":10,"attn_config":{}}`, "missing attn_config or ffn_config"},
		{"qwen3_next whose layer_types do not match its layers", `{"model_type":"qwen3_next","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":8,"linear_num_key_heads":2,"linear_num_value_heads":2,"linear_key_head_dim":8,"linear_value_head_dim":8,"layer_types":["full_attention"],"vocab_size":10}`, "layer_types has 1 entries for 2 layers"},
		{"mpt with a negative expansion_ratio", `{"model_type":"mpt","d_model":64,"n_heads":4,"n_layers":1,"vocab_size":10,"expansion_ratio":-1}`, "expansion_ratio"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHFConfig([]byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// A hybrid's recurrent layers keep a fixed state per sequence: Qwen3.6-27B's
// 48 Gated DeltaNet layers 48 value heads × 128 × 128 and a convolution
// window of 3 over q, k and v (2 × 16 × 128 + 48 × 128 channels), whose
// fp32 total llama.cpp logs as "CUDA0 RS buffer size = 149.62 MiB"
// (testdata/memory, r37g-nbchat-qwen36-27b rows); the Mamba-2 layers of
// Nemotron-H-56B (54 of 256 heads × 64 × a state of 256, conv over
// 256 × 64 + 2 × 8 × 256 channels) and Granite-4.0-H-Tiny (36 of 48 heads ×
// 64 × 128, conv over 2 × 1536 + 2 × 128 channels) likewise.
func TestHybridRecurrentState(t *testing.T) {
	for _, c := range []struct {
		file string
		want int64
	}{
		{"qwen3.6-27b.config.json", 48 * (48*128*128 + (2*16*128+48*128)*3)},
		{"nemotron-h-56b-base-8k.config.json", 54 * (256*64*256 + (256*64+2*8*256)*3)},
		{"granite-4.0-h-tiny.published.config.json", 36 * (48*64*128 + (2*1536+2*128)*3)},
		{"qwen3-8b.config.json", 0},
	} {
		m, err := ParseHFConfig(readModel(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Arch.StateValues; got != c.want {
			t.Errorf("%s: %d state values a sequence, want %d", c.file, got, c.want)
		}
	}
}
