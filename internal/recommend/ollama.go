package recommend

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
)

// ollamaFamilies maps an Ollama library model, the name before the tag's
// colon, to the Hugging Face id of what its size tags package: {S} is the
// size as the id writes it (8B), {s} as the tag does (8b). Each family is
// one whose tags the memory corpus's reporters ran and mapped to their
// models (testdata/memory: "ollama run llama3.1:70b" is
// meta-llama/Llama-3.1-70B-Instruct, "qwen3:8b" Qwen/Qwen3-8B, "gemma3:4b"
// google/gemma-3-4b-it, ...); the library's tags are the instruct
// releases.
var ollamaFamilies = map[string]string{
	"llama3.1":      "meta-llama/Llama-3.1-{S}-Instruct",
	"llama3.2":      "meta-llama/Llama-3.2-{S}-Instruct",
	"llama3.3":      "meta-llama/Llama-3.3-{S}-Instruct",
	"qwen3":         "Qwen/Qwen3-{S}",
	"qwen3.5":       "Qwen/Qwen3.5-{S}",
	"qwen3.6":       "Qwen/Qwen3.6-{S}",
	"qwen2.5":       "Qwen/Qwen2.5-{S}-Instruct",
	"qwen2.5-coder": "Qwen/Qwen2.5-Coder-{S}-Instruct",
	"qwen2.5vl":     "Qwen/Qwen2.5-VL-{S}-Instruct",
	"gemma3":        "google/gemma-3-{s}-it",
	"gpt-oss":       "openai/gpt-oss-{s}",
	"smollm2":       "HuggingFaceTB/SmolLM2-{S}-Instruct",
	"granite3.3":    "ibm-granite/granite-3.3-{s}-instruct",
}

// ollamaTags are the tags whose model the family's pattern does not give:
// one release per tag (deepseek-r1's sizes are distills of different
// bases; deepseek-r1:8b has been DeepSeek-R1-0528-Qwen3-8B since May 2025).
var ollamaTags = map[string]string{
	"mistral:7b":            "mistralai/Mistral-7B-Instruct-v0.3",
	"deepseek-r1:1.5b":      "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
	"deepseek-r1:7b":        "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
	"deepseek-r1:8b":        "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B",
	"deepseek-r1:32b":       "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
	"phi4-mini:3.8b":        "microsoft/Phi-4-mini-instruct",
	"qwen3-coder:30b":       "Qwen/Qwen3-Coder-30B-A3B-Instruct",
	"qwen3.6:35b-a3b":       "Qwen/Qwen3.6-35B-A3B",
	"mistral-small3.1:24b":  "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
	"mistral-small3.2:24b":  "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
	"llama4:16x17b":         "meta-llama/Llama-4-Scout-17B-16E-Instruct",
	"codestral:22b":         "mistralai/Codestral-22B-v0.1",
	"codegemma:7b":          "google/codegemma-1.1-7b-it",
	"deepseek-coder:6.7b":   "deepseek-ai/deepseek-coder-6.7b-instruct",
	"dolphin3:8b":           "cognitivecomputations/Dolphin3.0-Llama3.1-8B",
	"hermes3:8b":            "NousResearch/Hermes-3-Llama-3.1-8B",
	"yi-coder:9b":           "01-ai/Yi-Coder-9B-Chat",
	"codeqwen:7b":           "Qwen/CodeQwen1.5-7B-Chat",
	"llava-llama3:8b":       "xtuner/llava-llama-3-8b-v1_1",
	"phind-codellama:34b":   "Phind/Phind-CodeLlama-34B-v2",
	"qwen3.6:27b":           "Qwen/Qwen3.6-27B",
	"qwen3.5:27b":           "Qwen/Qwen3.5-27B",
	"mistral:7b-instruct":   "mistralai/Mistral-7B-Instruct-v0.3",
	"llama3.2:3b-instruct":  "meta-llama/Llama-3.2-3B-Instruct",
	"llama3.3:70b-instruct": "meta-llama/Llama-3.3-70B-Instruct",
	"qwen2.5:7b-instruct":   "Qwen/Qwen2.5-7B-Instruct",
}

// ollamaTag is NAME:TAG as `ollama run` takes it, the tag a size with
// optional variant and quantisation ("8b", "7b-instruct-q8_0", "32b-q8_0").
var ollamaTag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-z][a-z0-9.\-]*):((?:\d+(?:\.\d+)?[bm]|\d+x\d+b)(?:-[a-z0-9]+)*?)(?:-((?:i?q\d[a-z0-9_]*)|fp16|bf16))?$`)
})

// OllamaModel reads an Ollama library tag ("llama3.1:8b",
// "qwen2.5:7b-instruct-q8_0", "deepseek-r1:32b") as the Hugging Face model
// it packages and how its weights are stored: the tag's quantisation, else
// the library's default Q4_K_M. ok is false for a name that is no tag of a
// family devctl knows.
func OllamaModel(name string) (id string, st *oomsim.StoredWeights, ok bool) {
	m := ollamaTag().FindStringSubmatch(strings.ToLower(strings.TrimSpace(name)))
	if m == nil {
		return "", nil, false
	}
	family, tag, quant := m[1], m[2], m[3]
	if id, ok = ollamaTags[family+":"+tag]; !ok {
		pattern, known := ollamaFamilies[family]
		if !known || strings.Contains(tag, "-") || strings.Contains(tag, "x") {
			return "", nil, false
		}
		id, ok = strings.NewReplacer("{S}", strings.ToUpper(tag), "{s}", tag).Replace(pattern), true
	}
	switch {
	case family == "gpt-oss" && quant == "":
		// Ollama builds gpt-oss from OpenAI's release: the experts in
		// MXFP4 as shipped, every other tensor in BF16 (the 20b tag's
		// 13.8 GB; oomsim plans the experts apart).
		st = stored(capability.BF16, "", 0, "Ollama's gpt-oss build: the experts in MXFP4 as released, the rest in BF16")
	case quant == "fp16":
		st = stored(capability.FP16, "", 0, "the Ollama tag's fp16")
	case quant == "bf16":
		st = stored(capability.BF16, "", 0, "the Ollama tag's bf16")
	case quant != "":
		bits, class, known := oomsim.GGUFTypeBits(quant)
		if !known && strings.HasPrefix(quant, "q8") {
			bits, class, known = oomsim.GGUFTypeBits("q8_0") // "qwen3:32b-q8"
		}
		if !known {
			return "", nil, false
		}
		st = stored(class, oomsim.QuantGGUF, bits, fmt.Sprintf("the Ollama tag's %s (GGUF, %g bits a weight)", strings.ToUpper(quant), bits))
	default:
		bits, _, _ := oomsim.GGUFTypeBits("q4_k_m")
		st = stored(capability.Int4, oomsim.QuantGGUF, bits, "an Ollama tag without a quantisation: the library's default, Q4_K_M")
	}
	return id, st, true
}
