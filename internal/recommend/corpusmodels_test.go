package recommend

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusCounts are the published parameter counts of the config.json files
// added for the measured-memory corpus (testdata/models/README.md names each
// source). extra is what the published figure holds beyond the model's
// parameters: tensors a checkpoint stores twice or as buffers, which the
// Hub's count includes.
var corpusCounts = []struct {
	file      string
	published int64
	extra     int64
	where     string
}{
	{"llama-3.1-8b.config.json", 8_030_261_248, 0, "llmfit meta-llama/Llama-3.1-8B"},
	// Added with the fourth corpus round (testdata/models/README.md).
	{"baichuan-7b.published.config.json", 7_000_559_616, 0, "calflops baichuan-inc/Baichuan-7B"},
	{"bloom-7b1.published.config.json", 7_069_016_064, 0, "calflops bigscience/bloom-7b1"},
	{"gemma-3-270m.published.config.json", 268_098_176, 0, "llmfit google/gemma-3-270m"},
	{"gemma-3-4b.published.config.json", 4_300_079_472, 0, "llmfit google/gemma-3-4b-it, the vision tower and projector (419,816,304) included"},
	{"gpt-neox-20b.published.config.json", 20_554_567_680, 0, "the EleutherAI/gpt-neox-20b model card"},
	{"internlm-20b.config.json", 20_088_714_240, 0, "its safetensors index, 40,177,428,480 B / 2"},
	{"llama-guard-3-1b.published.config.json", 1_498_482_688, 0, "llmfit meta-llama/Llama-Guard-3-1B"},
	{"mistral-7b-v0.3.config.json", 7_248_023_552, 0, "llmfit mistralai/Mistral-7B-Instruct-v0.3"},
	{"qwen2.5-14b.config.json", 14_770_033_664, 0, "llmfit Qwen/Qwen2.5-14B"},
	{"qwen2-vl-2b-instruct.published.config.json", 2_208_985_600, 0, "Qwen2-VL-2B-Instruct's count, the vision tower (665,271,296) included"},
	{"qwen2-vl-72b-instruct.published.config.json", 73_405_560_320, 0, "llmfit Qwen/Qwen2-VL-72B-Instruct, the vision tower (699,356,672) included"},
	{"stablelm-base-alpha-3b.published.config.json", 3_638_525_952, 1_204_224, "the StableLM README, which sums four tensor-parallel ranks: three extra copies of the replicated norms and row-parallel biases"},
	{"t5-3b.published.config.json", 2_851_598_336, 0, "google-t5/t5-3b's count"},
	{"t5-large.published.config.json", 737_668_096, 0, "google-t5/t5-large's count"},
	{"whisper-large-v2.published.config.json", 1_543_304_960, 0, "openai/whisper-large-v2's count"},
	{"meta-llama-3-8b-instruct.config.json", 8_030_261_248, 0, "llmfit meta-llama/Meta-Llama-3-8B-Instruct"},
	{"llama-3.2-1b.config.json", 1_235_814_400, 0, "llmfit meta-llama/Llama-3.2-1B"},
	{"llama-3.1-70b.config.json", 70_553_706_496, 0, "llmfit meta-llama/Llama-3.1-70B"},
	{"llama-3.1-405b.published.config.json", 405_853_388_800, 0, "llmfit meta-llama/Llama-3.1-405B"},
	{"llama-2-70b.config.json", 68_976_648_192, 0, "together llama-2-70b"},
	{"codellama-13b.config.json", 13_016_028_160, 0, "together CodeLlama-13b"},
	{"tinyllama-1.1b-chat-v1.0.config.json", 1_100_048_384, 0, "llmfit TinyLlama/TinyLlama-1.1B-Chat-v1.0"},
	{"mistral-7b-v0.1.config.json", 7_241_732_096, 0, "llmfit mistralai/Mistral-7B-v0.1"},
	{"mixtral-8x7b-v0.1.config.json", 46_702_792_704, 0, "llmfit mistralai/Mixtral-8x7B-Instruct-v0.1"},
	{"gpt2-medium.config.json", 379_988_992, 24 * 1024 * 1024, "llmfit openai-community/gpt2-medium, with the attn.bias buffers"},
	{"gpt2-medium.config.json", 354_823_168, 0, "search id 52805613024"},
	{"chatglm2-6b.config.json", 6_243_584_000, 0, "calflops chatglm2-6b"},
	{"qwen2-7b-instruct.config.json", 7_615_616_512, 0, "llmfit Qwen/Qwen2-7B-Instruct"},
	{"qwen2.5-3b.config.json", 3_085_938_688, 0, "llmfit Qwen/Qwen2.5-3B"},
	{"qwen2.5-7b.config.json", 7_615_616_512, 0, "llmfit Qwen/Qwen2.5-7B"},
	{"qwen2.5-32b.config.json", 32_763_876_352, 0, "KerasHub qwen2.5_instruct_32b_en"},
	{"qwen3-0.6b.config.json", 751_632_384, 151936 * 1024, "llmfit Qwen/Qwen3-0.6B, with the stored copy of the tied embedding"},
	{"qwen3-4b.config.json", 4_022_468_096, 0, "llmfit@3fb10d019f82 Qwen/Qwen3-4B"},
	{"qwen3-8b.config.json", 8_190_735_360, 0, "llmfit Qwen/Qwen3-8B"},
	{"deepseek-r1-0528-qwen3-8b.published.config.json", 8_190_735_360, 0, "llmfit Qwen/Qwen3-8B: DeepSeek-R1-0528-Qwen3-8B post-trains Qwen3-8B Base and keeps its shapes"},
	{"llama-2-7b-32k-instruct.published.config.json", 6_738_417_664, 32 * 64, "llmfit meta-llama/Llama-2-7b-hf: Llama-2-7B-32K-Instruct keeps Llama-2-7B's shapes and interpolates its positions"},
	{"qwen3-14b.config.json", 14_768_307_200, 0, "KerasHub qwen3_14b_en"},
	{"qwen3-32b.config.json", 32_762_123_264, 0, "llmfit@3fb10d019f82 Qwen/Qwen3-32B"},
	{"qwen3-30b-a3b.config.json", 30_532_122_624, 0, "llmfit@3fb10d019f82 Qwen/Qwen3-30B-A3B"},
	// Added with round 24: the Hub's own Gemma 3 12B config, whose
	// text_config leaves vocab_size and head_dim to Gemma3TextConfig.
	{"gemma-3-12b-it.config.json", 12_187_325_040, 0, "llmfit google/gemma-3-12b-pt"},
	{"qwen1.5-7b-chat.config.json", 7_721_324_544, 0, "llmfit Qwen/Qwen1.5-7B-Chat"},
	{"qwen1.5-14b-chat.config.json", 14_167_290_880, 0, "llmfit Qwen/Qwen1.5-14B-Chat"},
	{"deepseek-coder-6.7b-instruct.config.json", 6_740_512_768, 0, "llmfit deepseek-ai/deepseek-coder-6.7b-instruct"},
	{"gemma-7b.config.json", 8_537_680_896, 0, "KerasHub gemma_7b_en"},
	{"gemma-2-2b.config.json", 2_614_341_888, 0, "llmfit google/gemma-2-2b-it"},
	{"gemma-2-9b.config.json", 9_241_705_984, 0, "llmfit google/gemma-2-9b-it"},
	{"gemma-2-27b.config.json", 27_227_128_320, 0, "llmfit google/gemma-2-27b-it"},
	{"pythia-1b.published.config.json", 1_011_781_632, 0, "GPTNeoXForCausalLM count, search id 38434618118"},
	{"pythia-2.8b.published.config.json", 2_775_208_960, 0, "GPTNeoXForCausalLM count, search id 38434618118"},
	// Added with the fifth corpus round (testdata/models/README.md).
	{"gpt-neo-2.7b.published.config.json", 2_651_307_520, 0, "EleutherAI/gpt-neo-2.7B loaded and counted (search id 26211555743)"},
	{"gpt-neo-2.7b.published.config.json", 2_718_416_384, 16 * 2048 * 2048, "llmfit EleutherAI/gpt-neo-2.7B, with the attn.bias masks of the 16 global layers"},
	{"flan-t5-xl.published.config.json", 2_849_757_184, 0, "google/flan-t5-xl's Hub count (search id 71058521579) and KerasHub t5_1.1_xl"},
	{"flan-t5-xxl.published.config.json", 11_135_332_352, 0, "KerasHub t5_1.1_xxl (search id 610160901)"},
	{"gpt2-xl.published.config.json", 1_557_611_200, 0, "KerasHub gpt2_extra_large_en (search id 330605117)"},
	{"gpt2-xl.published.config.json", 1_607_942_848, 48 * 1024 * 1024, "llmfit openai-community/gpt2-xl, with the attn.bias buffers"},
	{"yi-34b.published.config.json", 34_388_917_248, 0, "llmfit 01-ai/Yi-34B"},
	{"yi-1.5-6b-slerp.config.json", 6_061_035_520, 0, "llmfit 01-ai/Yi-6B (Yi-1.5-6B's shapes are Yi-6B's)"},
	{"qwen2.5-vl-3b-instruct.published.config.json", 3_754_622_976, 0, "llmfit Qwen/Qwen2.5-VL-3B-Instruct, the vision encoder (668,684,288) included"},
	{"qwen2.5-1.5b.published.config.json", 1_543_714_304, 0, "llmfit Qwen/Qwen2.5-1.5B-Instruct"},
	{"qwen2.5-coder-32b-instruct.published.config.json", 32_763_876_352, 0, "llmfit Qwen/Qwen2.5-Coder-32B-Instruct"},
	{"phi-3.5-mini-instruct.config.json", 3_821_079_552, 0, "llmfit microsoft/Phi-3.5-mini-instruct"},
	{"starcoder-15b.published.config.json", 15_819_446_272, 49152 * 6144, "llmfit bigcode/starcoder, with the stored lm_head copy"},
	{"gemma-2b.config.json", 2_506_172_416, 0, "llmfit google/gemma-1.1-2b-it"},
	{"qwen3.5-0.8b.published.config.json", 852_985_920, 0, "llmfit unsloth/Qwen3.5-0.8B-Base, the vision encoder (100,592,896) included, no MTP block"},
	{"qwen3.5-2b.published.config.json", 2_274_069_824, 60_828_160, "llmfit Qwen/Qwen3.5-2B, with the MTP block devctl does not count (the vision encoder, 331,416,576, included)"},
	{"qwen3.5-4b.published.config.json", 4_539_265_536, 0, "llmfit unsloth/Qwen3.5-4B-Base, the vision encoder (333,514,240) included, no MTP block"},
	// A text-only upload: its count leaves out the vision encoder the
	// config still describes and devctl counts (456,010,480).
	{"qwen3.5-9b.published.config.json", 8_953_803_264, -456_010_480, "llmfit principled-intelligence/Qwen3.5-9B-text-only"},
	{"qwen3.5-27b.published.config.json", 27_356_728_560, 0, "llmfit unsloth/Qwen3.5-27B, the vision encoder (460,730,096) included, no MTP block"},
	{"qwen3.5-35b-a3b.config.json", 35_107_181_936, 0, "llmfit mlx-community/Qwen3.6-35B-A3B-bf16, the vision encoder (446,571,248) included, no MTP block"},
	// Fixtures that predate the corpus, held to the Hub's count as well.
	{"qwen-7b-chat.config.json", 7_721_324_544, 0, "llmfit Qwen/Qwen-7B-Chat"},
	{"falcon-7b.config.json", 7_217_189_760, 65024 * 4544, "llmfit tiiuae/falcon-7b, with the stored lm_head copy"},
	{"llama-2-7b.config.json", 6_738_417_664, 32 * 64, "llmfit meta-llama/Llama-2-7b-hf, with 32 layers x 64 rotary inv_freq as in pygmalion-7b's index"},
	{"llama-3.2-3b.config.json", 3_212_749_824, 0, "llmfit meta-llama/Llama-3.2-3B"},
	{"qwen3-1.7b-mlx-mirror.config.json", 2_031_739_904, 151936 * 2048, "llmfit Qwen/Qwen3-1.7B, with the stored copy of the tied embedding"},
	{"sakura-14b-qwen2.5.config.json", 14_770_033_664, 0, "llmfit deepseek-ai/DeepSeek-R1-Distill-Qwen-14B"},
}

// TestCorpusModelConfigsMatchPublishedCounts counts each config.json added
// for the measured-memory corpus and holds it to its published count: an
// exact ten-digit match checks the file's numbers and the counter together.
func TestCorpusModelConfigsMatchPublishedCounts(t *testing.T) {
	for _, c := range corpusCounts {
		t.Run(c.file+" "+c.where, func(t *testing.T) {
			m, _, err := ModelFromFiles(c.file, readModel(t, c.file), 0)
			if err != nil {
				t.Fatal(err)
			}
			if m.Params+c.extra != c.published {
				t.Errorf("%d params + %d = %d, want %d (%s)", m.Params, c.extra, m.Params+c.extra, c.published, c.where)
			}
		})
	}
}

// TestCorpusModelsTSV reads testdata/memory/models.tsv, which maps every
// model id of the measured-memory corpus to the config.json it is planned
// with: each named config must parse with ModelFromFiles into a usable
// shape, and match its published count where corpusCounts records one (the
// older fixtures it names are held to theirs in hffamilies*_test.go). A
// params:N id has no config; a row without one says why in its note.
func TestCorpusModelsTSV(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "memory", "models.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	published := map[string][]int{}
	for i, c := range corpusCounts {
		published[c.file] = append(published[c.file], i)
	}
	sc := bufio.NewScanner(f)
	seen := map[string]bool{}
	line, withConfig := 0, 0
	for sc.Scan() {
		line++
		cols := strings.Split(sc.Text(), "\t")
		if line == 1 {
			if got := strings.Join(cols, ","); got != "id,config,weights_note,source" {
				t.Fatalf("header %q, want id, config, weights_note, source", got)
			}
			continue
		}
		if len(cols) != 4 {
			t.Errorf("models.tsv:%d: %d columns, want 4", line, len(cols))
			continue
		}
		id, file, note, source := cols[0], cols[1], cols[2], cols[3]
		if id == "" || note == "" || source == "" || seen[id] {
			t.Errorf("models.tsv:%d: id %q (seen before: %v), note %q, source %q", line, id, seen[id], note, source)
		}
		seen[id] = true
		if strings.HasPrefix(id, "params:") && file != "" {
			t.Errorf("models.tsv:%d: %s names a config, %s", line, id, file)
		}
		if file == "" {
			continue
		}
		withConfig++
		m, _, err := ModelFromFiles(id, readModel(t, file), 0)
		if err != nil {
			t.Errorf("models.tsv:%d: %s: %v", line, file, err)
			continue
		}
		if m.Params <= 0 || m.Arch == nil || m.Arch.Layers <= 0 || m.Arch.KVHeads <= 0 || m.Arch.HeadDim <= 0 || m.Arch.Vocab <= 0 {
			t.Errorf("models.tsv:%d: %s gives no usable shape: %d params, %+v", line, file, m.Params, m.Arch)
		}
		for _, i := range published[file] {
			if c := corpusCounts[i]; m.Params+c.extra != c.published {
				t.Errorf("models.tsv:%d: %s counts %d + %d, want %d (%s)", line, file, m.Params, c.extra, c.published, c.where)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Every model the corpus names is listed, with its config or the reason
	// it has none, unless the catalogue knows it or the row names a bare
	// size or a fixture itself.
	w := newCorpusWorld(t)
	known := func(id string) bool {
		if seen[id] || strings.HasPrefix(id, "params:") || strings.HasPrefix(id, "config:") {
			return true
		}
		for _, c := range w.catMod {
			if strings.EqualFold(c.Name, id) || (c.HFID != "" && strings.EqualFold(c.HFID, id)) {
				return true
			}
		}
		return false
	}
	for _, table := range []string{"measured.tsv", "outcomes.tsv"} {
		for _, r := range readTSV(t, table) {
			if id := r["model"]; id != "" && !known(id) {
				t.Errorf("%s: row %s names model %q, which models.tsv does not list", table, r["id"], id)
				seen[id] = true // once per id
			}
		}
	}
	if withConfig < 100 {
		t.Errorf("%d ids, only %d with a config", len(seen), withConfig)
	}
}
