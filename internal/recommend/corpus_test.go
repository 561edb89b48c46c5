package recommend

import (
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe/mps"
)

// The measured-memory corpus (testdata/memory, README.md there): real
// peaks and fit/OOM outcomes other people measured, each with the counter
// it was read from and every setting its source states. These tests turn
// each row into the planner's input and compare devctl's figure for the
// same counter (or its verdict) with what was measured.
//
//	go test ./internal/recommend -run Corpus -v    (scripts/bench-plan-accuracy.sh)

var memoryDir = filepath.Join("..", "..", "testdata", "memory")

// corpusHoldout decides the split by source, mechanically and before the
// memory model was changed: a source (repository or site) is held out when
// the CRC-32 (IEEE) of its name is 0 modulo 3, the rule corpus v1 used.
func corpusHoldout(source string) bool { return crc32.ChecksumIEEE([]byte(source))%3 == 0 }

type memRow map[string]string

func readTSV(t testing.TB, name string) []memRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(memoryDir, name))
	if err != nil {
		t.Fatal(err)
	}
	// Plain tab-separated lines: the tables have no quoting convention, and
	// a note that opens with a quotation mark is text (encoding/csv would
	// read it as a quoted field running on into the next rows).
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	header := strings.Split(strings.TrimRight(lines[0], "\r"), "\t")
	var rows []memRow
	for i, l := range lines[1:] {
		rec := strings.Split(strings.TrimRight(l, "\r"), "\t")
		if len(rec) != len(header) {
			t.Fatalf("%s:%d: %d columns, want %d", name, i+2, len(rec), len(header))
		}
		row := memRow{}
		for j, h := range header {
			row[h] = strings.TrimSpace(rec[j])
		}
		rows = append(rows, row)
	}
	return rows
}

// corpusCase is one row as the planner sees it.
type corpusCase struct {
	id, source, counter string
	// seqKind: "exact" when every sample is seq tokens (packed, padded to
	// the maximum, a benchmark's fixed length), "max" when seq is a
	// truncation limit over a variable-length dataset, "" when the source
	// does not say (README.md, "Sequence lengths").
	seqKind        string
	holdout        bool
	in             Input
	devices        int
	perDeviceTotal bool // the figure is summed over the devices
	measuredGiB    float64
	ran            bool
}

type corpusWorld struct {
	devices map[string]memRow // devices.tsv by raw name
	models  map[string]memRow // models.tsv by id (may be empty)
	catDev  []CatalogDevice
	catMod  []CatalogModel
	configs map[string]Modelish
}

// Modelish caches parsed config.json files.
type Modelish struct {
	m   oomsim.Model
	err error
}

func newCorpusWorld(t testing.TB) *corpusWorld {
	w := &corpusWorld{devices: map[string]memRow{}, models: map[string]memRow{}, configs: map[string]Modelish{}}
	for _, r := range readTSV(t, "devices.tsv") {
		w.devices[r["raw"]] = r
	}
	if _, err := os.Stat(filepath.Join(memoryDir, "models.tsv")); err == nil {
		for _, r := range readTSV(t, "models.tsv") {
			w.models[r["id"]] = r
		}
	}
	var err error
	if w.catDev, err = LoadDevices(configs.DevicesYAML); err != nil {
		t.Fatal(err)
	}
	if w.catMod, err = LoadModels(configs.ModelsYAML); err != nil {
		t.Fatal(err)
	}
	return w
}

// gpuUtil finds a serving row's memory share in its note (the engine's
// logged arguments): vLLM's gpu_memory_utilization, SGLang's
// mem_fraction_static, lmdeploy's cache_max_entry_count (a share only
// below 1), TensorRT-LLM's free_gpu_memory_fraction.
var gpuUtil = regexp.MustCompile(`(?:gpu[_-]memory[_-]utilization|mem[_-]fraction[_-]static|cache[_-]max[_-]entry[_-]count|free[_-]gpu[_-]memory[_-]fraction)['"]?(?:\s*[:=]\s*|\s+\(?)(0?\.[0-9]+)`)

var (
	// kvBlocks and kvTokens size a serving engine's KV cache by count:
	// lmdeploy's cache_max_entry_count of 1 or more (blocks), SGLang's
	// max_total_tokens (tokens).
	kvBlocks   = regexp.MustCompile(`cache[_-]max[_-]entry[_-]count['"]?\s*[:=]\s*([1-9]\d*)\b`)
	kvTokens   = regexp.MustCompile(`(?i)max[-_]total[-_]tokens['"]?(?:\s*[:=]\s*|\s+)(\d+)\b`)
	maxNumSeqs = regexp.MustCompile(`(?i)(?:max[-_]num[-_]seqs|max[-_]running[-_]requests)['"]?(?:\s*[:=]\s*|\s+)(\d+)\b`)
	// localChunk is a local engine's prompt chunk, as --prefill-chunk:
	// llama.cpp's -ub / --ubatch-size / n_ubatch, Ollama's num_batch,
	// mlx-lm's --prefill-step-size (MLX_PREFILL_SIZE in scripts that set it).
	localChunk    = regexp.MustCompile(`(?i)(?:-ub|--ubatch-size|n_ubatch|num_batch|--prefill-step-size|prefill_step_size|MLX_PREFILL_SIZE)['"]?(?:\s*[:=]\s*|\s*)(\d+)\b`)
	prefillTokens = regexp.MustCompile(`(?i)(?:max[-_]num[-_]batched[-_]tokens|chunked[-_]prefill[-_]size|max[-_]batch[-_]prefill[-_]tokens)['"]?(?:\s*[:=]\s*|\s+)(\d+)\b`)
)

// quotedInt is the one value a note quotes for a setting, 0 when it quotes
// none or several different ones.
func quotedInt(re *regexp.Regexp, note string) int {
	v := 0
	for _, m := range re.FindAllStringSubmatch(note, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 || (v != 0 && n != v) {
			return 0
		}
		v = n
	}
	return v
}

var expandable = regexp.MustCompile(`expandable_segments[:=]\s*[Tt]rue`)

// seqParallelOff and seqParallelOn find Megatron-style sequence
// parallelism stated in a row's note or id ("sequence_parallel False",
// "--sequence-parallel", "tp2sp"), never DeepSpeed-Ulysses'
// sequence_parallel_size, which is context parallelism.
var (
	seqParallelOff = regexp.MustCompile(`(?i)sequence[_-]parallel(?:ism)?["']?\s*(?:[:=]\s*|\s+)(?:false|off|disabled)\b|(?:no|without) sequence[ _-]parallel`)
	seqParallelOn  = regexp.MustCompile(`(?i)--sequence-parallel(?:[^-_a-z]|$)|sequence[_-]parallel(?:ism)?["']?\s*(?:[:=]\s*|\s+)(?:true|on|enabled)\b|with sequence[ _-]parallel|tp\d*[-_+]?sp(?:[^a-z]|$)`)
)

// gpuLayers finds a llama.cpp or Ollama partial offload in a row's note:
// the load log's "offloaded N/M layers to GPU" first, else the setting
// (-ngl N, --n-gpu-layers N, n_gpu_layers=N, num_gpu N).
var (
	offloadedLayers = regexp.MustCompile(`offloaded (\d+)/(\d+) layers`)
	gpuLayersFlag   = regexp.MustCompile(`(?:-ngl|--n-gpu-layers|--gpu-layers|n_gpu_layers|llamacpp_ngl|num_gpu)['"]?(?:\s*[:=]\s*|\s+)(\d+)\b`)
)

var nCPUMoE = regexp.MustCompile(`(?:--n-cpu-moe|-ncmoe|n_cpu_moe)(?:\s*[:=]\s*|\s+)(\d+)\b`)

// cpuMoE is llama.cpp's --n-cpu-moe N (--cpu-moe: every block) in a
// row's note; 0 without it.
func cpuMoE(note string) int {
	if m := nCPUMoE.FindStringSubmatch(note); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if strings.Contains(note, "--cpu-moe") || strings.Contains(note, "-cmoe") {
		return 1 << 16
	}
	return 0
}

func gpuLayers(note string) int {
	if m := offloadedLayers.FindStringSubmatch(note); m != nil {
		n, _ := strconv.Atoi(m[1])
		if all, _ := strconv.Atoi(m[2]); n >= all {
			return 0 // every layer
		}
		return n
	}
	if ms := gpuLayersFlag.FindAllStringSubmatch(note, -1); len(ms) == 1 {
		n, _ := strconv.Atoi(ms[0][1])
		return n
	}
	return 0
}

// activeInName is a mixture of experts' active size in its name (30B-A3B).
var activeInName = regexp.MustCompile(`(?i)\d(?:\.\d+)?b[-_]a\d+(?:\.\d+)?b(?:[-_ ]|$)`)

var sizeInName = regexp.MustCompile(`(?i)(?:^|[-_/ ])(\d+(?:\.\d+)?)\s*([bm])(?:[-_ ]|$)`)

// model resolves a corpus model id: a config.json (models.tsv), a
// catalogue entry by name or Hugging Face id, or a size (params:7B, or the
// size in the name) with an assumed shape.
func (w *corpusWorld) model(id string) (oomsim.Model, string) {
	if f, ok := strings.CutPrefix(id, "config:"); ok {
		w.models[id] = memRow{"config": f}
	}
	if r, ok := w.models[id]; ok && r["config"] != "" {
		cm, ok := w.configs[r["config"]]
		if !ok {
			data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "models", r["config"]))
			if err == nil {
				cm.m, _, cm.err = ModelFromFiles(id, data, 0)
			} else {
				cm.err = err
			}
			w.configs[r["config"]] = cm
		}
		if cm.err == nil {
			return cm.m, ""
		}
	}
	for _, c := range w.catMod {
		if strings.EqualFold(c.Name, id) || (c.HFID != "" && strings.EqualFold(c.HFID, id)) {
			return c.Model(), ""
		}
	}
	// As devctl plans --model ORG/NAME without the Hub: its built-in copy,
	// or the copy of the model a re-upload packages.
	if cid, _, data, ok := builtinConfig(id); ok {
		if m, _, err := fromBuiltin(cid, "", data, id); err == nil {
			return m, ""
		}
	}
	if m, _, ok := fromReupload(id, ""); ok && strings.Contains(id, "/") {
		return m, ""
	}
	size := ""
	if s, ok := strings.CutPrefix(id, "params:"); ok {
		size = s
	} else if m := sizeInName.FindStringSubmatch(id); m != nil {
		if activeInName.MatchString(id) {
			// A dense shape assumed for a mixture of experts would keep
			// every expert on each device and no expert parallelism.
			return oomsim.Model{}, "no config for a mixture of experts (" + id + ")"
		}
		size = m[1] + strings.ToUpper(m[2])
	}
	if size == "" {
		return oomsim.Model{}, "no architecture or size for " + id
	}
	n, err := ParseParams(size)
	if err != nil {
		return oomsim.Model{}, "bad size " + size
	}
	return oomsim.Model{Name: id, Params: n, Arch: oomsim.AssumeArch(n)}, ""
}

// target resolves devices.tsv's answer for a raw device string.
func (w *corpusWorld) target(raw string, devices int) (Target, bool, string) {
	r, ok := w.devices[raw]
	if !ok {
		return Target{}, false, "device not in devices.tsv: " + raw
	}
	d := r["device"]
	if d == "skip" {
		return Target{}, false, "not a device devctl plans for (" + r["note"] + ")"
	}
	if spec, ok := strings.CutPrefix(d, "mem:"); ok {
		parts := strings.Split(spec, ":")
		gb, _ := strconv.ParseFloat(parts[0], 64)
		if gb == 0 {
			// Not stated: a capable CUDA device, so the planner takes the
			// row's precision; the device does not enter the prediction.
			return Target{Name: "unknown", Backend: backend.CUDA, TotalBytes: 80 << 30, UsableBytes: 80 << 30, Count: devices,
				Support: capability.Evaluate(capability.Facts{Backend: backend.CUDA, ComputeCapability: "9.0"})}, false, ""
		}
		be := backend.CUDA
		if len(parts) > 1 {
			be = backend.Backend(parts[1])
		}
		// As devctl reads --device 24GB: a GPU's "GB" is GiB (a 24 GB
		// card has 24,576 MiB), 98.5% of it usable.
		total := int64(gb * (1 << 30))
		usable := int64(float64(total) * 0.985)
		if be == backend.MPS {
			// Metal's recommendedMaxWorkingSetSize as devctl's probe
			// estimates it without iogpu.wired_limit_mb.
			usable = int64(mps.WorkingSetEstimate(uint64(total)))
		}
		return Target{Name: d, Backend: be, TotalBytes: total, UsableBytes: usable, Count: devices,
			Support: capability.Evaluate(capability.Facts{Backend: be, ComputeCapability: "8.0", OSVersion: "14.0", Generation: "apple"})}, true, ""
	}
	if g, ok := strings.CutPrefix(d, "gib:"); ok {
		gib, _ := strconv.ParseFloat(g, 64)
		b := int64(gib * float64(1<<30))
		return Target{Name: d, Backend: backend.CUDA, TotalBytes: b, UsableBytes: b, Count: devices,
			Support: capability.Evaluate(capability.Facts{Backend: backend.CUDA, ComputeCapability: "8.0"})}, true, ""
	}
	cd, ok := FindDevice(w.catDev, d)
	if !ok {
		return Target{}, false, "devices.tsv names " + d + ", which the catalogue lacks"
	}
	return TargetFromCatalogue(cd, devices), true, ""
}

// tpDegree, epDegree and ppDegree find a tensor-, expert- or
// pipeline-parallel degree in a note or an id: "TP2", "tp=8", "tp1pp2dp4",
// "--tensor-model-parallel-size 2", "tensor_parallel_size: 8", and their
// expert and pipeline counterparts.
var (
	// zeroStageNone finds a stated ZeRO stage 0 (Megatron-DeepSpeed's
	// zero_stage 0): no optimizer sharding over the replicas.
	zeroStageNone = regexp.MustCompile(`(?i)zero[-_ ]?stage[ =:_]*0\b|zero-0\b`)
	// tpDegree also reads Megatron-DeepSpeed's mp_size and the older
	// --model-parallel-size (its tensor-parallel degree).
	tpDegree = regexp.MustCompile(`(?i)(?:^|[^a-z_/])(?:tp[ =:_-]?|tensor[-_ ]model[-_ ]parallel[-_ ]size[ =:]+|tensor[-_ ]parallel[-_ ](?:size|degree)[ =:]+|(?:mp|model[-_ ]parallel)[-_ ]size(?: \([^)]*\))?[ =:]+)(\d+)`)
	epDegree = regexp.MustCompile(`(?i)(?:^|[^a-z])(?:ep[ =:_-]?|expert[-_ ]model[-_ ]parallel[-_ ]size[ =:]+|expert[-_ ]parallel[-_ ](?:size|degree)[ =:]+)(\d+)`)
	ppDegree = regexp.MustCompile(`(?i)(?:^|[^a-z_/])(?:pp[ =:_-]?|pipeline[-_ ]model[-_ ]parallel[-_ ]size[ =:]+|pipeline[-_ ]parallel[-_ ](?:size|degree)[ =:]+)(\d+)`)
	// cpDegree finds a context- or sequence-parallel degree: "cp2",
	// "cp_size 2", "context_parallel_degree=8", "sequence_parallel_size=4"
	// (xtuner, LLaMA-Factory, ms-swift: Ulysses), "sp8", "ulysses_degree
	// 4", "splits each sequence across 4 GPUs". Megatron's boolean
	// sequence_parallel (with TP) has no number and is not one.
	cpDegree = regexp.MustCompile(`(?i)(?:^|[^a-z])(?:cp[ =:_]?|cp[-_]size[ =:]+|context[-_ ]parallel(?:[-_ ](?:size|degree))?[ =:]+|sequence[-_ ]parallel[-_ ](?:size|degree)[ =:]+|ulysses[-_ ](?:size|degree)[ =:]+|sp)(\d+)|splits? (?:each|every|the) sequence (?:across|over) (?:the |all )?(\d+) (?:GPU|device)`)
)

// explicitTorchAdamW finds a note that sets the Trainer's optimizer to
// adamw_torch (optim="adamw_torch", --optim adamw_torch), not the fused one.
var explicitTorchAdamW = regexp.MustCompile(`(?i)(?:optim[ =:'"]+|--optim\s+)adamw_torch(?:[^_a-z]|$)`)

// evalBatch finds an evaluation batch in a note: "per_device_eval_batch_size
// 8", "eval_batch_size=2", "eval batch 8".
var evalBatch = regexp.MustCompile(`(?i)(?:per_device_eval_batch_size|eval_batch_size|eval batch(?: size)?)[ =:]*(\d+)`)

// sessionLen: lmdeploy's session_len as a note or id states it
// ("session_len开了8200", "--session-len 4096", "sess8200").
var sessionLen = regexp.MustCompile(`(?i)(?:session[_ -]?len[^0-9]{0,8}|(?:^|-)sess)(\d{3,7})`)

// mtpID and mtpNote: a serving row that drafts with the model's MTP layers.
var (
	mtpID   = regexp.MustCompile(`(?i)(?:^|-)mtp\d*(?:-|$)`)
	mtpNote = regexp.MustCompile(`(?i)"method"\s*:\s*"(?:mtp|\w+_mtp)"|method[ =:]+mtp\b|speculative[-_ ]algorithm[ =]+(?:nextn|eagle)\b`)
)

// doraID: a row id that names a DoRA run (peft use_dora; QDoRA).
var doraID = regexp.MustCompile(`(?i)(?:^|-)q?dora(?:-|$)`)

// tiledMLP: the note quotes a tiled MLP switched on (Unsloth's
// unsloth_tiled_mlp = True, ArcticTraining's tiled_mlp: true).
var tiledMLP = regexp.MustCompile(`(?i)tiled_mlp\s*[=:]\s*true`)

// evalSteps: the note says the Trainer evaluates during the run
// (eval_strategy / evaluation_strategy "steps" or "epoch").
var evalSteps = regexp.MustCompile(`(?i)eval(?:uation)?_strategy[ =:]*["']?(?:steps|epoch)`)

// contextDegree is the row's context-parallel degree when its note (or
// id) names one that divides its devices, or every device for a ring
// named without one; 0 otherwise.
func contextDegree(r map[string]string) int {
	d := atoi0(r["devices"])
	n := parallelDegree(cpDegree, r)
	if n == 0 {
		// The kernels column names the split too (ulysses-sp8, zigzag-ring-sp8).
		n = parallelDegree(cpDegree, map[string]string{"note": r["kernels"]})
	}
	if n > 0 {
		if d > 0 && d%n == 0 {
			return n
		}
		return 0
	}
	if ringAttention.MatchString(r["note"]) {
		return d // a ring over every process (EasyContext's parallel_mode)
	}
	return 0
}

// ringAttention: a ring-attention mode named without a degree.
var ringAttention = regexp.MustCompile(`(?i)ring_attn|ring attention`)

// parallelDegree is the degree re finds in the row's note when the note
// names one value, else the one its id names; 0 when neither names one.
func parallelDegree(re *regexp.Regexp, r map[string]string) int {
	for _, text := range []string{r["note"], r["id"]} {
		seen := map[int]bool{}
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if n := atoi0(strings.Join(m[1:], "")); n > 0 { // the one group that matched
				seen[n] = true
			}
		}
		if len(seen) == 1 {
			for n := range seen {
				return n
			}
		}
		// A note that names several (a baseline beside the row's own
		// layout) leaves the row's degree to its id, which names only the
		// row's; an id that names several is no answer either.
	}
	return 0
}

func atoi0(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

// toCase maps a row to the planner's input, or says why it cannot.
func (w *corpusWorld) toCase(r memRow, needDevice bool) (corpusCase, string) {
	c := corpusCase{id: r["id"], source: r["source"], counter: r["counter"], holdout: corpusHoldout(r["source"]), ran: r["outcome"] == "ran", seqKind: r["seq_kind"]}
	c.perDeviceTotal = r["per_device"] == "total"
	if v := r["peak_gib"]; v != "" {
		c.measuredGiB, _ = strconv.ParseFloat(v, 64)
	}
	in := &c.in
	mode, ok := oomsim.Parse(r["mode"], oomsim.Modes)
	if !ok {
		return c, "mode " + r["mode"]
	}
	in.Mode = mode
	m, why := w.model(r["model"])
	if why != "" {
		return c, why
	}
	in.Model = m
	c.devices = max(1, atoi0(r["devices"]))
	in.Devices = c.devices
	t, known, why := w.target(r["device"], c.devices)
	if why != "" {
		return c, why
	}
	if needDevice && !known {
		return c, "device memory not stated"
	}
	in.Target = t
	in.BatchSize = max(1, atoi0(r["batch"]))
	in.SeqLen = atoi0(r["seq"])
	if in.SeqLen == 0 && !needDevice {
		// A measured figure needs its sequence; an outcome without one is
		// planned with the planner's default, as a user who gives none.
		return c, "sequence length not stated"
	}
	if st, ok := oomsim.ParseStack(strings.TrimPrefix(r["stack"], "other:")); ok {
		in.Stack = st
	}
	if in.Stack == oomsim.StackVLLM && strings.Contains(r["note"], "kv_cache_memory_bytes") {
		// vLLM's pool given in bytes replaces the memory share: devctl
		// sizes the pool by the share and has no input for it.
		return c, "vLLM KV cache size given in bytes (kv_cache_memory_bytes)"
	}
	in.StackVersion = stackVersion(in.Stack, r["stack_version"], r["date"])
	// The torch release: as the row states it, else the one current on
	// its date.
	if f := strings.Fields(r["torch_version"]); len(f) > 0 {
		in.TorchVersion = f[0]
	}
	if in.TorchVersion == "" || in.TorchVersion[0] < '0' || in.TorchVersion[0] > '9' {
		in.TorchVersion = ""
		if r["date"] != "" {
			in.TorchVersion = releaseOnDate(torchReleases, r["date"])
		}
	}
	// Weights and the precision regime.
	compute := r["compute"]
	switch w := r["weights"]; {
	case w == "fp32" && strings.HasPrefix(compute, "amp-"):
		in.Precision, in.Mixed = capability.Precision(strings.TrimPrefix(compute, "amp-")), oomsim.MixedAMP
	case w == "fp32":
		in.Precision = capability.FP32
	case w == "bf16", w == "fp16":
		in.Precision = capability.Precision(w)
		switch {
		case mode != oomsim.Training:
		case compute == "bf16-true" || compute == "fp16-true":
			in.Mixed = oomsim.MixedPure
		case strings.HasPrefix(compute, "amp-") && !oomsim.ProfileOf(in.Stack).PureHalf:
			in.Mixed = oomsim.MixedAMP
		case strings.HasPrefix(compute, "amp-"):
			// Autocast over the 16-bit weights a PureHalf stack loads
			// (axolotl's and ms-swift's bf16: true): no fp32 copy is
			// made, so the stack's regime stands (fp32 partitions under
			// DeepSpeed ZeRO, 16-bit otherwise).
		}
	case w == "":
		switch compute {
		case "amp-bf16", "amp-fp16":
			in.Precision, in.Mixed = capability.Precision(strings.TrimPrefix(compute, "amp-")), oomsim.MixedAMP
		case "bf16-true", "fp16-true":
			in.Precision, in.Mixed = capability.Precision(strings.TrimSuffix(compute, "-true")), oomsim.MixedPure
		case "fp32":
			in.Precision = capability.FP32
		case "":
			// Unstated weights: a 16-bit checkpoint, except where the
			// stack's usual download fixes them (Ollama's default tag),
			// which devctl's own default then gives.
			if oomsim.ProfileOf(in.Stack).PulledPrecision == "" || mode != oomsim.Inference {
				in.Precision = capability.BF16
			}
		default:
			in.Precision = capability.BF16
		}
	case w == "nf4", w == "fp4", w == "int4":
		in.Precision, in.Quant = capability.Int4, oomsim.QuantBnB
	case w == "int8":
		in.Precision, in.Quant = capability.Int8, oomsim.QuantBnB
	case w == "int4-autoround":
		// AutoRound exports GPTQ's packing at 4 bits, group 128.
		in.Precision, in.Quant = capability.Int4, oomsim.QuantGPTQ
	case w == "hqq4", w == "aqlm2":
		// HQQ's default group of 64 with an fp16 scale and zero; AQLM
		// 1x16 codes over 8 weights (hfquant.go sizes both from a config).
		in.Precision, in.Quant, in.WeightBits = capability.Int4, oomsim.QuantGPTQ, map[string]float64{"hqq4": 4.5, "aqlm2": 2}[w]
	case w == "gptq3-g128":
		in.Precision, in.Quant, in.WeightBits = capability.Int4, oomsim.QuantGPTQ, 3+19.0/128
	case w == "mxfp4" && in.Stack == oomsim.StackOllama:
		// Ollama's gpt-oss build: MXFP4 experts, BF16 elsewhere (as
		// devctl reads the gpt-oss tags).
		in.Precision = capability.BF16
	case w == "gptq4", w == "awq4", w == "mxfp4", strings.HasPrefix(w, "exl"), strings.HasPrefix(w, "gptq4-g"):
		in.Precision, in.Quant = capability.Int4, oomsim.QuantGPTQ
		if g, ok := strings.CutPrefix(w, "gptq4-g"); ok {
			// A stated group size: 4 bits plus a 16-bit scale and a 4-bit
			// zero per group (128 is the format's default).
			if n, err := strconv.ParseFloat(g, 64); err == nil && n > 0 {
				in.WeightBits = 4 + 20/n
			}
		}
		if m := bpw.FindStringSubmatch(w); m != nil {
			in.WeightBits, _ = strconv.ParseFloat(m[1], 64) // EXL2/EXL3 state bits per weight
		}
	case strings.HasPrefix(w, "int4-g"):
		// Weight-only int4 with a stated group (gpt-fast, torchchat,
		// torchao int4wo): 4 bits plus a bf16 scale and zero per group.
		n, err := strconv.ParseFloat(strings.TrimPrefix(w, "int4-g"), 64)
		if err != nil || n <= 0 {
			return c, "weights format " + w
		}
		in.Precision, in.Quant, in.WeightBits = capability.Int4, oomsim.QuantGPTQ, 4+32/n
	case w == "gptq8":
		in.Precision, in.Quant = capability.Int8, oomsim.QuantGPTQ
	case w == "gptq3", w == "gptq2", w == "uint4", w == "uint2", w == "fp6", w == "nvfp4", strings.HasSuffix(w, "bpw"):
		// Formats --quant does not name, planned as a user would with
		// --weight-bits: GPTQ N bits plus a 16-bit scale and an N-bit zero
		// per group of 128; torchao's int4/int2 weight-only with a bf16
		// scale and zero per 128; fp6 (one scale per channel); NVFP4's fp8
		// scale per 16; a stated bits-per-weight.
		bits := map[string]float64{"gptq3": 3 + 16.0/128 + 3.0/128, "gptq2": 2 + 16.0/128 + 2.0/128,
			"uint4": 4 + 32.0/128, "uint2": 2 + 32.0/128, "fp6": 6, "nvfp4": 4 + 8.0/16}[w]
		if b, ok := strings.CutSuffix(strings.TrimPrefix(w, "int"), "bpw"); ok {
			bits, _ = strconv.ParseFloat(b, 64)
		}
		if bits <= 0 {
			return c, "weights format " + w
		}
		in.Precision, in.Quant, in.WeightBits = capability.Int4, oomsim.QuantGPTQ, bits
		if bits > 4.5 {
			in.Precision = capability.Int8
		}
	case w == "fp8":
		in.Precision, in.Quant = capability.Int8, oomsim.QuantFP8
	case w == "gguf-f16", w == "gguf-bf16":
		// An unquantised GGUF: the 16-bit weights.
		in.Precision = map[string]capability.Precision{"gguf-f16": capability.FP16, "gguf-bf16": capability.BF16}[w]
	case strings.HasPrefix(w, "gguf-q8_0"):
		in.Precision, in.Quant = capability.Int8, oomsim.QuantGGUF
	case strings.HasPrefix(w, "gguf"):
		// The type as --quant reads it (Unsloth's UD-IQ3_XXS and
		// UD-Q6_K_XL as their base types).
		in.Precision, in.Quant = capability.Int4, oomsim.QuantGGUF
		if bits, class, ok := oomsim.GGUFTypeBits(strings.TrimPrefix(w, "gguf-")); ok {
			in.Precision, in.WeightBits = class, bits
		}
	case strings.HasPrefix(w, "mlx-q"):
		// mlx-qN[-gG]: N bits plus an fp16 scale and bias per group of G
		// (64 by default).
		var bits, group float64 = 0, 64
		spec := strings.TrimPrefix(w, "mlx-q")
		n, g, _ := strings.Cut(spec, "-g")
		bits, _ = strconv.ParseFloat(n, 64)
		if g != "" {
			group, _ = strconv.ParseFloat(g, 64)
		}
		in.Precision, in.Quant = capability.Int4, oomsim.QuantMLX
		if bits > 4 {
			in.Precision = capability.Int8
		}
		in.WeightBits = bits + 32/group
	default:
		return c, "weights format " + w
	}
	if mode == oomsim.QLoRA && in.Precision != capability.Int4 {
		in.Precision = capability.Int4
	}
	if mode == oomsim.Training && (in.Precision == capability.Int8 || in.Precision == capability.Int4) {
		return c, "full training of quantised weights"
	}
	if r["optimizer"] == "none" && mode.Trains() {
		// A forward and backward without the optimizer's step (a
		// profiling exercise): devctl plans whole training steps.
		return c, "no optimizer step (forward and backward only)"
	}
	switch o := r["optimizer"]; o {
	case "galore", "galore-adamw8bit":
		in.Optimizer, in.GaLoreRank = galoreFromNote(o, r["note"])
	default:
		opt, ok := corpusOptimizers[o]
		if !ok {
			return c, "optimizer " + o
		}
		in.Optimizer = opt
		if o == "adamw" && oomsim.ProfileOf(in.Stack).Trainer && !explicitTorchAdamW.MatchString(r["note"]) {
			// "adamw" under the Trainer is its default optimizer unless
			// the note names adamw_torch as set: planned as the stack's
			// default (fused AdamW from transformers 4.54 on PyTorch 2.8).
			in.Optimizer = ""
		}
	}
	g, group, _ := strings.Cut(r["grad_ckpt"], ":")
	switch g {
	case "full":
		in.Recompute = oomsim.RecomputeFull
		if n, err := strconv.Atoi(group); err == nil && n > 1 {
			in.RecomputeLayers = n // "full:N": a checkpoint spans N blocks
		}
	case "offload":
		in.Recompute = oomsim.RecomputeOffload
	case "selective":
		in.Recompute = oomsim.RecomputeSelective
	case "none":
		in.Recompute = oomsim.RecomputeNone
	}
	if a := r["attention"]; a != "" {
		in.Attention = oomsim.AttentionSDPA
		if pa, ok := oomsim.ParseAttention(a); ok {
			in.Attention = pa
		}
	}
	if r["objective"] == "rl" {
		if why := grpoFromRow(in, r); why != "" {
			return c, why
		}
	} else {
		in.Objective = oomsim.Objective(r["objective"])
	}
	if in.Mode == oomsim.Inference {
		in.PromptLen = min(atoi0(r["prompt"]), in.SeqLen)
	}
	k := r["kernels"]
	in.OptimizerInBackward = strings.Contains(k, "optimizer-in-b")
	in.Compiled = strings.Contains(k, "compile")
	in.FusedKernels = strings.Contains(k, "liger") // its RMSNorm and SwiGLU; its loss below
	in.TiledMLP = strings.Contains(k, "tiled-mlp") || tiledMLP.MatchString(r["note"])
	// Serving with the checkpoint's multi-token-prediction layers as the
	// draft: an id that says mtp (-mtp-, -mtp3-), or a note that quotes
	// the method.
	if mode == oomsim.Inference && oomsim.RunsMTP(in.Stack) && in.Model.MTPLayers > 0 && (mtpID.MatchString(r["id"]) || mtpNote.MatchString(r["note"])) {
		in.Speculative = oomsim.SpeculativeMTP
	}
	// DoRA runs say so in their id (-dora-, -qdora-) or their kernels.
	in.DoRA = (mode == oomsim.LoRA || mode == oomsim.QLoRA) && (doraID.MatchString(r["id"]) || strings.Contains(k, "dora"))
	switch {
	case strings.Contains(k, "liger"), strings.Contains(k, "cut-ce"), strings.Contains(k, "fused-ce"), strings.Contains(k, "unsloth"):
		in.Loss = oomsim.LossFused
	case strings.Contains(k, "chunked-ce"):
		in.Loss = oomsim.LossChunked
	case strings.Contains(k, "full-ce"):
		in.Loss = oomsim.LossFull
	}
	switch {
	case strings.Contains(k, "kv-int8"), strings.Contains(k, "kv-cache-8bit"), strings.Contains(k, "kv-fp8"):
		in.KVBits = 8 // an int8 or fp8 cache (vLLM --kv-cache-dtype fp8)
	case strings.Contains(k, "kv-cache-q4/"):
		// K and V at different widths: not one --kv-bits.
	case strings.Contains(k, "kv-cache-q4"), strings.Contains(k, "kv-q4"):
		in.KVBits = 4 // llama.cpp/Ollama q4_0 K and V
	case strings.Contains(k, "kv-cache-q6"):
		in.KVBits = 6 // ExLlama's Q6 cache (TabbyAPI cache_mode Q6)
	}
	if rk := atoi0(r["lora_r"]); rk > 0 {
		in.LoRARank = rk
	}
	switch lt := r["lora_targets"]; {
	case lt == "qv" || lt == "":
	case lt == "qkvo":
		in.LoRATargets = oomsim.LoRAQKVO
	case lt == "all-linear" || strings.Count(lt, ",") >= 4 || strings.Contains(lt, "mlp") || strings.Contains(lt, "w1"):
		in.LoRATargets = oomsim.LoRAAllLinear
	default:
		in.LoRATargets = oomsim.LoRAQKVO
	}
	sh := r["sharding"]
	tpN, ppN, epN := parallelDegree(tpDegree, r), parallelDegree(ppDegree, r), parallelDegree(epDegree, r)
	if !strings.Contains(sh, "tp") {
		tpN = 0
	}
	if !strings.Contains(sh, "pp") {
		ppN = 0
	}
	if !strings.Contains(sh, "ep") {
		epN = 0
	}
	if d := atoi0(r["devices"]); d > 0 && (d%(max(tpN, 1)*max(ppN, 1)) != 0 || (d/max(ppN, 1))%max(epN, 1) != 0) {
		tpN, ppN, epN = 0, 0, 0
	}
	switch {
	case mode.Trains() && (tpN > 0 || ppN > 0 || epN > 0):
		// The degrees the row's note (or id) gives (TP2, pp4, ep8,
		// --tensor-model-parallel-size 2): ZeRO over what they leave.
		in.TensorParallel = tpN == 0 && strings.Contains(sh, "tp")
		in.TensorParallelDegree, in.PipelineStages, in.ExpertParallel = tpN, ppN, epN
		if in.Model.ExpertParams() == 0 {
			in.ExpertParallel = 0 // experts devctl does not know of: split like the rest
		}
		switch {
		case strings.Contains(sh, "fsdp"), strings.Contains(sh, "zero3"):
			in.ZeROStage = 3
		case strings.Contains(sh, "zero2"):
			in.ZeROStage = 2
		case strings.Contains(sh, "zero1"):
			in.ZeROStage = 1
		case zeroStageNone.MatchString(r["note"]):
			in.ZeROStage = -1 // stated: the replicas keep whole states (no distributed optimizer)
		}
	case strings.Contains(sh, "tp") && mode.Trains():
		in.TensorParallel = true
	case strings.HasPrefix(sh, "fsdp"), sh == "zero3", sh == "tp", sh == "pp", sh == "device-map":
		in.ZeROStage = 3
	case sh == "zero2":
		in.ZeROStage = 2
	case sh == "zero1":
		in.ZeROStage = 1
	case sh == "ddp", sh == "none":
		in.ZeROStage = -1 // stated: replicated, whatever the stack's default
	}
	if strings.Contains(sh, "fsdp") && oomsim.ProfileOf(in.Stack).Trainer {
		in.FSDP = true // PyTorch FSDP under a Trainer stack, as --fsdp
	}
	if in.Devices == 1 {
		// One device: the ZeRO stage goes to Recommend as --zero-stage
		// does, which keeps what a stage still does there (ZeRO-3's
		// parameter offload and 4-bit loading, ZeRO-1's whole gradients
		// under offloaded states) and drops the rest; model parallelism
		// has nothing to split.
		in.TensorParallel, in.TensorParallelDegree, in.PipelineStages, in.ExpertParallel = false, 0, 0, 0
	}
	// Megatron's sequence parallelism, where the row states it, as
	// --sequence-parallel does.
	switch text := r["note"] + " " + r["id"]; {
	case seqParallelOff.MatchString(text):
		in.SequenceParallel = oomsim.SwitchOff
	case seqParallelOn.MatchString(text):
		in.SequenceParallel = oomsim.SwitchOn
	}
	// PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, where the row's
	// note quotes it, as --expandable-segments.
	in.ExpandableSegments = expandable.MatchString(r["note"])
	if mode.Trains() {
		// An evaluation forward inside the run, at the batch the note
		// states (per_device_eval_batch_size, eval batch 8).
		in.EvalBatch = quotedInt(evalBatch, r["note"])
		if in.EvalBatch == 0 && evalSteps.MatchString(r["note"]) {
			in.EvalBatch = 8 // the Trainer's per_device_eval_batch_size default
		}
	}
	if cp := contextDegree(r); mode.Trains() && cp > 1 && !in.TensorParallel && in.Devices%(max(in.TensorParallelDegree, 1)*max(in.PipelineStages, 1)*cp) == 0 {
		in.ContextParallel = cp
	}
	switch r["offload"] {
	case "optimizer":
		in.Offload = oomsim.OffloadCPU
	case "params", "both":
		in.Offload = oomsim.OffloadCPU
		in.OffloadParams = in.ZeROStage == 3
		if mode == oomsim.Inference && (in.Stack == oomsim.StackLlamaCpp || in.Stack == oomsim.StackOllama) {
			// Part of the layers on the device (llama.cpp's -ngl,
			// Ollama's num_gpu), as --gpu-layers says it; the experts of
			// the first N blocks on the host (--n-cpu-moe N, --cpu-moe).
			n, moe := gpuLayers(r["note"]), cpuMoE(r["note"])
			if n > 0 || moe > 0 {
				in.Offload, in.GPULayers, in.CPUMoELayers = oomsim.OffloadNone, n, moe
			}
		}
	default:
		in.Offload = oomsim.OffloadNone
	}
	if mode == oomsim.Inference && oomsim.ProfileOf(in.Stack).ChunkFlag != "" {
		in.PrefillChunk = quotedInt(localChunk, r["note"])
	}
	if oomsim.ProfileOf(in.Stack).Preallocates > 0 && mode == oomsim.Inference {
		// A serving row's batch is the engine's max_num_seqs, a cap on
		// what it schedules; it starts when one max_model_len sequence
		// fits its KV cache. Its memory share is the row's own setting.
		// lmdeploy before v0.1 (TurboMind 1.0) holds no share: each
		// sequence served at once gets its session_len of cache.
		if !oomsim.KVPerSequenceEngine(in.Stack, in.StackVersion) {
			in.BatchSize = 1
		} else if m := sessionLen.FindStringSubmatch(r["note"] + " " + r["id"]); m != nil {
			// Each sequence gets the whole session_len, whatever it holds.
			in.SeqLen = atoi0(m[1])
		}
		if m := gpuUtil.FindStringSubmatch(r["note"]); m != nil {
			in.Prealloc, _ = strconv.ParseFloat(m[1], 64)
		}
		// The engine's max_num_seqs and prefill budget, when the note
		// quotes one value of each (--max-num-seqs, --max-num-batched-tokens);
		// else max_num_seqs is the row's batch, which the corpus records
		// as the engine's max_num_seqs (a note quoting the default beside
		// the row's own value quotes two).
		in.MaxNumSeqs = quotedInt(maxNumSeqs, r["note"])
		if b := atoi0(r["batch"]); in.MaxNumSeqs == 0 && b > 0 {
			in.MaxNumSeqs = b
		}
		in.PrefillTokens = quotedInt(prefillTokens, r["note"])
		switch {
		case in.Stack == oomsim.StackLMDeploy && quotedInt(kvBlocks, r["note"]) > 0 && !oomsim.VersionBelow(in.StackVersion, 0, 1):
			// Blocks of cache_block_seq_len tokens: 128 in TurboMind's
			// model config until v0.2.1, 64 in its engine config after.
			// Before v0.1 the count was of whole sessions, allocated as
			// they came.
			block := 64
			if oomsim.VersionBelow(in.StackVersion, 0, 2) || in.StackVersion == "0.2.0" || in.StackVersion == "0.2.1" {
				block = 128
			}
			in.KVCacheTokens = quotedInt(kvBlocks, r["note"]) * block
		case in.Stack == oomsim.StackSGLang:
			in.KVCacheTokens = quotedInt(kvTokens, r["note"])
		}
	}
	in.Convention = oomsim.Devctl
	in.ModelSource = "corpus"
	return c, ""
}

// bpw reads an EXL2/EXL3 rate ("exl2-2.65bpw").
var bpw = regexp.MustCompile(`([0-9.]+)bpw$`)

// stackVersion is the row's stack version: the one it states, else the
// release current on the row's date where a term changed between releases
// (transformers 4.45 on 2024-09-25, vLLM 0.8 on 2025-03-18), else "" (the
// current release).
func stackVersion(st oomsim.Stack, stated, date string) string {
	dist := oomsim.ProfileOf(st).Dist
	// A bare release is the stack's own: it is the distribution's (the
	// release devctl's terms key on) except for the stacks devctl knows to
	// run on transformers under their own numbers (DeepSpeed 0.19,
	// LLaMA-Factory 0.9, axolotl 0.4), whose transformers release comes
	// from the date. A stack devctl does not know ("other:autoawq 0.1.6")
	// keeps its bare release, read as the one the terms key on, as since
	// the harness began: the AutoAWQ README rows are then planned as their
	// 2023 benchmark ran, eager and with generate's full logits.
	own := dist != "transformers" || st == oomsim.StackHF || st == oomsim.StackAuto || st == ""
	if v := strings.TrimSpace(stated); v != "" && v[0] >= '0' && v[0] <= '9' && own {
		return strings.Fields(v)[0]
	}
	// "transformers 4.43.3", "peft 0.19.2.dev0; transformers 5.13.1":
	// the release of the distribution the stack's terms depend on.
	for _, part := range strings.Split(stated, ";") {
		if f := strings.Fields(part); len(f) == 2 && dist != "" && f[0] == dist && f[1][0] >= '0' && f[1][0] <= '9' {
			return f[1]
		}
	}
	if date == "" || st == "" {
		return "" // a stack devctl does not know: its release says nothing here
	}
	switch dist {
	case "vllm":
		if date < "2025-03-18" {
			return "0.7"
		}
	case "transformers":
		return releaseOnDate(transformersReleases, date)
	case "ollama":
		return releaseOnDate(ollamaReleases, date)
	case "llama.cpp":
		return releaseOnDate(llamaCppReleases, date)
	case "lmdeploy":
		return releaseOnDate(lmdeployReleases, date)
	case "text-generation-server":
		return releaseOnDate(tgiReleases, date)
	case "torchtune":
		if date < "2024-12-20" {
			return "0.4"
		}
	case "mlx-lm":
		if date < "2025-05-14" {
			return "0.22.1" // before 0.24.1, the first release with a causal prompt mask mlx fuses
		}
	case "unsloth":
		if date < "2024-11-17" {
			return "2024.10" // before Cut Cross Entropy (2024.11): the loss over materialised 16-bit logits
		}
	case "trl":
		switch {
		case date < "2025-08-05":
			return "0.20" // before 0.21, which needs transformers 4.55 (the fused-AdamW default)
		case date < "2025-08-29":
			return "0.21"
		case date < "2026-06-25":
			return "1.6"
		}
	}
	return ""
}

// The releases whose terms differ (tag dates, read with git log on the
// projects' tags): before each date, the release named with it was current.
var (
	transformersReleases = [][2]string{{"2023-12-11", "4.35"}, {"2024-01-21", "4.36"}, {"2024-02-21", "4.37"}, {"2024-03-20", "4.38"},
		{"2024-04-18", "4.39"}, {"2024-05-17", "4.40"}, {"2024-06-27", "4.41"}, {"2024-07-23", "4.42"}, {"2024-08-06", "4.43"},
		{"2024-09-25", "4.44"}, {"2024-10-24", "4.45"}, {"2024-12-05", "4.46"}, {"2025-01-10", "4.47"}, {"2025-03-21", "4.49"},
		{"2025-07-25", "4.53"}, {"2026-01-26", "4.57"}}
	// torchReleases: PyTorch 2.8 (2025-08-06), from which transformers'
	// Trainer defaults to fused AdamW.
	torchReleases    = [][2]string{{"2025-08-06", "2.7"}, {"9999-12-31", "2.8"}}
	ollamaReleases   = [][2]string{{"2024-07-07", "0.1.48"}, {"2025-04-30", "0.6.6"}, {"2025-07-30", "0.9.6"}, {"2025-10-09", "0.12.3"}, {"2025-12-15", "0.13.3"}, {"2026-02-05", "0.15.4"}}
	lmdeployReleases = [][2]string{{"2023-12-18", "0.0.14"}, {"2024-01-31", "0.2.1"}}
	llamaCppReleases = [][2]string{{"2025-08-30", "b6326"}}
	tgiReleases      = [][2]string{{"2024-04-12", "1.4"}, {"2024-12-09", "2.4"}}
)

// releaseOnDate is the release current on a date, "" after the last
// listed change.
func releaseOnDate(releases [][2]string, date string) string {
	for _, r := range releases {
		if date < r[0] {
			return r[1]
		}
	}
	return ""
}

// figure is devctl's prediction for the row's counter, in GiB, on the
// row's terms (per device, or summed over the devices).
func (c corpusCase) figure(r *Result) float64 {
	m := r.Memory
	var b int64
	switch c.counter {
	case "max_allocated", "allocated", "framework-log", "vllm-profile":
		b = m.PeakAllocatedBytes
	case "nvidia-smi":
		b = m.TotalBytes
	case "weights-kv":
		// A serving engine's log of its weights and its KV cache
		// (vLLM's "model weights take" and "KV cache" lines).
		b = m.WeightsBytes + m.KVCacheBytes
	default: // max_reserved, reserved, unknown
		b = m.ReservedBytes
	}
	g := float64(b) / float64(1<<30)
	if c.perDeviceTotal {
		g *= float64(c.devices)
	}
	return g
}

type corpusStats struct {
	errs    []float64 // (predicted - measured) / measured
	sources map[string][]float64
}

func (s *corpusStats) add(source string, e float64) {
	s.errs = append(s.errs, e)
	if s.sources == nil {
		s.sources = map[string][]float64{}
	}
	s.sources[source] = append(s.sources[source], e)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func absAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Abs(x)
	}
	return out
}

func within(xs []float64, tol float64) float64 {
	n := 0
	for _, x := range xs {
		if math.Abs(x) <= tol {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

// summary is the figures the issue asks for: median absolute error, the
// share within 15%, the median signed error (bias), and the same with
// every source weighted equally (the median of the per-source medians,
// and the share of a source's rows within 15%, averaged over sources), so
// a few large sources do not stand for the whole split.
func (s *corpusStats) summary() string {
	if len(s.errs) == 0 {
		return "no rows"
	}
	var perSource []float64
	var withinShare float64
	for _, es := range s.sources {
		perSource = append(perSource, median(absAll(es)))
		withinShare += within(es, 0.15)
	}
	share := within(s.errs, 0.15)
	in15 := int(math.Round(share * float64(len(s.errs))))
	return fmt.Sprintf("%d rows from %d sources: median |error| %.1f%%, within 15%%: %.0f%% (%d), median error %+.1f%%; per source (median of medians) %.1f%%, within 15%% %.0f%%",
		len(s.errs), len(s.sources), 100*median(absAll(s.errs)), 100*share, in15, 100*median(s.errs), 100*median(perSource), 100*withinShare/float64(len(s.sources)))
}

type corpusResult struct {
	train, holdout corpusStats
	// bound* count the rows whose sequence is a truncation limit: devctl's
	// figure at that limit should not be below the measurement.
	boundTrain, boundHoldout [2]int // rows, and of them those not below the measurement by more than 15%
	// inBand counts the exact-length rows whose measurement the band
	// holds, of all of them, by split (training, holdout).
	inBand, banded [2]int
	// spread is the training split's errors by kind of run, with their
	// sources, to refit oomsim.errorSpread.
	spread  map[string][]sourcedError
	skipped map[string]int
	misses  []string
}

func runMeasured(t testing.TB) corpusResult {
	w := newCorpusWorld(t)
	res := corpusResult{skipped: map[string]int{}, spread: map[string][]sourcedError{}}
	type miss struct {
		e    float64
		line string
	}
	var misses []miss
	for _, r := range readTSV(t, "measured.tsv") {
		c, why := w.toCase(r, false)
		if why == "" && c.measuredGiB <= 0 {
			why = "no measured figure"
		}
		if why != "" {
			res.skipped[why]++
			continue
		}
		out, err := Recommend(c.in)
		if err != nil {
			res.skipped["planner: "+err.Error()]++
			continue
		}
		got := c.figure(out)
		e := (got - c.measuredGiB) / c.measuredGiB
		if c.seqKind == "max" {
			// The sequence is an upper limit: the figure at that limit
			// bounds the run from above, so only an estimate below the
			// measurement (by more than 15%) is a miss.
			bound := &res.boundTrain
			if c.holdout {
				bound = &res.boundHoldout
			}
			bound[0]++
			if e >= -0.15 {
				bound[1]++
			} else if !c.holdout {
				m := out.Memory
				misses = append(misses, miss{e, fmt.Sprintf("%+6.0f%% %-48s %-13s %7.2f GiB measured, %7.2f predicted at the limit [w %.1f g %.1f o %.1f a %.1f l %.1f kv %.1f buf %.1f] %s %s %s",
					100*e, c.id, c.counter, c.measuredGiB, got, gib(m.WeightsBytes), gib(m.GradientsBytes), gib(m.OptimizerBytes),
					gib(m.ActivationsBytes), gib(m.LogitsBytes), gib(m.KVCacheBytes), gib(m.BuffersBytes), c.in.Mode, out.Plan.Stack, out.Plan.Precision)})
			}
			continue
		}
		split := 0
		if c.holdout {
			split = 1
		}
		if m := out.Memory; m.TotalBytes > 0 {
			lo := got * float64(m.Band.LowBytes) / float64(m.TotalBytes)
			hi := got * float64(m.Band.HighBytes) / float64(m.TotalBytes)
			res.banded[split]++
			if c.measuredGiB >= lo*0.999 && c.measuredGiB <= hi*1.001 {
				res.inBand[split]++
			}
		}
		if c.holdout {
			res.holdout.add(c.source, e)
			continue
		}
		res.train.add(c.source, e)
		k := spreadKind(out.Plan)
		res.spread[k] = append(res.spread[k], sourcedError{c.source, e})
		m := out.Memory
		misses = append(misses, miss{e, fmt.Sprintf("%+6.0f%% %-48s %-13s %7.2f GiB measured, %7.2f predicted [w %.1f g %.1f o %.1f a %.1f l %.1f kv %.1f buf %.1f] %s %s %s",
			100*e, c.id, c.counter, c.measuredGiB, got, gib(m.WeightsBytes), gib(m.GradientsBytes), gib(m.OptimizerBytes),
			gib(m.ActivationsBytes), gib(m.LogitsBytes), gib(m.KVCacheBytes), gib(m.BuffersBytes), c.in.Mode, out.Plan.Stack, out.Plan.Precision)})
	}
	sort.Slice(misses, func(i, j int) bool { return math.Abs(misses[i].e) > math.Abs(misses[j].e) })
	for _, m := range misses {
		res.misses = append(res.misses, m.line)
	}
	return res
}

func gib(b int64) float64 { return float64(b) / float64(1<<30) }

// sourcedError is one run's signed error and its source.
type sourcedError struct {
	source string
	e      float64
}

// spreadKind is oomsim.errorSpread's kind of run.
func spreadKind(p oomsim.Plan) string {
	switch {
	case p.Mode.Trains():
		return "training"
	case oomsim.ProfileOf(p.Stack).Preallocates > 0:
		return "serving"
	case p.Stack == oomsim.StackLlamaCpp || p.Stack == oomsim.StackOllama:
		return "llama.cpp/ollama"
	}
	return "inference"
}

// weightedQuantile is the q-quantile of the errors with each source
// weighing one in all (each of its n rows 1/n).
func weightedQuantile(xs []sourcedError, q float64) float64 {
	n := map[string]int{}
	for _, x := range xs {
		n[x.source]++
	}
	s := slices.Clone(xs)
	sort.Slice(s, func(i, j int) bool { return s[i].e < s[j].e })
	acc, total := 0.0, float64(len(n))
	for _, x := range s {
		acc += 1 / float64(n[x.source])
		if acc >= q*total {
			return x.e
		}
	}
	return s[len(s)-1].e
}

// TestCorpusMeasuredPeaks compares devctl's figure for each measured run's
// counter with the measurement. Training misses are printed; the holdout
// only as figures.
func TestCorpusMeasuredPeaks(t *testing.T) {
	res := runMeasured(t)
	t.Logf("training split: %s", res.train.summary())
	t.Logf("holdout split:  %s", res.holdout.summary())
	t.Logf("rows whose sequence is a truncation limit (figure must not fall below the measurement): training %d of %d, holdout %d of %d",
		res.boundTrain[1], res.boundTrain[0], res.boundHoldout[1], res.boundHoldout[0])
	t.Logf("band holds the measurement: training %d of %d, holdout %d of %d", res.inBand[0], res.banded[0], res.inBand[1], res.banded[1])
	for _, k := range slices.Sorted(maps.Keys(res.spread)) {
		xs := res.spread[k]
		srcs := map[string]bool{}
		for _, x := range xs {
			srcs[x.source] = true
		}
		t.Logf("band spread (training split, source-weighted p10/p90 of the error): %s %+.3f %+.3f (%d runs, %d sources)",
			k, weightedQuantile(xs, 0.1), weightedQuantile(xs, 0.9), len(xs), len(srcs))
	}
	for why, n := range res.skipped {
		t.Logf("skipped %3d: %s", n, why)
	}
	if testing.Verbose() {
		for _, src := range slices.Sorted(maps.Keys(res.train.sources)) {
			es := res.train.sources[src]
			t.Logf("training source %-40s %3d rows: median |error| %5.1f%%, median error %+6.1f%%", src, len(es), 100*median(absAll(es)), 100*median(es))
		}
		for _, m := range res.misses {
			t.Log(m)
		}
	}
}

// corpusOptimizers maps the corpus's optimizer column to devctl's: the
// fused and per-parameter-loop (CS336's own) AdamW have no state-sized
// foreach temporary at the step; 4-bit and fp8 AdamW are counted as 8-bit.
var corpusOptimizers = map[string]oomsim.Optimizer{
	"": oomsim.AdamW, "none": oomsim.AdamW, "adamw": oomsim.AdamW, "adam": oomsim.AdamW,
	"adamw-fused": oomsim.AdamWFused, "adamw-loop": oomsim.AdamWFused,
	"paged-adamw-32bit": oomsim.PagedAdamW, "paged-adamw-8bit": oomsim.PagedAdamW8bit,
	"adamw-8bit": oomsim.AdamW8bit, "adamw-4bit": oomsim.AdamW8bit, "adamw-fp8": oomsim.AdamW8bit,
	"sgd": oomsim.SGD, "adafactor": oomsim.Adafactor, "lion": oomsim.Lion, "muon": oomsim.Muon,
	"lomo": oomsim.LOMO, "adalomo": oomsim.AdaLomo, "badam": oomsim.BAdam,
}

// galoreFromNote reads a GaLore row's variant and rank from its note, where
// the collectors copied the command line: the 8-bit states
// (galore_adamw8bit, "GaLore 8-bit"), the per-layer step (layerwise,
// _per_layer) and --rank / galore_rank.
func galoreFromNote(optimizer, note string) (oomsim.Optimizer, int) {
	eight := optimizer == "galore-adamw8bit" || regexp.MustCompile(`(?i)galore[ _-]?(adamw)?[ _-]?8-?bit`).MatchString(note)
	layerwise := regexp.MustCompile(`(?i)layerwise|per_layer`).MatchString(note)
	opt := map[[2]bool]oomsim.Optimizer{
		{false, false}: oomsim.GaLore, {true, false}: oomsim.GaLore8bit,
		{false, true}: oomsim.GaLoreLayerwise, {true, true}: oomsim.GaLore8bitLayerwise,
	}[[2]bool{eight, layerwise}]
	rank := 0
	if m := regexp.MustCompile(`(?i)(?:galore[_-]rank|--rank)[ =]+(\d+)`).FindStringSubmatch(note); m != nil {
		rank = atoi0(m[1])
	}
	return opt, rank
}

// rlSetting matches the key=value settings a collector copied into an RL
// row's note: the structured "rl:" line and Python keyword arguments
// (GRPOConfig(max_prompt_length=256, ...)).
var rlSetting = regexp.MustCompile(`\b([a-z_]+)=([A-Za-z0-9_.\-]+)`)

// grpoFromRow plans an RL row as devctl's --objective grpo when it is a
// GRPO run of TRL's GRPOTrainer (Unsloth's GRPO is that trainer), reading
// the rollout engine, the KL coefficient, the prompt and completion
// lengths and the generation batch from its note; other algorithms and
// frameworks (PPO with its critic, verl, OpenRLHF, ...) are not planned.
func grpoFromRow(in *Input, r memRow) string {
	kv := map[string]string{}
	for _, m := range rlSetting.FindAllStringSubmatch(r["note"], -1) {
		kv[m[1]] = strings.ToLower(strings.TrimRight(m[2], ".,"))
	}
	framework := kv["framework"]
	if framework == "" {
		framework = strings.TrimPrefix(r["stack"], "other:")
	}
	if framework != "trl" && framework != "unsloth" {
		return "RL run outside TRL's GRPOTrainer (verl, OpenRLHF, ms-swift, mlx, ...): devctl plans TRL's GRPO only"
	}
	if algo := kv["algo"]; algo != "" && algo != "grpo" && algo != "dapo" && algo != "gspo" {
		return "RL algorithm " + algo + ": devctl plans GRPO only"
	}
	in.Objective = oomsim.ObjectiveGRPO
	num := func(keys ...string) float64 {
		for _, k := range keys {
			if v, err := strconv.ParseFloat(kv[k], 64); err == nil {
				return v
			}
		}
		return 0
	}
	in.NumGenerations = int(num("num_generations"))
	if v := kv["trl_version"]; v != "" && in.Stack == oomsim.StackTRL && in.StackVersion == "" {
		in.StackVersion = v // before 0.15 the batch counts prompts
	}
	prompt, completion := int(num("max_prompt_length")), int(num("max_completion_length"))
	if in.SeqLen == 0 && prompt > 0 && completion > 0 {
		in.SeqLen = prompt + completion
	}
	if prompt > 0 && prompt < in.SeqLen {
		in.PromptLen = prompt
	}
	switch {
	case kv["use_vllm"] == "true" || kv["fast_inference"] == "true":
		in.Rollout = oomsim.RolloutVLLMColocate
		if kv["vllm_mode"] == "server" {
			in.Rollout = oomsim.RolloutVLLMServer
		}
	default:
		in.Rollout = oomsim.RolloutHF
	}
	if share := num("vllm_gpu_memory_utilization", "gpu_memory_utilization"); share > 0 && share < 1 {
		in.RolloutShare = share
	}
	in.RolloutSleep = kv["sleep_mode"] == "true" || kv["vllm_enable_sleep_mode"] == "true"
	in.KLBeta = -1
	if _, ok := kv["beta"]; ok {
		in.KLBeta = num("beta")
	}
	if kv["ref_model"] == "no" {
		in.KLBeta = 0
	}
	if steps := num("steps_per_generation", "grad_accum", "gradient_accumulation_steps"); steps > 1 {
		in.RolloutSteps = int(steps) // steps_per_generation defaults to the accumulation
	}
	return ""
}

// TestCorpusOutcomes compares devctl's verdict (fits) with what happened:
// a run reported to work, or to go out of memory.
func TestCorpusOutcomes(t *testing.T) {
	w := newCorpusWorld(t)
	var agree, total [2]int
	skipped := map[string]int{}
	var misses []string
	for _, r := range readTSV(t, "outcomes.tsv") {
		c, why := w.toCase(r, true)
		if why != "" {
			skipped[why]++
			continue
		}
		out, err := Recommend(c.in)
		if err != nil {
			skipped["planner: "+err.Error()]++
			continue
		}
		split := 0
		if c.holdout {
			split = 1
		}
		total[split]++
		if out.Fits == c.ran {
			agree[split]++
			continue
		}
		if split == 0 {
			m := out.Memory
			misses = append(misses, fmt.Sprintf("MISS %-44s reported %-3s devctl fits=%-5v %7.2f GiB of %7.2f [w %.1f g %.1f o %.1f a %.1f l %.1f kv %.1f] %s %s %s b%d s%d x%d",
				c.id, map[bool]string{true: "ran", false: "oom"}[c.ran], out.Fits, gib(m.TotalBytes), gib(m.UsableBytes),
				gib(m.WeightsBytes), gib(m.GradientsBytes), gib(m.OptimizerBytes), gib(m.ActivationsBytes), gib(m.LogitsBytes), gib(m.KVCacheBytes),
				c.in.Mode, out.Plan.Stack, out.Plan.Precision, c.in.BatchSize, c.in.SeqLen, c.in.Devices))
		}
	}
	pct := func(a, n int) float64 { return 100 * float64(a) / float64(max(n, 1)) }
	t.Logf("outcomes, training split: %d of %d agree (%.1f%%)", agree[0], total[0], pct(agree[0], total[0]))
	t.Logf("outcomes, holdout split:  %d of %d agree (%.1f%%)", agree[1], total[1], pct(agree[1], total[1]))
	for why, n := range skipped {
		t.Logf("skipped %3d: %s", n, why)
	}
	if testing.Verbose() {
		for _, m := range misses {
			t.Log(m)
		}
	}
}
