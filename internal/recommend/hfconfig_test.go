package recommend

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
)

func readModel(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Exact counts from memory.md §5 (KerasHub presets, DeepSpeed docs).
func TestParseHFConfigCountsExactly(t *testing.T) {
	cases := []struct {
		name     string
		file     string
		params   int64
		head     int64
		kvHeads  int
		kvLayers int
	}{
		{"Llama-2-7B with an untied head has 6,738,415,616 parameters", "llama-2-7b.config.json", 6_738_415_616, 131_072_000, 32, 32},
		{"Qwen2.5-0.5B with GQA, qkv bias and tied embeddings has 494,032,768", "qwen2.5-0.5b.config.json", 494_032_768, 0, 2, 24},
		{"bert-base-uncased (BertModel with pooler) has 109,482,240", "bert-base-uncased.config.json", 109_482_240, 0, 12, 0},
		{"t5-small has 60,506,624", "t5-small.config.json", 60_506_624, 0, 8, 12},
		{"gpt2 has 124,439,808", "gpt2.config.json", 124_439_808, 0, 12, 12},
		{"T0_3B base is DeepSpeed's 2783M plus an untied head", "T0_3B.synthetic.config.json", 2_783_959_040 + 65_798_144, 65_798_144, 32, 48},
		{"Meta-Llama-3-8B with 8 KV heads has 8,030,261,248", "llama-3-8b.synthetic.config.json", 8_030_261_248, 525_336_576, 8, 32},
		// Stanford CS336's BasicsTransformerLM (corpus round 9), as its students print it.
		{"CS336 d2560 L32 has 3,406,809,600", "cs336-basics-d2560-l32.synthetic.config.json", 3_406_809_600, 25_600_000, 32, 32},
		{"CS336 d1600 L48 has 1,998,235,200", "cs336-basics-d1600-l48.synthetic.config.json", 1_998_235_200, 16_000_000, 25, 48},
		{"CS336 d1280 L36 has 969,411,840", "cs336-basics-d1280-l36.synthetic.config.json", 969_411_840, 12_800_000, 20, 36},
		{"CS336 d1024 L24 has 423,183,360", "cs336-basics-d1024-l24.synthetic.config.json", 423_183_360, 10_240_000, 16, 24},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file))
			if err != nil {
				t.Fatal(err)
			}
			got := []int64{m.Params, m.HeadParams, int64(m.Arch.KVHeads), int64(m.Arch.KVLayers)}
			want := []int64{c.params, c.head, int64(c.kvHeads), int64(c.kvLayers)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("params, head, kv heads, kv layers (-want +got):\n%s", diff)
			}
		})
	}
}

// accelerate counts bert's buffers: 8,192 bytes (memory.md §1).
func TestParseHFConfigBertBuffers(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "bert-base-uncased.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.BufferBytes != 8192 {
		t.Errorf("buffers = %d, want 8192", m.BufferBytes)
	}
}

func TestParseHFConfigAcceptsAByteOrderMark(t *testing.T) {
	const gpt2 = `{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257,"n_positions":1024}`
	want, err := ParseHFConfig([]byte(gpt2))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseHFConfig([]byte("\xef\xbb\xbf" + gpt2 + "\n"))
	if err != nil || got.Params != want.Params {
		t.Fatalf("with a BOM: %d params, %v; want %d", got.Params, err, want.Params)
	}
}

func TestParseHFConfigRejects(t *testing.T) {
	cases := []struct {
		name, data, want string
	}{
		{"an unknown family names the supported ones", `{"model_type": "mamba"}`, "llama, mistral, qwen2, qwen3, phi3, gemma"},
		{"no model_type", `{"hidden_size": 1}`, "no model_type"},
		{"truncated JSON", `{"model_type": "llama", "hidden_size": 4096,`, "not a valid config.json"},
		{"a missing dimension is named", `{"model_type": "llama", "hidden_size": 4096}`, "missing num_hidden_layers"},
		{"a negative dimension", `{"model_type": "gpt2", "n_embd": -1}`, "n_embd = -1 is out of range"},
		{"KV heads that do not divide the heads", `{"model_type":"mistral","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,"num_key_value_heads":3,"intermediate_size":8,"vocab_size":10}`, "not a multiple"},
		{"not an object", `[1,2]`, "not a valid config.json"},
		{"trailing garbage after the object", `{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257,"n_positions":1024} trailing`, "not a valid config.json"},
		{"a second object after the first", `{"model_type":"gpt2"}{"model_type":"bert"}`, "after the JSON object"},
		{"a string where a number belongs", `{"model_type":"bert","hidden_size":"768"}`, "not a valid config.json"},
		{"dimensions whose product once wrapped int64 to a plausible count", `{"model_type":"llama","hidden_size":4194304,"num_hidden_layers":4194304,"num_attention_heads":1,"num_key_value_heads":1,"intermediate_size":4194304,"vocab_size":4194304}`, "hidden_size = 4194304 is out of range (1..1048576)"},
		{"layers beyond any model", `{"model_type":"gpt2","n_embd":768,"n_layer":100000,"n_head":12,"vocab_size":50257,"n_positions":1024}`, "n_layer = 100000 is out of range (1..4096)"},
		{"in-range dimensions whose count exceeds MaxParams", `{"model_type":"llama","hidden_size":1048576,"num_hidden_layers":4096,"num_attention_heads":4096,"head_dim":4096,"intermediate_size":1048576,"vocab_size":1048576}`, "parameters is more than the 1e+15 devctl accepts"},
		{"more heads than hidden units would give a head size of 0", `{"model_type":"llama","hidden_size":16,"num_hidden_layers":1,"num_attention_heads":32,"intermediate_size":8,"vocab_size":10}`, "num_attention_heads 32 is more than hidden_size 16"},
		{"the same for GPT-2", `{"model_type":"gpt2","n_embd":1,"n_layer":1,"n_head":4096,"vocab_size":10,"n_positions":10}`, "n_head 4096 is more than n_embd 1"},
		{"experts whose product would wrap int64", `{"model_type":"mixtral","hidden_size":1048576,"num_hidden_layers":4096,"num_attention_heads":4096,"head_dim":1,"intermediate_size":1048576,"num_local_experts":4096,"num_experts_per_tok":2,"vocab_size":10}`, "more than the 1e+15 parameters devctl accepts"},
		{"more experts per token than experts", `{"model_type":"qwen3_moe","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":4,"moe_intermediate_size":8,"num_experts":4,"num_experts_per_tok":8,"vocab_size":10}`, "more than the 4 experts"},
		{"the same for BERT", `{"model_type":"bert","hidden_size":1,"num_hidden_layers":1,"num_attention_heads":8,"intermediate_size":1,"vocab_size":1}`, "num_attention_heads 8 is more than hidden_size 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHFConfig([]byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
	if _, err := ParseHFConfig([]byte(`{"model_type": "mamba"}`)); !errors.Is(err, ErrUnsupportedFamily) {
		t.Errorf("unknown family: err = %v, want ErrUnsupportedFamily", err)
	}
}

func FuzzParseHFConfig(f *testing.F) {
	for _, name := range []string{"llama-2-7b.config.json", "qwen2.5-0.5b.config.json", "bert-base-uncased.config.json", "t5-small.config.json", "gpt2.config.json",
		"wizardlm-2-8x22b.config.json", "bloom-176b.config.json", "phi3-mini-chocolatine-3b.config.json", "gemma-2b.config.json", "qwen3-1.7b-mlx-mirror.config.json",
		"deepseek-v2-lite.published.config.json", "qwen1.5-moe-a2.7b.published.config.json", "qwen3-30b-a3b.published.config.json", "gemma-2-9b.published.config.json",
		"pythia-1.4b.published.config.json", "opt-1.3b.published.config.json", "whisper-large-v3.published.config.json",
		"phi-2.config.json", "starcoder-15b.published.config.json", "gpt-neo-1.3b.published.config.json", "gpt-j-6b.published.config.json",
		"stablelm-2-1.6b.published.config.json", "olmo-2-7b.published.config.json", "internlm2.5-7b.published.config.json", "glm-4-9b.published.config.json",
		"qwen-7b-chat.config.json", "chatglm-6b.config.json", "falcon-7b.config.json", "falcon-40b.config.json",
		"gpt-oss-20b.config.json", "qwen3-next-80b-a3b.config.json", "starcoder2-7b.config.json", "aya-23-8b.config.json",
		"granite-3.3-8b-instruct.config.json", "granite-3.1-1b-a400m-instruct.config.json", "mpt-7b.config.json",
		"olmocr-qwen2-vl-7b.config.json", "uni-mumer-qwen2.5-vl-7b.config.json", "smollm3-3b.config.json", "exaone-3.0-7.8b.config.json",
		"glm-4-9b-chat-hf.published.config.json", "glm-4-9b-0414.published.config.json", "llama-4-maverick-17b-128e.published.config.json",
		"olmo-1b.published.config.json", "olmoe-1b-7b-0924.published.config.json", "mt5-small.config.json", "gemma-3-12b.config.json",
		"gemma-4-26b-a4b-it.config.json", "gemma-4-31b-it.config.json", "qwen3-vl-8b-instruct.config.json", "qwen3-vl-30b-a3b-instruct.config.json", "glm-4.7-flash.config.json",
		"nvidia-nemotron-3-nano-30b-a3b.config.json", "distilbert-base-uncased.config.json", "minicpm-2b-sft-bf16.config.json",
		"llama-3.2-11b-vision-instruct.thai-handwriting.config.json", "gemma-3n-e4b-it.published.config.json",
		"lfm2-700m.config.json", "lfm2-1.2b-p-vector.config.json", "granite-4.0-h-tiny.published.config.json", "ernie-4.5-21b-a3b.published.config.json",
		"minimax-m2.config.json", "deepseek-v3.2-exp-ptpc.config.json", "kimi-k2-instruct.published.config.json", "minimax-m1.config.json",
		"llava-1.5-7b-hf.config.json", "llava-v1.6-mistral-7b-3x3.config.json", "internvl3-1b-hf.published.config.json", "falcon-h1-0.5b-base.published.config.json",
		"glm-4.5v.config.json", "glm-4.1v-9b-thinking.published.config.json", "seed-oss-36b-4.3test2.config.json", "olmo-3-7b.published.config.json", "exaone-4.0-1.2b.published.config.json",
		"hunyuan-a13b-instruct.config.json", "ling-lite.config.json", "ling-mini-2.0.published.config.json", "lfm2-8b-a1b-augment-multi-ft2.config.json", "qwen2.5-omni-7b.published.config.json",
		"kimi-vl-a3b-instruct.published.config.json", "deepseek-vl2-tiny.published.config.json", "deepseek-vl2-small.published.config.json",
		"phi-3.5-vision-instruct.config.json", "qwen3-omni-30b-a3b-instruct.config.json",
		"glm-5.config.json", "llama-3_3-nemotron-super-49b-v1.config.json", "kimi-k2.5.config.json", "mimo-v2-flash.config.json",
		"nemotron-h-56b-base-8k.config.json", "qwen3.5-122b-a10b.config.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"model_type":"t5","d_model":4194304,"d_kv":4194304,"d_ff":4194304,"num_layers":4194304,"num_heads":4194304,"vocab_size":4194304}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseHFConfig(data)
		if err != nil {
			return
		}
		if m.Params <= 0 || m.Params > MaxParams || m.Arch == nil {
			t.Fatalf("accepted config with params %d arch %v", m.Params, m.Arch)
		}
		if _, err := oomsim.Estimate(oomsim.Plan{Model: m, Mode: oomsim.Training, Precision: capability.BF16, SeqLen: 4096, BatchSize: 8}); err != nil {
			t.Fatalf("estimate: %v", err)
		}
	})
}

// The catalogue's counts agree with the config.json counter wherever both
// exist, and every entry loads.
func TestCatalogueMatchesCounter(t *testing.T) {
	models, err := LoadModels(configs.ModelsYAML)
	if err != nil {
		t.Fatal(err)
	}
	if len(models) < 17 {
		t.Errorf("catalogue has %d models, want at least 17", len(models))
	}
	files := map[string]string{"llama-2-7b": "llama-2-7b.config.json", "qwen2.5-0.5b": "qwen2.5-0.5b.config.json",
		"bert-base-uncased": "bert-base-uncased.config.json", "t5-small": "t5-small.config.json", "gpt2": "gpt2.config.json",
		"llama-3-8b": "llama-3-8b.synthetic.config.json"}
	for name, file := range files {
		cm, err := FindModel(models, name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseHFConfig(readModel(t, file))
		if err != nil {
			t.Fatal(err)
		}
		if cm.Params != m.Params || cm.HeadParams != m.HeadParams {
			t.Errorf("%s: catalogue %d (+head %d), counter %d (+head %d)", name, cm.Params, cm.HeadParams, m.Params, m.HeadParams)
		}
	}
	// Counts the catalogue marks COMPUTED, recounted from config values.
	computed := map[string]string{
		"llama-2-13b":        `{"model_type":"llama","hidden_size":5120,"num_hidden_layers":40,"num_attention_heads":40,"intermediate_size":13824,"vocab_size":32000}`,
		"llama-2-70b":        `{"model_type":"llama","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,"vocab_size":32000}`,
		"llama-3-70b":        `{"model_type":"llama","hidden_size":8192,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,"intermediate_size":28672,"vocab_size":128256}`,
		"mistral-7b":         `{"model_type":"mistral","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000}`,
		"bert-large-uncased": `{"model_type":"bert","hidden_size":1024,"num_hidden_layers":24,"num_attention_heads":16,"intermediate_size":4096,"vocab_size":30522}`,
		"t5-3b":              `{"model_type":"t5","d_model":1024,"d_kv":128,"d_ff":16384,"num_layers":24,"num_heads":32,"vocab_size":32128}`,
		"gpt2-medium":        `{"model_type":"gpt2","n_embd":1024,"n_layer":24,"n_head":16,"vocab_size":50257,"n_positions":1024}`,
	}
	for name, cfg := range computed {
		cm, err := FindModel(models, name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseHFConfig([]byte(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if cm.Params != m.Params {
			t.Errorf("%s: catalogue %d, counter %d", name, cm.Params, m.Params)
		}
	}
}

func TestFindModelSuggestsTheClosestName(t *testing.T) {
	models, err := LoadModels(configs.ModelsYAML)
	if err != nil {
		t.Fatal(err)
	}
	_, err = FindModel(models, "lama-2-7b")
	if err == nil || !strings.Contains(err.Error(), `did you mean "llama-2-7b"?`) {
		t.Errorf("err = %v", err)
	}
	if _, err := FindModel(models, "Meta-Llama/Llama-2-7b-HF"); err != nil {
		t.Errorf("a Hub id should resolve: %v", err)
	}
}

func TestDeviceCatalogueLoads(t *testing.T) {
	devs, err := LoadDevices(configs.DevicesYAML)
	if err != nil {
		t.Fatal(err)
	}
	// Scripts name these; they keep working whatever else is added.
	for _, name := range []string{"t4", "v100-16gb", "v100-32gb", "a10g", "l4", "l40s", "a6000", "a100-40gb", "a100-80gb", "h100-80gb", "h200",
		"rtx-3090", "rtx-4090", "mi250x", "mi300x", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "apple-m2-max-32gb", "cpu-64gb"} {
		if d, ok := FindDevice(devs, name); !ok || d.Name != name {
			t.Errorf("catalogue name %q no longer finds its entry (got %q, %v)", name, d.Name, ok)
		}
	}
}

// The dropout on attention probabilities comes from the config's own name
// for it, or its family's config-class default when the config leaves it
// out (GPT2Config attn_pdrop, T5Config dropout_rate: 0.1).
func TestParseHFConfigAttentionDropout(t *testing.T) {
	for _, c := range []struct {
		file string
		want float64
	}{
		{"bert-base-uncased.config.json", 0.1},  // attention_probs_dropout_prob
		{"gpt2.config.json", 0.1},               // attn_pdrop
		{"t5-small.config.json", 0.1},           // dropout_rate
		{"phi-2.config.json", 0},                // attention_dropout 0.0
		{"llama-3.1-8b.config.json", 0},         // attention_dropout 0.0
		{"t5-large.published.config.json", 0.1}, // not in the file: T5Config's default
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", c.file))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseHFConfig(data)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if m.Arch == nil || m.Arch.AttnDropout != c.want {
			t.Errorf("%s: attention dropout %v, want %v", c.file, m.Arch.AttnDropout, c.want)
		}
	}
}
