package recommend

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/suggest"
)

// builtinEntry is one model of devctl's own config.json copies
// (configs/hub): its Hugging Face id, the file under configs/hub, and
// whose config it is when not the model's own (an instruct fine-tune
// planned with its base model's config.json).
type builtinEntry struct{ id, file, whose string }

// builtinIndex is configs/hub/index.tsv, read once: "id<TAB>file" lines,
// "#" comments.
var builtinIndex = sync.OnceValue(func() []builtinEntry {
	data, err := configs.Hub.ReadFile("hub/index.tsv")
	if err != nil {
		return nil
	}
	var list []builtinEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) >= 2 {
			e := builtinEntry{id: f[0], file: f[1]}
			if len(f) > 2 {
				e.whose = f[2]
			}
			list = append(list, e)
		}
	}
	return list
})

// builtinConfig is devctl's copy of the config.json of the Hugging Face
// model id (matched ignoring case, as the Hub does), with the id as the
// index spells it and a source line that says whose config it is.
func builtinConfig(id string) (canonical, source string, data []byte, ok bool) {
	for _, e := range builtinIndex() {
		if strings.EqualFold(e.id, id) {
			data, err := configs.Hub.ReadFile(path.Join("hub", e.file))
			source = "devctl's built-in config.json of " + e.id
			if e.whose != "" {
				source += " (" + e.whose + ")"
			}
			return e.id, source, data, err == nil
		}
	}
	return "", "", nil, false
}

// builtinByName lists the ids of the copies whose name after the
// organisation is name, ignoring case ("llama-3.1-8b" finds
// meta-llama/Llama-3.1-8B).
func builtinByName(name string) []string {
	var ids []string
	for _, e := range builtinIndex() {
		if _, base, ok := strings.Cut(e.id, "/"); ok && strings.EqualFold(base, name) {
			ids = append(ids, e.id)
		}
	}
	return ids
}

// builtinNames are the names --model takes for the copies (the part of
// each id after the organisation), for error messages.
func builtinNames() []string {
	var names []string
	for _, e := range builtinIndex() {
		if _, base, ok := strings.Cut(e.id, "/"); ok {
			names = append(names, strings.ToLower(base))
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// unknownModel is the one line for a --model name that is neither
// catalogued nor a built-in config's: the closest name of either kind, the
// catalogue's names, and the other ways to name a model.
func unknownModel(name string, catalogue []CatalogModel) error {
	names := make([]string, len(catalogue))
	for i, m := range catalogue {
		names[i] = m.Name
	}
	msg := fmt.Sprintf("unknown --model %q", name)
	// The catalogue first, in its own order (its first match wins).
	if s := suggest.Closest(name, append(slices.Clone(names), builtinNames()...)); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	slices.Sort(names)
	return inputf("%s (catalogued: %s; or one of the %d Hugging Face models devctl keeps a config.json of, by ORG/NAME or the name after it, such as llama-3.1-8b or qwen3-8b; or any Hugging Face id such as Qwen/Qwen2-1.5B)",
		msg, strings.Join(names, ", "), len(builtinIndex()))
}
