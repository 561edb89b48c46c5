package recommend

import (
	"bytes"
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"os"
	"path/filepath"
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
		case note == "base", strings.HasPrefix(note, "base;") && strings.Contains(file, ".published."):
		case strings.HasPrefix(note, "base: instruct fine-tune of "), strings.HasPrefix(note, "base: chat fine-tune of "):
			whose = append(whose, "its base model's config.json: the same shapes; its context length may differ")
		case strings.HasPrefix(note, "base; re-upload or fine-tune config"):
			whose = append(whose, "a re-upload's or fine-tune's config.json with the model's shapes")
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
