package recommend

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/hfhub"
)

func TestOllamaModel(t *testing.T) {
	for _, c := range []struct {
		tag, id string
		prec    capability.Precision
		bits    float64
	}{
		{"llama3.1:8b", "meta-llama/Llama-3.1-8B-Instruct", capability.Int4, 4.85},
		{"qwen2.5:7b-instruct-q8_0", "Qwen/Qwen2.5-7B-Instruct", capability.Int8, 8.5},
		{"qwen3:32b-q8", "Qwen/Qwen3-32B", capability.Int8, 8.5},
		{"Qwen3:8B-Q4_K_M", "Qwen/Qwen3-8B", capability.Int4, 4.85},
		{"gemma3:12b", "google/gemma-3-12b-it", capability.Int4, 4.85},
		{"deepseek-r1:8b", "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", capability.Int4, 4.85},
		{"llama3.2:3b-fp16", "meta-llama/Llama-3.2-3B-Instruct", capability.FP16, 0},
		{"llama4:16x17b", "meta-llama/Llama-4-Scout-17B-16E-Instruct", capability.Int4, 4.85},
		{"gpt-oss:20b", "openai/gpt-oss-20b", capability.BF16, 0}, // MXFP4 experts, BF16 elsewhere
	} {
		id, st, ok := OllamaModel(c.tag)
		if !ok || id != c.id || st == nil || st.Precision != c.prec || st.Bits != c.bits {
			t.Errorf("%s: %s %+v %v, want %s %s %g", c.tag, id, st, ok, c.id, c.prec, c.bits)
		}
	}
	for _, bad := range []string{"nosuch:7b", "llama3.1", "llama3.1:latest", "meta-llama/Llama-3.1-8B", "qwen3:8b-q9_z", "llama3.1:8b-text", ""} {
		if id, _, ok := OllamaModel(bad); ok {
			t.Errorf("%q read as %s", bad, id)
		}
	}
}

// Every tag and family devctl reads is one the corpus's reporters ran and
// mapped to its model (testdata/memory): the table's source.
func TestOllamaTagsComeFromTheCorpus(t *testing.T) {
	models := map[string]bool{}
	for _, r := range readTSV(t, "models.tsv") {
		models[r["id"]] = true
	}
	var notes strings.Builder
	for _, f := range []string{"measured.tsv", "outcomes.tsv"} {
		for _, r := range readTSV(t, f) {
			if strings.Contains(r["stack"], "ollama") {
				notes.WriteString(r["note"] + "\n")
			}
		}
	}
	text := notes.String()
	for tag, id := range ollamaTags {
		if !models[id] || !strings.Contains(text, tag) {
			t.Errorf("%s → %s: the corpus has the model %v, an Ollama row naming the tag %v", tag, id, models[id], strings.Contains(text, tag))
		}
	}
	for family, pattern := range ollamaFamilies {
		re := regexp.MustCompile(regexp.QuoteMeta(family) + `:(\d+(?:\.\d+)?[bm])\b`)
		found := false
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			id := strings.NewReplacer("{S}", strings.ToUpper(m[1]), "{s}", m[1]).Replace(pattern)
			found = found || models[id]
		}
		if !found {
			t.Errorf("family %s (%s): no Ollama row of the corpus names one of its tags with the model the pattern gives", family, pattern)
		}
	}
}

// Offline, an Ollama tag is planned from devctl's copy of the model it
// packages, as the tag stores it, and the source says so.
func TestOllamaTagOffline(t *testing.T) {
	deps := Deps{Hub: hfhub.Options{Offline: true, HubCaches: []string{t.TempDir()}, Cache: t.TempDir()}}
	m, src, err := LoadModel(context.Background(), ModelSpec{Name: "qwen2.5:7b-instruct-q8_0"}, deps)
	if err != nil || m.Stored == nil || m.Stored.Precision != capability.Int8 || !strings.Contains(src, "Ollama's tag of Qwen/Qwen2.5-7B-Instruct") {
		t.Errorf("%d params, stored %+v, source %q (%v)", m.Params, m.Stored, src, err)
	}
}
