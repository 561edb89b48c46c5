package recommend

import (
	"errors"
	"strings"
	"testing"
)

// TestParseHFConfigMatchesSafetensorsTotals counts real config.json files
// (copied from public repositories that mirror Hugging Face model repos,
// testdata/models/README.md) and checks each count against the same
// repository's model.safetensors.index.json metadata.total_size: bytes per
// parameter × count, plus the non-parameter tensors some files also store
// (named in the note). The index is written by safetensors from the
// tensors themselves, so it is an independent, exact published figure.
func TestParseHFConfigMatchesSafetensorsTotals(t *testing.T) {
	cases := []struct {
		file, source string
		totalSize    int64 // metadata.total_size of the source's index
		bytesPer     int64 // the dtype the index's tensors are stored in
		extraBytes   int64 // stored tensors that are not parameters
		note         string
	}{
		{"sakura-14b-qwen2.5", "1235357/Backup_hf_sakura-14b-qwen2.5-v1.0-q6k@41819085de6d", 29540067328, 2, 0, "Qwen2.5-14B architecture (qwen2), fp16"},
		{"cogito-v1-qwen-14b", "fetchwiki/deepcogito-cogito-v1-preview-qwen-14B@3ebd2c06f466", 29531895808, 2, 0, "Qwen2.5-14B architecture with a 151,665 vocabulary"},
		{"llama-3.2-3b", "PANDASANG1231/llama_3.2-3B-huggingface-shard0@76307d2af5fa", 6425499648, 2, 0, "Llama 3.2 3B, tied embeddings"},
		{"yi-1.5-6b-slerp", "YouriLalain/2PRYMMAL-Yi1.5-6B-SLERP@82cdc2e1073b", 12122071040, 2, 0, "Yi-1.5-6B architecture (llama, GQA 4)"},
		{"phi3-mini-chocolatine-3b", "YouriLalain/3PRYMMAL-PHI3-3B-SLERP@cfe714af820a", 7642159104, 2, 0, "Phi-3-mini-4k architecture (phi3: fused qkv and gate/up)"},
		{"devstral-small-2507", "fetchwiki/mistralai-Devstral-Small-2507@2074b22fb5db", 47144806400, 2, 0, "Mistral Small 24B architecture (mistral, head_dim 128)"},
		{"dolphin3-mistral-24b", "gsasouza/dolphin3-mistral@d96260c148d2", 47144847360, 2, 0, "Mistral Small 24B with 5 added tokens"},
		{"wizardlm-2-8x22b", "tbressers/WizardLM-2-8x22B@714c46d2c26b", 281241268224, 2, 0, "Mixtral-8x22B architecture (mixtral, 8 experts, 2 per token)"},
		{"bloom-176b", "amansingh61/bloom@3b1c6223aa0f", 352494542848, 2, 0, "bigscience/bloom (176B)"},
		{"gemma-2b", "ananddhanabal/gemma@27b76a6dcfce", 6060920832, 2, 1048576000, "Gemma 2B (tied); this fine-tune's index also stores lm_head.weight, a 256000x2048 copy of the embedding"},
		{"reflection-llama-3.1-70b", "MiMiGame-1/Reflection-Llama-3.1-70B@458962ed801f", 282215219200, 4, 0, "Llama 3.1 70B with 6 added tokens, stored in fp32"},
		{"parammyl-8b-modelstock", "YouriLalain/1PARAMMYL-8B-ModelStock@4ce556da5ccd", 16060522496, 2, 0, "Llama 3 8B architecture"},
		{"granite-3b-code-instruct-128k", "ashishn-08/granite-3b-code-instruct-128k@6c2060816a99", 6965007360, 2, 0, "IBM Granite 3B code (llama with attention and MLP biases, tied)"},
		{"pygmalion-7b", "kleberbaum/Pygmalion-7b-Merged-Safetensors@346339b2db0a", 13476835328, 2, 4096, "LLaMA-7B; the file also stores the rotary inv_freq buffers (32 layers x 64, bf16)"},
		{"qwen3-1.7b-mlx-mirror", "root-hypercube/qwen3-mlx@30b54024ee47", 3441149952, 2, 0, "Qwen3-1.7B (qwen3: q/k norms, tied)"},
		{"cobolpro-llama", "Juanlucasbg/COBOLpro_llama65B_Fined_tuned_LLM@bb6915ef0881", 67488071680, 2, 0, "LLaMA-30B architecture (60 layers of 6656)"},
		{"rutergpt-13b", "bjornerikkorum/RUTERGPT13B@d2db30919808", 26031738880, 2, 10240, "Llama-2-13B; the file also stores rotary inv_freq (40 layers x 64, fp32)"},
		{"triangulum-10b", "PRITHIVSAKTHIUR/Triangulum@70bb4783cf59", 20611307520, 2, 0, "Llama 3.1 architecture at 10B"},
		{"granite-7b-base-mirror", "VineethGithubIBM/graniteModelWithoutGGUF@4fb6a018d68a", 13476962304, 2, 0, "IBM Granite 7B base (llama, 32,008 vocabulary)"},
		{"llama-2-7b-chat-nous", "thrishalaa/Mental-Health-ChatBot@25c6dde1fe1e", 13476831232, 2, 0, "NousResearch/Llama-2-7b-chat-hf"},
		{"codellama-7b", "ManiPolipogu15/Code_Llama2_Finetune@1ca4ace7aad1", 13477101568, 2, 8192, "CodeLlama-7b (32,016 vocabulary); the file also stores rotary inv_freq (32 layers x 64, fp32)"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file+".config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Params*c.bytesPer + c.extraBytes; got != c.totalSize {
				t.Errorf("%d params × %d B + %d = %d, want the index's total_size %d (%s; %s)", m.Params, c.bytesPer, c.extraBytes, got, c.totalSize, c.source, c.note)
			}
		})
	}
}

// A mixture of experts keeps every expert resident (Params) and reports
// what a token runs through beside it: Mixtral-8x22B is "141B total, 39B
// active" (Mistral AI's announcement, mistral.ai/news/mixtral-8x22b).
func TestMixtureOfExpertsActiveParams(t *testing.T) {
	m, err := ParseHFConfig(readModel(t, "wizardlm-2-8x22b.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Experts != 8 || m.ExpertsPerToken != 2 {
		t.Errorf("experts %d × %d, want 8 × 2", m.Experts, m.ExpertsPerToken)
	}
	if a := float64(m.ActiveParams) / 1e9; a < 38.5 || a >= 39.5 {
		t.Errorf("active params %.2fB, want 39B", a)
	}
	if p := float64(m.Params) / 1e9; p < 140.5 || p >= 141.5 {
		t.Errorf("total params %.2fB, want 141B", p)
	}
	if m.Arch.FFN != 2*16384 {
		t.Errorf("active MLP width %d, want two experts' 32768", m.Arch.FFN)
	}
	// One expert's width, which LoRA on every Linear adapts per expert.
	for _, c := range []struct {
		file string
		want int
	}{{"wizardlm-2-8x22b.config.json", 16384}, {"qwen3-30b-a3b.config.json", 768}, {"deepseek-v2-lite.config.json", 1408}, {"glm-4.5-air.published.config.json", 1408}} {
		m, err := ParseHFConfig(readModel(t, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if m.Arch.ExpertFFN != c.want {
			t.Errorf("%s: expert width %d, want %d", c.file, m.Arch.ExpertFFN, c.want)
		}
	}
}

// --model ORG/NAME of a family devctl does not count is sized from the
// safetensors index; one it counts is checked against it.
func TestModelFromFiles(t *testing.T) {
	cfg := readModel(t, "phi3-mini-chocolatine-3b.config.json")
	m, notes, err := ModelFromFiles("YouriLalain/3PRYMMAL-PHI3-3B-SLERP", cfg, 7_642_159_104)
	if err != nil || m.Params != 3_821_079_552 || len(notes) != 1 || !strings.Contains(notes[0], "the count is exact") {
		t.Fatalf("phi3: %d params, notes %q, err %v", m.Params, notes, err)
	}
	other := []byte(`{"model_type": "mamba", "torch_dtype": "bfloat16"}`)
	m, notes, err = ModelFromFiles("state-spaces/mamba-2.8b-hf", other, 5_536_000_000)
	if err != nil || m.Params != 2_768_000_000 || m.Arch != nil || !strings.Contains(notes[0], "not one devctl counts") {
		t.Fatalf("unknown family: %+v, %q, %v", m, notes, err)
	}
	if _, _, err := ModelFromFiles("x/y", other, 0); !errors.Is(err, ErrUnsupportedFamily) {
		t.Fatalf("no index and no counter: %v", err)
	}
}

// The mixture-of-experts and Gemma 2 counters on configs written here from
// the architecture numbers their model cards publish (no copy of the file
// was found), checked against the safetensors total_size that other public
// code quotes from the real index (testdata/models/README.md): a match
// confirms both the numbers and the counter.
func TestParseHFConfigMatchesQuotedTotals(t *testing.T) {
	cases := []struct {
		file            string
		totalSize       int64 // bf16 bytes quoted from the model's index
		active          int64 // 0: not quoted
		quotedWhereNote string
	}{
		{"mixtral-8x7b", 93_405_585_408, 0, "a Mixtral expert-selection script writing the index"},
		{"qwen1.5-moe-a2.7b", 28_631_568_384, 0, "a Rust test asserting Qwen1.5-MoE-A2.7B's index (72 q/k/v biases, shared experts)"},
		{"deepseek-v2-lite", 31_412_968_448, 0, "notes recounting DeepSeek-V2-Lite from its config against the index (kv_a_layernorm included)"},
		{"qwen3-30b-a3b", 61_064_245_248, 3_353_032_704, "a planner's table for Qwen/Qwen3-30B-A3B-Instruct-2507 (total 30,532,122,624, active per token 3,353,032,704)"},
		{"gemma-2-9b", 18_483_411_968, 0, "a model record for gemma-2-9b (paramCount 9,241,705,984, source safetensors-index)"},
		// Parameter counts quoted (× 2 here): the Pythia table of sizes,
		// a printed meta-model count for OPT-1.3B, Whisper's hub count.
		{"pythia-1.4b", 2 * 1_414_647_808, 0, "Pythia's released sizes (pythia-1.4b: 1,414,647,808)"},
		{"opt-1.3b", 2 * 1_315_758_080, 0, "a printed OPTForCausalLM count (num params: 1315758080)"},
		{"whisper-large-v3", 2 * 1_543_490_560, 0, "openai/whisper-large-v3's count, 'safetensors.total'"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := ParseHFConfig(readModel(t, c.file+".published.config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if 2*m.Params != c.totalSize {
				t.Errorf("2 × %d = %d, want the quoted total_size %d (%s)", m.Params, 2*m.Params, c.totalSize, c.quotedWhereNote)
			}
			if c.active != 0 && m.ActiveParams != c.active {
				t.Errorf("active %d, want %d", m.ActiveParams, c.active)
			}
		})
	}
}
