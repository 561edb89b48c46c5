package recommend

import (
	"bytes"
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/hfhub"
)

var updateHub = goflag.Bool("update", false, "rewrite configs/hub from testdata/models and testdata/memory/models.tsv")

// builtinWanted is what configs/hub should hold: every Hugging Face id of
// testdata/memory/models.tsv whose config in testdata/models is that very
// model's (weights_note "base": a real copy, or one written from its
// published numbers and checked against its published count) or the base
// model's an instruct or chat fine-tune was trained from (same shapes; the
// context length may differ), never a synthetic shape, with that file and
// what the output must say of it.
// quantisedNote is a models.tsv note of a checkpoint stored in fewer
// bits than its config.json says.
var quantisedNote = regexp.MustCompile(`(?i)gptq|awq|[0-9]-?bits?\b|fp8|nvfp4|int8|int4|gguf|exl2|bnb|mlx|w8a8|w4a16|quanti[sz]|delta|nf4|low-bit|bits per weight`)

func builtinWanted(t *testing.T) (index []byte, files map[string][]byte) {
	t.Helper()
	files = map[string][]byte{}
	var lines []string
	for _, r := range readTSV(t, "models.tsv") {
		id, file := r["id"], r["config"]
		if !strings.Contains(id, "/") || file == "" || strings.Contains(file, ".synthetic.") {
			continue
		}
		note := r["weights_note"]
		var whose []string
		switch {
		case quantisedNote.MatchString(id):
			continue // planned by its name's ending, from the model it packages
		case note == "base", strings.HasPrefix(note, "base;") && strings.Contains(file, ".published."):
		case strings.HasPrefix(note, "base: instruct fine-tune of "), strings.HasPrefix(note, "base: chat fine-tune of "):
			whose = append(whose, "its base model's config.json: the same shapes; its context length may differ")
		case strings.HasPrefix(note, "base; re-upload or fine-tune config"):
			whose = append(whose, "a re-upload's or fine-tune's config.json with the model's shapes")
		case strings.HasPrefix(note, "base"), !quantisedNote.MatchString(note):
			// Hand-mapped to a config of the same shapes (a fine-tune's, a
			// sibling's, a mirror's); the corpus note says whose. A
			// quantised checkpoint's is left to the name's ending
			// (reuploadOf), which says how it is stored.
			why, _, _ := strings.Cut(strings.TrimLeft(strings.TrimPrefix(note, "base"), ":; "), ";")
			if len(why) > 160 {
				why = why[:strings.LastIndex(why[:160], " ")] + " ..."
			}
			whose = append(whose, "a config.json of the same shapes: "+strings.ReplaceAll(why, "\t", " "))
		default:
			continue
		}
		if strings.Contains(file, ".published.") {
			whose = append(whose, "written from the model's published numbers and checked against its published parameter count")
		}
		base := strings.Join(whose, "; ")
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", file))
		if err != nil {
			t.Fatal(err)
		}
		files[file] = data
		lines = append(lines, strings.TrimSuffix(id+"\t"+file+"\t"+base, "\t"))
	}
	sort.Strings(lines)
	var b bytes.Buffer
	b.WriteString("# Hugging Face id<TAB>config.json copy in this folder[<TAB>whose config it is, when not the model's own]. Written by\n")
	b.WriteString("# go test ./internal/recommend -run TestBuiltinConfigsUpToDate -update\n")
	b.WriteString("# from testdata/memory/models.tsv and testdata/models (its README names each file's source).\n")
	for _, l := range lines {
		fmt.Fprintln(&b, l)
	}
	return b.Bytes(), files
}

// configs/hub is testdata's real config.json copies, as builtinWanted
// picks them: nothing more, nothing changed.
func TestBuiltinConfigsUpToDate(t *testing.T) {
	index, files := builtinWanted(t)
	dir := filepath.Join("..", "..", "configs", "hub")
	if *updateHub {
		old, _ := filepath.Glob(filepath.Join(dir, "*.config.json"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "index.tsv"), index, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "index.tsv"))
	if err != nil || !bytes.Equal(got, index) {
		t.Fatalf("configs/hub/index.tsv is out of date: go test ./internal/recommend -run TestBuiltinConfigsUpToDate -update")
	}
	have, _ := filepath.Glob(filepath.Join(dir, "*.config.json"))
	if len(have) != len(files) {
		t.Errorf("configs/hub holds %d configs, want %d: rerun with -update", len(have), len(files))
	}
	for name, want := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("configs/hub/%s differs from testdata/models: rerun with -update", name)
		}
	}
}

// Offline, a Hugging Face id devctl has a copy of is planned from that
// copy and says so; one it has none of still gets the line that says how
// to go on. A short name finds the copy too.
func TestBuiltinConfigWhenTheHubIsUnreachable(t *testing.T) {
	deps := Deps{Hub: hfhub.Options{Offline: true, HubCaches: []string{t.TempDir()}, Cache: t.TempDir()}}
	m, src, err := LoadModel(context.Background(), ModelSpec{Name: "meta-llama/llama-3.1-8b"}, deps)
	if err != nil {
		t.Fatal(err)
	}
	if m.Arch == nil || m.Arch.Layers != 32 || m.Arch.KVHeads != 8 || m.Arch.Vocab != 128256 {
		t.Errorf("Llama-3.1-8B from the copy: %+v", m.Arch)
	}
	if !strings.Contains(src, "built-in") {
		t.Errorf("source %q does not say the config is devctl's copy", src)
	}
	if _, _, err := LoadModel(context.Background(), ModelSpec{Name: "nobody/no-such-model"}, deps); err == nil || !strings.Contains(err.Error(), "--model-config") {
		t.Errorf("an id with no copy: %v, want the line that names --model-params and --model-config", err)
	}
	m2, src2, err := LoadModel(context.Background(), ModelSpec{Name: "Llama-3.1-8B"}, deps)
	if err != nil || m2.Params != m.Params || !strings.Contains(src2, "meta-llama/Llama-3.1-8B") {
		t.Errorf("short name: %d params from %q (%v), want the copy of meta-llama/Llama-3.1-8B", m2.Params, src2, err)
	}
	if _, _, err := LoadModel(context.Background(), ModelSpec{Name: "no-such-model-anywhere"}, deps); !errors.Is(err, ErrInput) {
		t.Errorf("unknown short name: %v, want an input error", err)
	}
}

// Offline, the base and instruct releases of a model devctl keeps a copy
// of are planned with that copy (the releases share their shapes), and a
// copy kept under two organisations is one model, not an ambiguity.
func TestBuiltinSiblingsAndCopies(t *testing.T) {
	deps := Deps{Hub: hfhub.Options{Offline: true, HubCaches: []string{t.TempDir()}, Cache: t.TempDir()}}
	for _, c := range []struct{ name, copy string }{
		{"Qwen/Qwen3-8B-Base", "Qwen/Qwen3-8B"},
		{"Qwen/Qwen2.5-1.5B", "Qwen/Qwen2.5-1.5B"},
		{"EleutherAI/pythia-1b", "EleutherAI/pythia-1b-deduped"},
		{"google/gemma-3-27b-pt", "google/gemma-3-27b-it"},
		{"someone/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"},
		{"qwen3-8b", "Qwen/Qwen3-8B"},
	} {
		m, src, err := LoadModel(context.Background(), ModelSpec{Name: c.name}, deps)
		if err != nil || !strings.Contains(src, "built-in config.json of "+c.copy) || m.Params == 0 {
			t.Errorf("%s: %d params from %q (%v), want the copy of %s", c.name, m.Params, src, err, c.copy)
		}
	}
	if got := fineTuneSiblings("Llama-2-7b-chat-hf"); !slices.Contains(got, "Llama-2-7b") || !slices.Contains(got, "Llama-2-7b-hf") {
		t.Errorf("siblings of Llama-2-7b-chat-hf: %v", got)
	}
}

// Every model the memory corpus's reporters named and that was mapped by
// hand to a config.json (testdata/memory/models.tsv) plans offline, from
// its own copy, its base or instruct release's, or the model a re-upload
// packages.
func TestCorpusModelsPlanOffline(t *testing.T) {
	deps := Deps{Hub: hfhub.Options{Offline: true, HubCaches: []string{t.TempDir()}, Cache: t.TempDir()}}
	var n, missed int
	for _, r := range readTSV(t, "models.tsv") {
		if !strings.Contains(r["id"], "/") || r["config"] == "" || strings.Contains(r["config"], ".synthetic.") {
			continue
		}
		n++
		if _, _, err := LoadModel(context.Background(), ModelSpec{Name: r["id"]}, deps); err != nil {
			missed++
			t.Logf("%s: %v", r["id"], err)
		}
	}
	t.Logf("%d of %d hand-mapped corpus models plan offline", n-missed, n)
	if missed*10 > n {
		t.Errorf("%d of %d hand-mapped corpus models do not plan offline", missed, n)
	}
}
