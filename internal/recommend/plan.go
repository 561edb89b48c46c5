package recommend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/hfhub"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/suggest"
	"github.com/devctl/devctl/internal/units"
	"github.com/devctl/devctl/internal/userfile"
)

// ErrInput marks a request that cannot be planned because of what the user
// gave (an unknown model or device, a malformed config.json, a Hub model
// that cannot be read). The CLI maps it to exit 2; the message is meant to
// be shown as it is.
var ErrInput = errors.New("bad input")

type inputError struct{ err error }

func (e *inputError) Error() string        { return e.err.Error() }
func (e *inputError) Unwrap() error        { return e.err }
func (e *inputError) Is(target error) bool { return target == ErrInput }

func inputf(format string, args ...any) error {
	return &inputError{err: fmt.Errorf(format, args...)}
}

// MaxConfigBytes bounds a config.json: a few KB (with a big id2label, a
// few hundred), so a wrong path (a checkpoint, /dev/zero) is not read
// whole.
const MaxConfigBytes = 4 << 20

// ModelSpec names the model to plan for: exactly one of Params (a size such
// as "7B"), Name (a catalogue name or a Hugging Face ORG/NAME) or Config (a
// config.json, or a model directory holding one).
type ModelSpec struct {
	Params string
	Name   string
	Config string
}

// Given counts the ways the spec names a model (valid specs name one).
func (m ModelSpec) Given() int {
	n := 0
	for _, s := range []string{m.Params, m.Name, m.Config} {
		if s != "" {
			n++
		}
	}
	return n
}

// Settings are the configured device settings a plan honours, with where
// each came from (config.Source strings: "default", "flag --precision").
type Settings struct {
	Precision       capability.Precision
	PrecisionSource string
	Strategy        oomsim.Strategy
	StrategySource  string
	Fraction        float64
	FractionSource  string
	Fallback        bool
}

// Request is one question to the planner: a model, how it runs, and on
// what. Zero values take the documented defaults.
type Request struct {
	Model ModelSpec
	Run   RunSettings
	// Device is a catalogued device name (configs/devices.yaml) or a
	// size (24GiB: a generic GPU of that memory), or "" for this
	// machine's probed device (Deps.Probe decides which).
	Device string
	// Probed is a backend or device id the user named (--device cuda:1)
	// for this machine's probe: unlike the configured default device, a
	// named one that is not there is an input error, never a fallback.
	Probed string
	// DeviceMemory, when set, replaces the device's memory (a card the
	// catalogue has in another size, a MIG slice, a cloud instance's
	// reported figure).
	DeviceMemory int64
	Settings     Settings
}

// RunSettings are the run's own choices (the recommend flags, or what
// devctl run read from a job). Empty choices take the stack's defaults
// (oomsim.Profile).
type RunSettings struct {
	Mode      oomsim.Mode
	BatchSize int
	SeqLen    int
	Optimizer oomsim.Optimizer
	Recompute oomsim.Recompute
	// RecomputeLayers is the blocks a checkpoint spans (oomsim.Plan's).
	RecomputeLayers int
	// Attention is auto, eager or sdpa (oomsim.Attentions).
	Attention     oomsim.Attention
	Convention    oomsim.Convention
	Offload       oomsim.Offload
	OffloadParams bool
	// FSDP: the sharding is PyTorch FSDP under a Trainer stack (oomsim.Plan's).
	FSDP bool
	// ZeROStage is 1, 2 or 3; 0 takes the stack's default over several
	// devices (FULL_SHARD for fsdp, ZeRO-2 for deepspeed, none for the
	// rest); -1 is plain data parallel whatever the stack.
	ZeROStage int
	Devices   int

	// Stack is the framework (oomsim.Stacks); its profile fills the
	// choices below that are empty.
	Stack        oomsim.Stack
	StackVersion string
	// TorchVersion is PyTorch's release when known (stated or probed).
	TorchVersion string
	Mixed        oomsim.MixedPrecision
	Loss         oomsim.Loss
	LoRARank     int
	LoRATargets  oomsim.LoRATargets
	LoRALayers   int
	DoRA         bool
	// GaLoreRank is a GaLore optimizer's projection rank (0: the default).
	GaLoreRank int
	Quant      oomsim.QuantFormat
	WeightBits float64
	// GPULayers is llama.cpp's -ngl (Ollama's num_gpu): the layer slots
	// on the device; 0 is all.
	GPULayers int
	// CPUMoELayers is llama.cpp's --n-cpu-moe: the blocks whose routed
	// experts stay in host memory.
	CPUMoELayers int
	// KVBits is the KV cache's element width when it is quantised (8 for
	// fp8 or int8, 4 for q4_0); 0 is the compute dtype.
	KVBits   int
	Prealloc float64
	// MaxNumSeqs and PrefillTokens are a serving engine's max_num_seqs and
	// prefill budget (max_num_batched_tokens); 0 takes the engine's.
	MaxNumSeqs int
	// KVCacheTokens sizes a serving engine's KV cache by tokens
	// (--kv-cache-tokens; 0: its memory share).
	KVCacheTokens int
	PrefillTokens int
	// PrefillChunk is the prompt tokens one forward of a local engine
	// evaluates (--prefill-chunk: llama.cpp's --ubatch-size, Ollama's
	// num_batch, mlx-lm's --prefill-step-size); 0 takes the engine's.
	PrefillChunk int
	// Speculative is --speculative: "mtp" or "" (none).
	Speculative string
	// TensorParallel splits every matrix and the activations over the
	// devices (Megatron/torchtitan tensor + sequence parallel) instead of
	// sharding model states (ZeROStage).
	TensorParallel bool
	// TensorParallelDegree and PipelineStages are Megatron-style model
	// parallelism: each matrix split over TensorParallelDegree devices
	// (0 with TensorParallel: every device of a stage), the blocks over
	// PipelineStages (0 or 1: none); the devices left are data-parallel
	// replicas, over which ZeROStage shares out the states.
	TensorParallelDegree int
	PipelineStages       int
	// SequenceParallel is Megatron's sequence parallelism with tensor
	// parallelism: on, off, or "" for the stack's default.
	SequenceParallel oomsim.Switch
	// ExpertParallel splits a mixture of experts' routed experts over this
	// many devices of a pipeline stage (0 or 1: like the rest).
	ExpertParallel int
	// ContextParallel splits each training sequence by tokens over this
	// many devices (context parallelism, ring attention, DeepSpeed-Ulysses
	// sequence parallelism; 0 or 1: none).
	ContextParallel int
	// EvalBatch is an evaluation forward's batch between training steps
	// (0: none).
	EvalBatch int
	// OptimizerInBackward: each parameter steps as soon as its gradient
	// is ready (torchtune's optimizer_in_bwd; oomsim.Plan's). No flag sets
	// it; the corpus harness does for the runs that state it.
	OptimizerInBackward bool
	Compiled            bool
	// ExpandableSegments: the allocator reuses any freed block (oomsim.Plan's);
	// ExpandableFrom says where that was read ("": --expandable-segments).
	ExpandableSegments bool
	ExpandableFrom     string
	// FusedKernels: Liger's RMSNorm and SwiGLU; TiledMLP: a tiled MLP
	// (oomsim.Plan's).
	FusedKernels bool
	TiledMLP     bool
	// Objective is the training objective (sft, dpo, kto, orpo, simpo,
	// cpo, grpo).
	Objective oomsim.Objective
	// PromptLen is the prompt's share of SeqLen when serving or in a GRPO
	// step (0: all).
	PromptLen int
	// GRPO is a GRPO step's settings (--objective grpo).
	GRPO
	// Max asks for the largest batch, sequence or concurrency that fits.
	Max MaxKind
}

// withDefaults fills what the recommend flags default to, so a request
// built in code (devctl run) plans as the command does.
func (r RunSettings) withDefaults() RunSettings {
	r.Mode = or(r.Mode, oomsim.Inference)
	r.Attention = or(r.Attention, oomsim.AttentionAuto)
	r.Convention = or(r.Convention, oomsim.Devctl)
	r.Stack = or(r.Stack, oomsim.StackAuto)
	r.Offload = or(r.Offload, oomsim.OffloadNone)
	r.BatchSize, r.Devices = max(r.BatchSize, 1), max(r.Devices, 1)
	return r
}

// ExpandableFromEnv reads whether PyTorch's CUDA allocator will run with
// expandable segments from the environment the run inherits:
// PYTORCH_ALLOC_CONF (PyTorch 2.9's name, read first) or
// PYTORCH_CUDA_ALLOC_CONF, comma-separated key:value options, as
// c10's allocator config parses them ("expandable_segments:True").
// from is the variable and its option, for the reason line.
func ExpandableFromEnv(lookup func(string) (string, bool)) (on bool, from string) {
	for _, name := range []string{"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"} {
		v, ok := lookup(name)
		if !ok {
			continue
		}
		for _, opt := range strings.Split(v, ",") {
			key, val, _ := strings.Cut(opt, ":")
			if strings.TrimSpace(key) == "expandable_segments" {
				return strings.TrimSpace(val) == "True", name + "=expandable_segments:" + strings.TrimSpace(val)
			}
		}
		return false, "" // the first variable set is the one PyTorch reads
	}
	return false, ""
}

// or is v, or def when v is empty.
func or[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

// Deps are what Plan reads from outside: the probe of this machine, the
// run history, files and the Hugging Face Hub. The command layer fills
// them; tests pass fakes.
type Deps struct {
	// Probe probes this machine with the configured device preference.
	Probe func(ctx context.Context) (*probe.Report, error)
	// History reads the per-device run history (nil: none).
	History func() (history.Records, error)
	// ReadFile reads a config.json or safetensors index a spec names, at
	// most limit bytes.
	ReadFile func(path string, limit int64) ([]byte, error)
	// Hub says where Hugging Face models are looked up.
	Hub hfhub.Options
}

// Plan answers a request: it resolves the model and the device, makes
// every decision and estimates the memory. recommend and run both plan
// through it, so `devctl run --model X` starts with exactly the
// environment `devctl recommend --model X -o env` prints.
func Plan(ctx context.Context, req Request, deps Deps) (*Result, error) {
	model, source, err := LoadModel(ctx, req.Model, deps)
	if err != nil {
		return nil, err
	}
	var target Target
	var chosenWhy string
	var probed *probe.Report
	if req.Device != "" {
		ref, ok, err := CatalogueDevice(req.Device)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, inputf("%q is not a catalogued device", req.Device)
		}
		target, chosenWhy = TargetFromCatalogue(ref.Device, req.Run.Devices), ref.ReadAs
		if ref.Memory > 0 {
			target = resized(target, ref.Memory, fmt.Sprintf("--device %q gives", req.Device))
			target.Display += fmt.Sprintf(", with %s as --device names it", units.Bytes(ref.Memory).Format(units.GiB, 0))
		}
	} else if target, chosenWhy, probed, err = probedTarget(ctx, deps, req.Run.Devices, req.Probed); err != nil {
		return nil, err
	}
	if req.DeviceMemory > 0 {
		target = resized(target, req.DeviceMemory, "--device-memory")
	}
	// Planning for this machine, its history is read once: what the
	// self-test found the device cannot run outranks its rules.
	var recs history.Records
	var recsErr error
	var selfTestWhy []string
	if probed != nil && deps.History != nil {
		recs, recsErr = deps.History()
		failed := SelfTestFailures(recs, target.Backend)
		for _, p := range capability.Precisions {
			if why, ok := failed[p]; ok && target.Support.Has(p) {
				target.Support = target.Support.Without(p)
				if target.Excluded == nil {
					target.Excluded = map[capability.Precision]string{}
				}
				target.Excluded[p] = why
				selfTestWhy = append(selfTestWhy, why)
			}
		}
	}
	r := req.Run.withDefaults()
	s := req.Settings
	// Planning for this machine, what is installed says which stack runs
	// and how large the CUDA context is.
	var stackWhy, runtimeWhy string
	var eager bool
	if _, _, ok := OllamaModel(req.Model.Name); ok && (r.Stack == oomsim.StackAuto || r.Stack == "") {
		r.Stack, stackWhy = oomsim.StackOllama, "--model "+req.Model.Name+" is an Ollama tag: planned as Ollama runs it (--stack for another)"
	}
	if probed != nil {
		if r.Stack == oomsim.StackAuto || r.Stack == "" {
			r.Stack, stackWhy = StackFromSoftware(probed.Software, r.Mode)
		}
		if r.StackVersion == "" {
			r.StackVersion = StackVersionFromSoftware(probed.Software, r.Stack)
		}
		if r.TorchVersion == "" {
			r.TorchVersion = TorchVersionFromSoftware(probed.Software)
		}
		eager, runtimeWhy = EagerCUDAModules(probed.Software)
	}
	in := Input{
		RunSettings: r,
		Model:       model, ModelSource: source, Precision: s.Precision, PrecisionSource: s.PrecisionSource,
		Target: target, CPUFallback: s.Fallback, EagerCUDAModules: eager,
		Pinned: oomsim.Pinned{Attention: r.Attention != oomsim.AttentionAuto, Stack: r.Stack != oomsim.StackAuto, Mixed: r.Mixed != "", Recompute: r.Recompute != ""},
	}

	in.SetStrategy(s.Strategy, s.Fraction, s.StrategySource, s.FractionSource)
	res, err := Recommend(in)
	if err != nil {
		return nil, err
	}
	if chosenWhy != "" {
		res.Reasons = append([]Reason{{Decision: "device", Choice: target.Name, Why: chosenWhy}}, res.Reasons...)
	}
	if stackWhy != "" {
		res.Reasons = append(res.Reasons, Reason{Decision: "stack", Choice: string(r.Stack), Why: stackWhy})
	}
	if runtimeWhy != "" {
		res.Reasons = append(res.Reasons, Reason{Decision: "runtime", Choice: "eager CUDA modules", Why: runtimeWhy})
	}
	for _, why := range selfTestWhy {
		res.Reasons = append(res.Reasons, Reason{Decision: "selftest", Choice: "precision excluded", Why: why})
	}
	if !res.Device.Catalogue && deps.History != nil {
		if probed == nil {
			recs, recsErr = deps.History()
		}
		AddHistory(res, recs, recsErr)
		// How this machine's measured runs of the model compared with their plans.
		if line := history.PlanComparison(recs, string(res.Device.Backend), res.Model.Params, string(res.Plan.Mode)); line != "" {
			res.Reasons = append(res.Reasons, Reason{Decision: "history", Choice: "measured", Why: line})
		}
	}
	return res, nil
}

// CatalogueDevice looks a --device value up in the device catalogue, as
// ResolveDevice reads names, or takes it as a size (24GiB). ok is false
// (and err nil) for a name that is a probed backend or id (cuda, cuda:1,
// cpu); a name that is neither is an ErrInput error listing the catalogue,
// with the closest name when there is one. A leading count ("2x RTX
// 3090") is the caller's to take off first (SplitDeviceCount).
func CatalogueDevice(name string) (ref DeviceRef, ok bool, err error) {
	if name == "" {
		return DeviceRef{}, false, nil
	}
	devices, err := builtinDevices()
	if err != nil {
		return DeviceRef{}, false, err
	}
	if d, ok := FindDevice(devices, name); ok {
		return DeviceRef{Device: d}, true, nil
	}
	if mem, err := units.ParseDeviceMemory(name); err == nil {
		return DeviceRef{Device: GenericDevice(int64(mem))}, true, nil
	}
	if _, perr := backend.ParsePreference(name); perr == nil {
		return DeviceRef{}, false, nil // this machine's (cpu, cuda:1): never a catalogue chip
	}
	if ref, ok, err := ResolveDevice(devices, name); ok || err != nil {
		return ref, ok, err
	}
	names := DeviceNames(devices)
	if s := suggest.Closest(name, names); s != "" {
		return DeviceRef{}, false, inputf("invalid --device %q: did you mean %q? (catalogued: %s; or a probed id such as cuda:1)", name, s, strings.Join(names, ", "))
	}
	return DeviceRef{}, false, inputf("invalid --device %q: want a probed backend or id (cuda, cuda:1, cpu, ...) or a catalogued device (%s)", name, strings.Join(names, ", "))
}

// GenericDevice is a GPU known only by its memory (--device 24GiB): taken
// as a CUDA GPU of compute capability 8.0 (bf16, int8 and 4-bit run), with
// the catalogue's rule for usable memory (98.5% of the total).
func GenericDevice(mem int64) CatalogDevice {
	gib := float64(mem) / float64(units.GiB)
	return CatalogDevice{Name: units.Bytes(mem).Format(units.GiB, 0) + "-gpu", Display: "a " + units.Bytes(mem).Format(units.GiB, 0) + " GPU (assumed CUDA, compute capability 8.0)",
		Backend: backend.CUDA, ComputeCapability: "8.0", TotalGiB: gib, UsableGiB: gib * usableShare,
		UsableSource: "ESTIMATED: 98.5% of the total, the share PyTorch reports on the catalogue's measured cards", Source: "--device " + units.Bytes(mem).Format(units.GiB, 0)}
}

// usableShare is what PyTorch reports of a card's memory on the cards
// whose figure was read (T4, A100-40GB, A100-80GB): the catalogue's rule.
const usableShare = 0.985

// resized is t with mem as its memory (--device-memory, or a size the
// --device name gives); from names which.
func resized(t Target, mem int64, from string) Target {
	t.TotalBytes = mem
	t.UsableBytes = int64(float64(mem) * usableShare)
	if t.Backend == backend.MPS || t.Backend == backend.CPU {
		// Metal's recommendedMaxWorkingSetSize: about 2/3 of unified
		// memory up to 36 GB, 3/4 above (the catalogue's Apple rule).
		t.UsableBytes = mem * 2 / 3
		if mem > 36*int64(units.GiB) {
			t.UsableBytes = mem * 3 / 4
		}
	}
	t.UsableNote = from + " " + units.Bytes(mem).Format(units.GiB, 2) + ": usable estimated at 98.5% of a GPU's memory (Apple unified memory: 2/3 up to 36 GB, 3/4 above)"
	if t.FreeBytes > t.UsableBytes {
		t.FreeBytes = 0
	}
	return t
}

// probedTarget probes the machine for the device to plan for, and says why
// it was chosen.
func probedTarget(ctx context.Context, deps Deps, devices int, named string) (Target, string, *probe.Report, error) {
	if deps.Probe == nil {
		return Target{}, "", nil, errors.New("no probe to plan for this machine")
	}
	rep, err := deps.Probe(ctx)
	if err != nil {
		return Target{}, "", nil, err
	}
	if sel := rep.Selection; named != "" && sel != nil && sel.FellBack && sel.Requested != backend.Auto {
		ids := make([]string, 0, len(rep.Devices))
		for _, d := range rep.Devices {
			ids = append(ids, d.ID)
		}
		return Target{}, "", nil, inputf("invalid --device %q: this machine has no such device (found: %s); want one of those, a catalogued device such as a100-80gb, or a size such as 24GiB", named, strings.Join(ids, ", "))
	}
	target, err := TargetFromProbe(rep)
	if err != nil {
		return Target{}, "", nil, err
	}
	var why string
	if rep.Selection != nil {
		why = rep.Selection.Reason
		if !rep.Selection.FellBack {
			why = "probed: " + why
		}
	}
	if devices > max(target.Count, 1) {
		return Target{}, "", nil, inputf("invalid --devices %d: this machine has %d %s device(s); plan for more with a catalogued device (--device a100-80gb --devices %d)", devices, max(target.Count, 1), target.Backend, devices)
	}
	if devices > 1 {
		target.Count = devices
	}
	return target, why, rep, nil
}

// LoadModel resolves a model spec: a bare size, a catalogue entry, a
// Hugging Face model (local cache first, then the Hub), or a config.json.
// It returns the model and where it came from.
func LoadModel(ctx context.Context, spec ModelSpec, deps Deps) (oomsim.Model, string, error) {
	switch {
	case spec.Params != "":
		n, err := ParseParams(spec.Params)
		if err != nil {
			return oomsim.Model{}, "", inputf("invalid --model-params %q: %w", spec.Params, err)
		}
		return oomsim.Model{Name: FormatParams(n) + " parameters", Params: n}, "--model-params", nil
	case spec.Name != "":
		models, err := builtinModels()
		if err != nil {
			return oomsim.Model{}, "", err
		}
		m, err := FindModel(models, spec.Name)
		if err == nil {
			return m.Model(), "catalogue", nil
		}
		if id, st, ok := OllamaModel(spec.Name); ok { // never ORG/NAME: a tag has no "/"
			// An Ollama library tag (llama3.1:8b): the model it packages,
			// stored as the tag says.
			m, source, err := LoadModel(ctx, ModelSpec{Name: id}, deps)
			if err != nil {
				return oomsim.Model{}, "", fmt.Errorf("--model %s is Ollama's tag of %s: %w", spec.Name, id, err)
			}
			m.Name, m.Stored = spec.Name, st
			return m, source + "; " + spec.Name + " is Ollama's tag of " + id + " (" + st.From + ")", nil
		}
		if !strings.Contains(spec.Name, "/") {
			// A model devctl keeps a config.json copy of, by its name
			// without the organisation.
			switch ids := builtinByName(spec.Name); len(ids) {
			case 1:
				id, source, data, _ := builtinConfig(ids[0])
				return fromBuiltin(id, source, data, "--model "+spec.Name)
			case 0:
				if m, source, ok := fromReupload(spec.Name, ""); ok {
					return m, source, nil
				}
				return oomsim.Model{}, "", unknownModel(spec.Name, models)
			default:
				return oomsim.Model{}, "", inputf("--model %q is ambiguous: name one of %s", spec.Name, strings.Join(ids, ", "))
			}
		}
		// ORG/NAME: any Hugging Face model, never a catalogue guess.
		files, err := hfhub.Fetch(ctx, spec.Name, deps.Hub)
		var why string
		switch {
		case errors.Is(err, hfhub.ErrOffline):
			why = "the Hub was not reachable and no cache holds it"
		case errors.Is(err, hfhub.ErrGated), errors.Is(err, hfhub.ErrUnauthorized):
			why = "the Hub refused its config.json (" + err.Error() + ")"
		case errors.Is(err, hfhub.ErrNotFound):
			why = "the Hub has no config.json for it (" + err.Error() + ")"
		}
		if why != "" {
			// No config from the Hub or the cache: devctl's own copy, when
			// it keeps one (configs/hub), or of the model a re-upload
			// packages, says so; else how to go on.
			if id, source, data, ok := builtinConfig(spec.Name); ok {
				return fromBuiltin(id, source+"; "+why, data, "--model "+spec.Name)
			}
			if m, source, ok := fromReupload(spec.Name, why); ok {
				return m, source, nil
			}
			if errors.Is(err, hfhub.ErrOffline) {
				return oomsim.Model{}, "", inputf("--model %s: %w; without the Hub, give the model's size instead: --model-params (e.g. 7B), or --model-config with its config.json", spec.Name, err)
			}
		}
		if err != nil {
			return oomsim.Model{}, "", inputf("--model %s: %w", spec.Name, err)
		}
		hm, source, err := fromFiles(spec.Name, "Hugging Face Hub ("+files.From+")", files.Config, files.Index, "--model "+spec.Name)
		hm.Name = spec.Name // the id asked for, not the config's _name_or_path (often a local directory)
		return hm, source, err
	case spec.Config != "":
		if deps.ReadFile == nil {
			return oomsim.Model{}, "", errors.New("no file reader to read --model-config")
		}
		path, index := spec.Config, []byte(nil)
		data, err := deps.ReadFile(path, MaxConfigBytes)
		if errors.Is(err, userfile.ErrDirectory) {
			// A model directory: its config.json, and its index if any.
			path = filepath.Join(spec.Config, hfhub.ConfigFile)
			ixPath := filepath.Join(spec.Config, hfhub.IndexFile)
			ix, ixErr := deps.ReadFile(ixPath, hfhub.DefaultMaxIndex)
			switch {
			case ixErr == nil:
				index = ix
			case !errors.Is(ixErr, fs.ErrNotExist):
				// An index that is there but cannot be read (too large,
				// unreadable, a directory) would size the model wrongly
				// without it: say so rather than ignore it.
				return oomsim.Model{}, "", inputf("--model-config %s: %w", ixPath, ixErr)
			}
			data, err = deps.ReadFile(path, MaxConfigBytes)
		}
		if err != nil {
			return oomsim.Model{}, "", inputf("--model-config %s: %w", path, err)
		}
		return fromFiles(spec.Config, "config.json", data, index, "--model-config "+spec.Config)
	}
	return oomsim.Model{}, "", inputf("give exactly one of --model-params, --model or --model-config")
}

// fromReupload plans a re-upload (unsloth/phi-4-bnb-4bit,
// mlx-community/Qwen3-8B-4bit, Qwen/Qwen3-8B-GGUF) with devctl's copy of the
// config of the model it packages and the storage its name states; why
// says why the Hub's config was not used.
func fromReupload(name, why string) (oomsim.Model, string, bool) {
	base, st, gguf, kin, ok := reuploadOf(name)
	if !ok {
		return oomsim.Model{}, "", false
	}
	id, source, data, ok := builtinConfig(base)
	if !ok {
		return oomsim.Model{}, "", false
	}
	m, source, err := fromBuiltin(id, source, data, "--model "+name)
	if err != nil {
		return oomsim.Model{}, "", false
	}
	m.Name = name
	switch kin {
	case sibling:
		source += "; " + name + " is taken to have the shapes of " + id + ", its base or instruct release"
	case fineTune:
		source += "; " + name + " is taken to be a fine-tune of " + id + ", whose name it contains, with its shapes (give --model-config with the model's own config.json to be sure)"
	default:
		source += "; " + name + " is taken to re-package " + id
	}
	_, nameBase, _ := strings.Cut(name, "/")
	_, idBase, _ := strings.Cut(id, "/")
	if !strings.EqualFold(nameBase, idBase) {
		m.Stored = st // the ending says how it is stored (nil: 16-bit, or a GGUF file's own)
	}
	switch {
	case st != nil:
		source += " (" + st.From + ")"
	case gguf:
		m.Notes = append(m.Notes, "a GGUF repository holds files of several quantisations: give the one you run with --precision 4bit or 8bit and --weight-bits (Q4_K_M 4.85, Q5_K_M 5.69, Q6_K 6.56, Q8_0 8.5), and --stack llama.cpp or ollama")
	}
	if why != "" {
		source += "; " + why
	}
	return m, source, true
}

// fromBuiltin sizes a model from devctl's copy of its config.json; a copy
// that is not the model's own (its base model's, a re-upload's) gives its
// shapes but not how the model is stored.
func fromBuiltin(id, source string, data []byte, flag string) (oomsim.Model, string, error) {
	m, source, err := fromFiles(id, source, data, nil, flag)
	m.Name = id // a copy's _name_or_path can be where its author kept it
	if err == nil && !builtinOwn(id) {
		m.Stored = nil
	}
	return m, source, err
}

// fromFiles sizes a model from config.json and its optional index.
func fromFiles(name, source string, config, index []byte, flag string) (oomsim.Model, string, error) {
	var total int64
	if index != nil {
		ix, err := hfhub.ParseIndex(index)
		if err != nil {
			return oomsim.Model{}, "", inputf("%s: %w", flag, err)
		}
		total = *ix.Metadata.TotalSize
	}
	m, notes, err := ModelFromFiles(name, config, total)
	if err != nil {
		return oomsim.Model{}, "", inputf("%s: %w", flag, err)
	}
	if m.Name == "" || strings.Count(m.Name, "/") > 1 || strings.ContainsAny(m.Name[:1], "/.~\\") || strings.Contains(m.Name, ":") {
		// No _name_or_path, or one that is where the config's author kept
		// the model (/home/..., ./out, C:\models): the name given.
		m.Name = name
	}
	m.Notes = append(m.Notes, notes...)
	return m, source, nil
}
