package recommend

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
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

// builtinOwn reports whether the copy of id is that model's own
// config.json (not its base model's, nor a re-upload's), the only kind
// whose quantization_config says how the model is stored.
func builtinOwn(id string) bool {
	for _, e := range builtinIndex() {
		if strings.EqualFold(e.id, id) {
			return e.whose == "" || strings.HasPrefix(e.whose, "written from")
		}
	}
	return false
}

// builtinByName lists the ids of the copies whose name after the
// organisation is name, ignoring case ("llama-3.1-8b" finds
// meta-llama/Llama-3.1-8B).
//
// Copies kept under several organisations (the original and its
// re-uploads: Qwen/Qwen3-8B and willcb/Qwen3-8B, meta-llama/ and
// NousResearch/Llama-2-7b-chat-hf) are one model: the id whose copy is
// closest to the model's own config.json stands for them (its own, then
// its base model's, then a re-upload's, then one mapped by its shapes);
// copies of one file are one.
func builtinByName(name string) []string {
	var ids, files []string
	best := -1
	for _, e := range builtinIndex() {
		if _, base, ok := strings.Cut(e.id, "/"); !ok || !strings.EqualFold(base, name) {
			continue
		}
		switch r := copyRank(e); {
		case best < 0 || r < best:
			ids, files, best = []string{e.id}, []string{e.file}, r
		case r == best && !slices.Contains(files, e.file):
			ids, files = append(ids, e.id), append(files, e.file)
		}
	}
	return ids
}

// copyRank orders how close a copy is to the model's own config.json.
func copyRank(e builtinEntry) int {
	switch {
	case e.whose == "" || strings.HasPrefix(e.whose, "written from"):
		return 0
	case strings.HasPrefix(e.whose, "its base model's"):
		return 1
	case strings.HasPrefix(e.whose, "a re-upload's"):
		return 2
	}
	return 3
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

// reupload is a name ending that marks a re-upload of another model's
// weights (quantised or converted by a third party: unsloth, mlx-community,
// TheBloke, bartowski, Qwen's own -AWQ), with the storage the ending
// states (nil: 16-bit, or a GGUF file whose quantisation the name of the
// repository does not fix).
type reupload struct {
	suffix string
	stored *oomsim.StoredWeights
	gguf   bool
}

func stored(p capability.Precision, f oomsim.QuantFormat, bits float64, from string) *oomsim.StoredWeights {
	return &oomsim.StoredWeights{Precision: p, Format: f, Bits: bits, From: from}
}

// reuploads are tried in order, so a longer ending comes before its tail.
var reuploads = []reupload{
	{suffix: "-unsloth-bnb-4bit", stored: stored(capability.Int4, oomsim.QuantBnB, 0, "-bnb-4bit in the name: bitsandbytes 4-bit")},
	// Red Hat's (formerly Neural Magic's) llm-compressor releases.
	{suffix: "-quantized.w4a16", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-quantized.w4a16 in the name: 4-bit weights")},
	{suffix: "-quantized.w8a16", stored: stored(capability.Int8, oomsim.QuantGPTQ, 0, "-quantized.w8a16 in the name: 8-bit weights")},
	{suffix: "-quantized.w8a8", stored: stored(capability.Int8, oomsim.QuantGPTQ, 8, "-quantized.w8a8 in the name: 8-bit weights, a scale per channel")},
	// Intel's AutoRound names the bits before it (-int4-AutoRound).
	{suffix: "-AutoRound"},
	{suffix: "-bnb-4bit", stored: stored(capability.Int4, oomsim.QuantBnB, 0, "-bnb-4bit in the name: bitsandbytes 4-bit")},
	{suffix: "-bnb-8bit", stored: stored(capability.Int8, oomsim.QuantBnB, 0, "-bnb-8bit in the name: bitsandbytes 8-bit")},
	{suffix: "-GPTQ-Int4", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-GPTQ-Int4 in the name: GPTQ 4-bit")},
	{suffix: "-GPTQ-Int8", stored: stored(capability.Int8, oomsim.QuantGPTQ, 0, "-GPTQ-Int8 in the name: GPTQ 8-bit")},
	{suffix: "-GPTQ", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-GPTQ in the name: GPTQ 4-bit, the format's usual")},
	{suffix: "-AWQ", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-AWQ in the name: AWQ 4-bit")},
	{suffix: "-Int4", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-Int4 in the name: GPTQ 4-bit")},
	{suffix: "-Int8", stored: stored(capability.Int8, oomsim.QuantGPTQ, 0, "-Int8 in the name: GPTQ 8-bit")},
	{suffix: "-W4A16", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-W4A16 in the name: 4-bit weights")},
	{suffix: "-W8A8", stored: stored(capability.Int8, oomsim.QuantGPTQ, 8, "-W8A8 in the name: 8-bit weights, a scale per channel")},
	{suffix: "-W8A16", stored: stored(capability.Int8, oomsim.QuantGPTQ, 0, "-W8A16 in the name: 8-bit weights")},
	{suffix: "-FP8-Dynamic", stored: stored(capability.Int8, oomsim.QuantFP8, 0, "-FP8 in the name: fp8 weights")},
	{suffix: "-FP8", stored: stored(capability.Int8, oomsim.QuantFP8, 0, "-FP8 in the name: fp8 weights")},
	{suffix: "-NVFP4", stored: stored(capability.Int4, oomsim.QuantGPTQ, 4+8.0/16, "-NVFP4 in the name: 4 bits and an fp8 scale per 16")},
	// A bare bit count (CohereForAI/c4ai-command-r-plus-4bit,
	// 01-ai/Yi-34B-Chat-4bits, internlm/internlm2_5-7b-chat-4bit) states the
	// bits, not the format; mlx conversions' endings are read first.
	{suffix: "-4bits", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-4bits in the name: 4-bit weights")},
	{suffix: "-8bits", stored: stored(capability.Int8, oomsim.QuantGPTQ, 0, "-8bits in the name: 8-bit weights")},
	{suffix: "-4bit", stored: stored(capability.Int4, oomsim.QuantGPTQ, 0, "-4bit in the name: 4-bit weights")},
	{suffix: "-8bit", stored: stored(capability.Int8, oomsim.QuantGPTQ, 0, "-8bit in the name: 8-bit weights")},
	// mlx-community's gpt-oss: the experts stay MXFP4 as the model ships
	// them, the rest 8-bit; the model's own quantization_config holds.
	{suffix: "-MXFP4-Q8"},
	// An abliterated model is its base with a direction removed from the
	// weights: the same shapes and storage.
	{suffix: "-abliterated"},
	{suffix: "-i1-GGUF", gguf: true},
	{suffix: "-GGUF", gguf: true},
	{suffix: "-MLX"},
	{suffix: "-bf16"},
	{suffix: "-fp16"},
}

// mlxEndingRE is mlx-community's ending: the bits (-4bit) and, when not
// mlx's default of 64, the group size (-4bit-g32; mlx_lm convert
// --q-bits, --q-group-size).
var mlxEndingRE = regexp.MustCompile(`(?i)-([2-8])bit(?:-g(32|64|128))?$`)

// mlxEnding takes an mlx conversion's ending off name and says how the
// weights are stored: the bits plus an fp16 scale and bias per group.
func mlxEnding(name string) (rest string, st *oomsim.StoredWeights, ok bool) {
	m := mlxEndingRE.FindStringSubmatchIndex(name)
	if m == nil || m[0] == 0 {
		return name, nil, false
	}
	bits := float64(name[m[2]] - '0')
	group := 64
	if m[4] >= 0 {
		group, _ = strconv.Atoi(name[m[4]:m[5]])
	}
	p := capability.Int4
	if bits > 4 {
		p = capability.Int8
	}
	from := fmt.Sprintf("%s in the name: mlx %.0f-bit, group %d", name[m[0]:], bits, group)
	return name[:m[0]], stored(p, oomsim.QuantMLX, bits+32/float64(group), from), true
}

// kinship is how a model devctl has no copy of relates to the built-in
// copy it is planned with.
type kinship int

const (
	repackaged kinship = iota // the same weights re-uploaded (unsloth/phi-4-bnb-4bit)
	sibling                   // the base or instruct release of the same model
	fineTune                  // a fine-tune whose name contains the base's (BgGPT-Gemma-3-12B-IT)
)

// reuploadOf finds the built-in model a re-upload packages: the name
// after the organisation with its re-upload endings taken off
// ("unsloth/phi-4-bnb-4bit" is microsoft/phi-4, "mlx-community/Qwen3-8B-4bit"
// is Qwen/Qwen3-8B), and the storage the endings state. ok is false when
// what is left names no single copy. A name under another organisation
// with no ending (unsloth/phi-4) is taken to be the model of that name.
// Failing those, a name that contains one copy's sized name is taken to be
// a fine-tune of it (containedBase).
func reuploadOf(id string) (base string, st *oomsim.StoredWeights, gguf bool, kin kinship, ok bool) {
	name := id
	if _, after, found := strings.Cut(id, "/"); found {
		name = after
	}
	isMLX := strings.Contains(strings.ToLower(id), "mlx")
	stripped := false
	for changed := true; changed; {
		changed = false
		if isMLX {
			if rest, s, ok := mlxEnding(name); ok {
				name, changed, stripped = rest, true, true
				if st == nil {
					st = s
				}
			}
		}
		for _, r := range reuploads {
			if strings.HasSuffix(strings.ToLower(name), strings.ToLower(r.suffix)) && len(name) > len(r.suffix) {
				name, changed, stripped = name[:len(name)-len(r.suffix)], true, true
				if st == nil {
					st = r.stored
				}
				gguf = gguf || r.gguf
				break
			}
		}
	}
	var ids []string
	if stripped || strings.Contains(id, "/") {
		// Re-uploads drop Meta's prefix and the -hf of the converted Llama 2
		// checkpoints (unsloth/llama-3-8b-Instruct is Meta-Llama-3-8B-Instruct,
		// TheBloke/Llama-2-7B-Chat-GPTQ is Llama-2-7b-chat-hf), or keep the
		// prefix Meta has since dropped (RedHatAI/Meta-Llama-3.1-405B-FP8 is
		// meta-llama/Llama-3.1-405B).
		unprefixed := name
		if len(name) > len("Meta-") && strings.EqualFold(name[:len("Meta-")], "Meta-") {
			unprefixed = name[len("Meta-"):]
		}
		for _, n := range []string{name, "Meta-" + name, name + "-hf", unprefixed} {
			if ids = builtinByName(n); len(ids) > 0 {
				break
			}
		}
	} else if len(builtinByName(name)) > 0 {
		return "", nil, false, 0, false // a bare name of a copy: not a re-upload
	}
	if len(ids) == 0 {
		// No copy of the model itself: its base or instruct release's.
		for _, n := range fineTuneSiblings(name) {
			if ids = builtinByName(n); len(ids) > 0 {
				kin = sibling
				break
			}
		}
	}
	if len(ids) == 0 {
		if b, rest, found := containedBase(name); found {
			ids, kin = []string{b}, fineTune
			if st == nil {
				st = storageIn(rest)
			}
		}
	}
	for _, other := range ids[min(1, len(ids)):] {
		if !strings.EqualFold(other, ids[0]) {
			return "", nil, false, 0, false // several models of that name
		}
	}
	if len(ids) == 0 {
		return "", nil, false, 0, false
	}
	return ids[0], st, gguf, kin, true
}

// sizeToken is a parameter count as model names write it: 27B, 0.6B,
// 135M, 8x7B, and Gemma's E4B.
var sizeToken = regexp.MustCompile(`(?i)(?:^|[-_.])[a-z]?(?:(\d+)x)?(\d+(?:\.\d+)?)([bm])(?:$|[-_.])`)

// largestSize is the largest parameter count the name writes, 0 for none.
func largestSize(name string) float64 {
	largest := 0.0
	// Matches share their separators: look again from each match's end.
	for rest := name; ; {
		m := sizeToken.FindStringSubmatchIndex(rest)
		if m == nil {
			return largest
		}
		v, _ := strconv.ParseFloat(rest[m[4]:m[5]], 64)
		if m[2] >= 0 {
			n, _ := strconv.ParseFloat(rest[m[2]:m[3]], 64)
			v *= n
		}
		if strings.EqualFold(rest[m[6]:m[7]], "m") {
			v /= 1000
		}
		largest = max(largest, v)
		rest = rest[m[7]:]
	}
}

// containedBase finds the copy whose name a fine-tune's name contains,
// whole, between the name's separators: "BgGPT-Gemma-3-12B-IT" holds
// gemma-3-12b-it, "Huihui-Qwen3.5-27B-abliterated" Qwen3.5-27B,
// "Qwen3.5-27B-Claude-4.6-Opus-Reasoning-Distilled" Qwen3.5-27B. A copy's
// name counts only with a size in it (a family name such as "Qwen3-Coder"
// says nothing of the shapes), either as the copy is named or with its
// instruct or base ending taken off; the longest name contained wins
// ("DeepSeek-R1-Distill-Qwen-7B" over "Qwen-7B"), and it must name one
// model. A name that also writes a larger size than the copy's
// ("Qwen3-8B-upscaled-12B") is not taken to have its shapes. rest is the
// name outside the match, where a quantisation may be named.
func containedBase(name string) (id, rest string, ok bool) {
	lower := strings.ToLower(name)
	bestLen := 0
	var best []builtinEntry
	var bestRest string
	for _, e := range builtinIndex() {
		_, b, found := strings.Cut(e.id, "/")
		if !found {
			continue
		}
		candidates := []string{b}
		if stem := fineTuneStem(b); stem != b {
			candidates = append(candidates, stem)
		}
		for _, c := range candidates {
			c = strings.ToLower(c)
			if len(c) < bestLen || len(c) >= len(lower) || !sizeToken.MatchString(c) {
				continue
			}
			at := delimitedIndex(lower, c)
			if at < 0 {
				continue
			}
			if len(c) > bestLen {
				bestLen, best = len(c), nil
				bestRest = lower[:at] + lower[at+len(c):] // lower-casing can change the length: stay in lower
			}
			best = append(best, e)
		}
	}
	if len(best) == 0 {
		return "", "", false
	}
	if largestSize(bestRest) > largestSize(best[0].id) {
		return "", "", false // a size beside the copy's: not its shapes
	}
	slices.SortStableFunc(best, func(a, b builtinEntry) int { return copyRank(a) - copyRank(b) })
	for _, e := range best[1:] {
		if e.file != best[0].file {
			return "", "", false // two models of that name
		}
	}
	return best[0].id, bestRest, true
}

// delimitedIndex is where sub occurs in s with a separator (or the end of
// s) on both sides, or -1.
func delimitedIndex(s, sub string) int {
	sep := func(b byte) bool { return strings.IndexByte("-_./ ", b) >= 0 }
	for from := 0; from+len(sub) <= len(s); {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(sub)
		if (i == 0 || sep(s[i-1])) && (end == len(s) || sep(s[end])) {
			return i
		}
		from = i + 1
	}
	return -1
}

// storageIn is the storage a quantisation named anywhere in rest states
// (a fine-tune's "-GPTQ-4b-128g", "-FP8-block", "-int4-AutoRound-EC"):
// the first re-upload ending, in the reuploads' order, found whole there.
func storageIn(rest string) *oomsim.StoredWeights {
	lower := strings.ToLower(rest)
	for _, r := range reuploads {
		if r.stored != nil && delimitedIndex(lower, strings.ToLower(strings.TrimPrefix(r.suffix, "-"))) >= 0 {
			return r.stored
		}
	}
	return nil
}

// fineTuneEndings are the endings that tell a base model from its
// instruct or chat release (and Pythia's deduplicated-data run), in the
// order a sibling is looked for. The releases share their shapes (an
// instruct model is its base fine-tuned):
// Qwen2.5-1.5B is Qwen2.5-1.5B-Instruct's, gemma-3-27b-pt gemma-3-27b-it's,
// Llama-2-7b-chat-hf Llama-2-7b-hf's.
var fineTuneEndings = []string{"-Instruct", "-it", "-Chat", "-chat-hf", "-hf", "-Base", "-pt", "-deduped"}

// fineTuneStem is name with its instruct or base ending taken off.
func fineTuneStem(name string) string {
	for _, e := range fineTuneEndings {
		if len(name) > len(e) && strings.EqualFold(name[len(name)-len(e):], e) {
			return name[:len(name)-len(e)]
		}
	}
	return name
}

// fineTuneSiblings are the names of the base and instruct releases of
// name: its ending taken off or swapped for another, and a Mistral-style
// "-Instruct-" inside the name (Mistral-7B-Instruct-v0.3 is Mistral-7B-v0.3).
func fineTuneSiblings(name string) []string {
	stem := fineTuneStem(name)
	var out []string
	add := func(n string) {
		if !strings.EqualFold(n, name) && !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, n) }) {
			out = append(out, n)
		}
	}
	add(stem)
	for _, e := range fineTuneEndings {
		add(stem + e)
	}
	if i := strings.Index(strings.ToLower(name), "-instruct-"); i > 0 {
		add(name[:i] + name[i+len("-instruct"):])
	}
	return out
}
