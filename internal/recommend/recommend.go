// Package recommend answers "will this model fit, in what precision, with
// what settings, and what to do when it won't". It takes values (a model,
// a target device, the effective settings) and returns a Result; it never
// prints and never reads flags, config or the environment.
package recommend

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/units"
)

// ErrContradiction marks a request the device or mode cannot honour
// (--precision 4bit on a TPU, 8-bit weights for full training). The CLI
// maps it to exit 2.
var ErrContradiction = errors.New("contradictory request")

// Target is the device a recommendation is for.
type Target struct {
	Name      string          `json:"name"`
	Display   string          `json:"display"`
	Backend   backend.Backend `json:"backend"`
	Index     int             `json:"index"`
	Catalogue bool            `json:"catalogue"`
	// TotalBytes is the memory on the device; UsableBytes what a framework
	// gets; FreeBytes what is free now (probed devices; 0 = unknown).
	TotalBytes  int64  `json:"total_bytes"`
	UsableBytes int64  `json:"usable_bytes"`
	FreeBytes   int64  `json:"free_bytes,omitempty"`
	UsableNote  string `json:"usable_source,omitempty"`
	Shared      bool   `json:"shared"`
	// Unified: the device shares its memory with the host (the
	// catalogue's unified devices, Apple silicon and MI300A, and every
	// MPS device), set where the target is built.
	Unified bool `json:"unified,omitempty"`
	// Count is how many devices of this kind the plan may use.
	Count     int                `json:"count"`
	HostBytes int64              `json:"host_memory_bytes,omitempty"`
	Support   capability.Support `json:"-"`
	// Excluded are precisions the rules grant but this machine's
	// self-test could not run, each with why (SelfTestFailures).
	Excluded map[capability.Precision]string `json:"-"`
	Backends []string                        `json:"-"`
	Peak     *CatalogDevice                  `json:"peak,omitempty"`
}

// SharedThreshold: a probed accelerator whose free memory is below this
// share of its total is held by other processes.
const SharedThreshold = 0.90

// TargetFromCatalogue builds a target for planning without the hardware.
func TargetFromCatalogue(d CatalogDevice, devices int) Target {
	if devices < 1 {
		devices = 1
	}
	peak := d
	return Target{Name: d.Name, Display: d.Display, Backend: d.Backend, Catalogue: true,
		TotalBytes: gibBytes(d.TotalGiB), UsableBytes: gibBytes(d.UsableGiB), UsableNote: d.UsableSource,
		Count: devices, Support: capability.Evaluate(d.Facts()), Peak: &peak, Unified: d.Unified || d.Backend == backend.MPS}
}

func gibBytes(g float64) int64 { return int64(math.Round(g * float64(oomsim.GiB))) }

// TargetFromProbe builds a target from the probe report's chosen device
// (report.Selection / Summary.DefaultDevice).
func TargetFromProbe(rep *probe.Report) (Target, error) {
	chosen := rep.Summary.DefaultDevice
	if rep.Selection != nil && rep.Selection.Chosen != "" {
		chosen = rep.Selection.Chosen
	}
	var dev *probe.Device
	for i := range rep.Devices {
		if rep.Devices[i].ID == chosen || (dev == nil && string(rep.Devices[i].Backend) == chosen) {
			dev = &rep.Devices[i]
		}
	}
	host := hostBytes(rep.Host)
	if dev == nil {
		// No device at all: plan for the host.
		if host == 0 {
			return Target{}, errors.New("the probe found no device and no host memory size")
		}
		return Target{Name: "cpu", Display: "host CPU", Backend: "cpu", TotalBytes: host, UsableBytes: host,
			UsableNote: "host memory (probe)", Count: 1, HostBytes: host,
			Support: capability.Evaluate(capability.Facts{Backend: "cpu"})}, nil
	}
	t := Target{Name: dev.ID, Display: dev.Name, Backend: dev.Backend, Index: dev.Index, HostBytes: host, Unified: dev.Backend == backend.MPS}
	facts := capability.Facts{Backend: dev.Backend, CPUFeatures: dev.Features}
	if dev.ComputeCapability != nil {
		facts.ComputeCapability = *dev.ComputeCapability
	}
	if dev.Architecture != nil {
		facts.Generation = *dev.Architecture
	}
	ev := capability.Evaluate(facts)
	// The probe's own answers win; 4-bit comes from the rules table.
	t.Support = capability.Support{FP16: dev.SupportsFP16, BF16: dev.SupportsBF16, Int8: dev.Supports8Bit, FP8: dev.SupportsFP8, Int4: ev.Int4, Reasons: ev.Reasons}
	if dev.Backend == "cpu" {
		t.TotalBytes, t.UsableBytes, t.UsableNote = host, host, "host memory (probe: MemTotal, capped by the cgroup limit)"
		if rep.Host.MemoryAvailMB != nil {
			t.FreeBytes = mibBytes(*rep.Host.MemoryAvailMB)
		}
	} else {
		if dev.TotalMemoryMB != nil {
			if *dev.TotalMemoryMB > maxDeviceMiB {
				return Target{}, fmt.Errorf("the probe reported %d MiB for %s, more than any device has; plan with a catalogued device (--device a100-80gb, --device cpu-64gb)", *dev.TotalMemoryMB, dev.ID)
			}
			t.TotalBytes = mibBytes(*dev.TotalMemoryMB)
			t.UsableBytes = t.TotalBytes
			t.UsableNote = "total reported by the driver (PyTorch may see slightly less)"
		}
		if dev.FreeMemoryMB != nil {
			t.FreeBytes = mibBytes(*dev.FreeMemoryMB)
			t.Shared = t.TotalBytes > 0 && float64(t.FreeBytes) < SharedThreshold*float64(t.TotalBytes)
		}
	}
	for _, d := range rep.Devices {
		if d.Backend == dev.Backend && d.Usable() {
			t.Count++
		}
	}
	if t.UsableBytes <= 0 {
		what := dev.ID + "'s memory size"
		if dev.Backend == "cpu" {
			what = "the host's memory size"
		}
		return Target{}, fmt.Errorf("the probe did not report %s; plan with a catalogued device (--device a100-80gb, --device cpu-64gb)", what)
	}
	return t, nil
}

// maxDeviceMiB (1 PiB) is more memory than any one device has: a probe
// answer above it is a broken driver or a hostile tree, not a plan.
const maxDeviceMiB = 1 << 30

// mibBytes converts a probe's MiB figure to bytes, saturating instead of
// wrapping round for figures no machine has.
func mibBytes(mb int64) int64 {
	if mb > math.MaxInt64/oomsim.MiB {
		return math.MaxInt64 / oomsim.MiB * oomsim.MiB
	}
	return mb * oomsim.MiB
}

func hostBytes(h probe.HostInfo) int64 {
	var b int64
	if h.MemoryTotalMB != nil {
		b = mibBytes(*h.MemoryTotalMB)
	}
	if h.MemoryLimitMB != nil && *h.MemoryLimitMB > 0 && (b == 0 || mibBytes(*h.MemoryLimitMB) < b) {
		b = mibBytes(*h.MemoryLimitMB)
	}
	return b
}

// Input is everything a recommendation depends on: the run's own choices
// (RunSettings) and what Plan resolved for them (the model, the precision,
// the memory strategy, the device).
type Input struct {
	RunSettings
	Model       oomsim.Model
	ModelSource string // "catalogue", "config.json", "--model-params"
	// Precision is auto (or empty) or a precision; PrecisionSource says
	// where a non-auto value came from ("flag --precision", "env
	// DEVCTL_PRECISION").
	Precision       capability.Precision
	PrecisionSource string
	// Strategy is empty (choose by model size) or a config strategy with
	// its Fraction and StrategySource.
	Strategy       oomsim.Strategy
	Fraction       float64
	StrategySource string
	Target         Target
	CPUFallback    bool
	// EagerCUDAModules: the torch on this machine loads every CUDA module
	// at start-up (EagerCUDAModules), so the context is the full one.
	EagerCUDAModules bool
	// Pinned says which assumptions the user gave (the band varies the
	// others); the zero value varies all of them.
	Pinned oomsim.Pinned
}

// Reason is one decision and why.
type Reason struct {
	Decision string `json:"decision"`
	Choice   string `json:"choice"`
	Why      string `json:"why"`
}

// Memory is the breakdown with the budgets it is compared to.
type Memory struct {
	oomsim.Breakdown
	// UsableBytes is what the framework can allocate on one device: its
	// usable memory, capped by the memory free now when that is known. The
	// total already holds the runtime overhead (the CUDA context) once, so
	// the two compare directly: this is the "will it run" budget.
	UsableBytes int64 `json:"usable_bytes"`
	// StrategyBytes is UsableBytes times the memory strategy's fraction:
	// the share the strategy advises using, leaving the rest as margin.
	StrategyBytes int64 `json:"strategy_bytes"`
	// Band is the range the total could fall in, with the assumptions that
	// move it most; fits is decided on the total itself.
	Band oomsim.Band `json:"band"`
}

// ModelInfo describes the model in the output.
type ModelInfo struct {
	Name   string       `json:"name"`
	Params int64        `json:"params"`
	Source string       `json:"source"`
	Family string       `json:"family,omitempty"`
	Arch   *oomsim.Arch `json:"arch,omitempty"`
	// Stored is the checkpoint's own quantisation, when it has one.
	Stored *oomsim.StoredWeights `json:"stored_weights,omitempty"`
}

// Result is the recommendation. Field names are the stable JSON schema.
type Result struct {
	Model          ModelInfo            `json:"model"`
	Device         Target               `json:"device"`
	MemoryStrategy oomsim.Strategy      `json:"memory_strategy"`
	MemoryFraction float64              `json:"memory_fraction"`
	Precision      capability.Precision `json:"precision"`
	Memory         Memory               `json:"memory"`
	// Fits answers "will this run": the total (runtime overhead included
	// once) is within what the framework can allocate on each device.
	Fits bool `json:"fits"`
	// WithinStrategy says whether the plan also stays within the memory
	// strategy's fraction (MemoryFraction of UsableBytes): advice, not a
	// limit the run enforces.
	WithinStrategy bool `json:"within_strategy"`
	// HeadroomBytes is UsableBytes minus the total (negative: short by).
	HeadroomBytes int64         `json:"headroom_bytes"`
	Plan          oomsim.Plan   `json:"plan"`
	Ladder        *oomsim.Trace `json:"ladder,omitempty"`
	Env           []envvar.Var  `json:"env"`
	// Max is the answer to --max: the largest batch, sequence length or
	// concurrency that fits.
	Max       *Max      `json:"max,omitempty"`
	Framework Framework `json:"framework"`
	Reasons   []Reason  `json:"reasons"`
}

// Recommend makes every decision and estimates the memory.
func Recommend(in Input) (*Result, error) {
	t := in.Target
	r := &Result{Device: t, Model: ModelInfo{Name: in.Model.Name, Params: in.Model.Params, Source: in.ModelSource, Family: in.Model.Family, Arch: in.Model.Arch, Stored: in.Model.Stored}}
	why := func(d, c, w string) { r.Reasons = append(r.Reasons, Reason{d, c, w}) }
	if in.Objective == oomsim.ObjectiveGRPO && (in.Stack == "" || in.Stack == oomsim.StackAuto) && in.Mode.Trains() {
		in.Stack = oomsim.StackTRL
		why("stack", string(in.Stack), "GRPO runs in TRL's GRPOTrainer (Unsloth's GRPO is that trainer too): its defaults are planned (--stack to name another)")
	}
	if m := in.Model; m.Experts > 0 {
		why("model", "mixture of experts", fmt.Sprintf("%d experts, %d per token: all %s parameters stay resident (memory), %s are active per token (compute)",
			m.Experts, m.ExpertsPerToken, FormatParams(m.Params), FormatParams(m.ActiveParams)))
	}
	for _, n := range in.Model.Notes {
		why("model", in.Model.Family, n)
	}
	in = loadStored(in, why)
	if in.Model.Arch == nil && in.Model.Family == "" {
		var note string
		in.Model.Arch, note = oomsim.AssumeArchNote(in.Model.Params)
		r.Model.Arch = in.Model.Arch
		why("model shape", "assumed", note)
	}
	if t.Catalogue {
		why("device", t.Name, fmt.Sprintf("catalogued device (%s), usable %s: %s; the probe was not run", t.Display, units.Bytes(t.UsableBytes).Format(units.GiB, 2), t.UsableNote))
	}

	// Memory strategy.
	strategy, frac := in.Strategy, in.Fraction
	if strategy == "" || strategy == "auto" {
		p := in.Model.Params
		// auto picks by model size; probe shows the configured default
		// (balanced), which is why the two can differ for one machine.
		const unset = "; no memory strategy is configured, so recommend picks by model size (probe shows the configured default, balanced 0.75; set --memory-strategy to pin one)"
		switch {
		case p < 1_000_000:
			strategy = oomsim.Conservative
			why("memory_strategy", string(strategy), fmt.Sprintf("%s parameters is under 1M: conservative (60%%)%s", paramsNear(p, 1_000_000), unset))
		case p < 100_000_000:
			strategy = oomsim.Balanced
			why("memory_strategy", string(strategy), fmt.Sprintf("%s parameters is under 100M: balanced (75%%)%s", paramsNear(p, 100_000_000), unset))
		default:
			strategy = oomsim.Aggressive
			why("memory_strategy", string(strategy), fmt.Sprintf("%s parameters is 100M or more: aggressive (90%%)%s", paramsNear(p, 100_000_000), unset))
		}
		if strategy == oomsim.Aggressive && t.Shared {
			strategy = oomsim.Balanced
			why("memory_strategy", string(strategy), fmt.Sprintf("never aggressive on a shared device: other processes hold %s of %s", units.Bytes(t.TotalBytes-t.FreeBytes).Format(units.GiB, 2), units.Bytes(t.TotalBytes).Format(units.GiB, 2)))
		}
		frac, _ = strategy.Fraction()
	} else {
		src := in.StrategySource
		if src == "" {
			src = "config"
		}
		if strategy == oomsim.Custom {
			why("memory_strategy", string(strategy), fmt.Sprintf("custom fraction %g (from %s)", frac, src))
		} else {
			why("memory_strategy", string(strategy), fmt.Sprintf("set by %s", src))
		}
		if strategy == oomsim.Aggressive && t.Shared {
			why("memory_strategy", string(strategy), "warning: aggressive on a shared device (honoured because you set it)")
		}
	}
	if frac <= 0 || frac > 1 {
		frac, _ = oomsim.Balanced.Fraction()
	}
	r.MemoryStrategy, r.MemoryFraction = strategy, frac
	budget := oomsim.Allocatable(t.UsableBytes, t.FreeBytes)
	if budget < t.UsableBytes {
		why("budget", units.Bytes(budget).Format(units.GiB, 2), "capped by the memory free now")
	}
	strategyBudget := int64(float64(budget) * frac)

	plan := oomsim.WithDefaults(oomsim.Plan{Model: in.Model, Mode: in.Mode, BatchSize: in.BatchSize, SeqLen: in.SeqLen,
		Optimizer: in.Optimizer, Recompute: in.Recompute, RecomputeLayers: in.RecomputeLayers, Attention: in.Attention, Convention: in.Convention, Offload: in.Offload,
		OffloadParams: in.OffloadParams, FSDP: in.FSDP, ZeROStage: max(in.ZeROStage, 0), Devices: in.Devices, Backend: t.Backend,
		Stack: in.Stack, StackVersion: in.StackVersion, TorchVersion: in.TorchVersion, Mixed: in.Mixed, Loss: in.Loss, LoRARank: in.LoRARank, LoRATargets: in.LoRATargets, LoRALayers: in.LoRALayers, DoRA: in.DoRA, GaLoreRank: in.GaLoreRank,
		Quant: in.Quant, WeightBits: in.WeightBits, KVBits: in.KVBits, GPULayers: in.GPULayers, CPUMoELayers: in.CPUMoELayers, Prealloc: in.Prealloc, MaxNumSeqs: in.MaxNumSeqs, PrefillTokens: in.PrefillTokens, PrefillChunk: in.PrefillChunk, Speculative: in.Speculative, KVCacheTokens: in.KVCacheTokens, DeviceBytes: t.UsableBytes, DeviceName: t.Name, OptimizerInBackward: in.OptimizerInBackward, Compiled: in.Compiled, ExpandableSegments: in.ExpandableSegments, FusedKernels: in.FusedKernels, TiledMLP: in.TiledMLP, Objective: in.Objective, PromptLen: in.PromptLen, EagerModuleLoading: in.EagerCUDAModules,
		Rollout: in.Rollout, RolloutShare: in.RolloutShare, RolloutSleep: in.RolloutSleep, RolloutSteps: in.RolloutSteps})
	if in.DoRA && plan.Mode != oomsim.LoRA && plan.Mode != oomsim.QLoRA {
		return nil, fmt.Errorf("%w: --dora is a kind of LoRA adapter: it needs --mode lora or qlora, not %s", ErrContradiction, plan.Mode)
	}
	if (in.MaxNumSeqs > 0 || in.PrefillTokens > 0) && (plan.Mode != oomsim.Inference || oomsim.ProfileOf(plan.Stack).Preallocates == 0) {
		return nil, fmt.Errorf("%w: --max-num-seqs and --max-num-batched-tokens size a serving engine's start-up profile (--mode inference with --stack vllm, sglang, tgi, lmdeploy or tensorrt-llm), not %s %s", ErrContradiction, plan.Mode, plan.Stack)
	}
	if in.PrefillChunk > 0 && (plan.Mode != oomsim.Inference || oomsim.ProfileOf(plan.Stack).ChunkFlag == "") {
		return nil, fmt.Errorf("%w: --prefill-chunk is the prompt chunk of llama.cpp (--ubatch-size), Ollama (num_batch), ExLlama (max_input_len, TabbyAPI's chunk_size) and mlx-lm (--prefill-step-size) with --mode inference, not %s %s (a serving engine's is --max-num-batched-tokens)", ErrContradiction, plan.Mode, plan.Stack)
	}
	if in.Speculative != "" && (plan.Mode != oomsim.Inference || !oomsim.RunsMTP(plan.Stack)) {
		return nil, fmt.Errorf("%w: --speculative mtp is a serving engine's draft (--mode inference with --stack vllm, sglang or llama.cpp), not %s %s", ErrContradiction, plan.Mode, plan.Stack)
	}
	if in.Speculative != "" && in.Model.MTPLayers == 0 {
		return nil, fmt.Errorf("%w: --speculative mtp drafts with the checkpoint's multi-token-prediction layers, and %s's config.json names none (num_nextn_predict_layers, mtp_num_hidden_layers)", ErrContradiction, in.Model.Name)
	}
	if in.KVCacheTokens > 0 && (plan.Mode != oomsim.Inference || !oomsim.CountsKVTokens(plan.Stack)) {
		return nil, fmt.Errorf("%w: --kv-cache-tokens sizes the KV cache of vllm, sglang, lmdeploy or tensorrt-llm (--mode inference), not %s %s", ErrContradiction, plan.Mode, plan.Stack)
	}
	if err := plan.Optimizer.CheckTrains(plan.Mode); err != nil {
		return nil, fmt.Errorf("%w: --%v", ErrContradiction, err) // "--optimizer X ..."
	}
	switch maxPos := archMaxPositions(in.Model); {
	case in.SeqLen <= 0 && plan.Mode == oomsim.Inference && plan.Prealloc > 0 && maxPos > 0:
		// vLLM, SGLang and TGI size the KV cache for max_model_len, the
		// model's maximum by default: a long-context model that fits
		// at 2,048 tokens can still fail to start.
		plan.SeqLen, plan.SeqFromModel = maxPos, true
		why("seq_len", fmt.Sprint(plan.SeqLen), fmt.Sprintf("%s reserves the KV cache for max_model_len, the model's maximum positions, unless told otherwise (--seq-len)", plan.Stack))
	case in.SeqLen <= 0 && plan.Mode == oomsim.Inference && plan.Stack == oomsim.StackOllama:
		plan.SeqLen = oomsim.OllamaContext(plan, maxPos)
		why("seq_len", fmt.Sprint(plan.SeqLen), "Ollama's default num_ctx for its release and the GPUs' memory (--seq-len for another)")
	case in.SeqLen <= 0 && maxPos > 0 && maxPos < plan.SeqLen:
		plan.SeqLen = maxPos
		why("seq_len", fmt.Sprint(plan.SeqLen), "the model's maximum positions (default 2048 is longer)")
	case in.SeqLen > maxPos && maxPos > 0 && plan.Mode == oomsim.Inference && plan.Stack == oomsim.StackOllama:
		// Ollama lowers num_ctx to the GGUF's context_length before it
		// sizes the KV cache (llm/server.go: "requested context size too
		// large for model"); llama.cpp itself only warns.
		plan.SeqLen = maxPos
		why("seq_len", fmt.Sprint(plan.SeqLen), fmt.Sprintf("Ollama lowers num_ctx %d to the model's trained context and sizes its KV cache for that", in.SeqLen))
	}
	if plan.BatchSize > 1 && plan.Mode == oomsim.Inference && oomsim.OllamaOneSlot(plan) {
		plan.BatchSize, plan.MicroBatch = 1, 0
		why("batch", "1", fmt.Sprintf("Ollama serves %s one request at a time whatever OLLAMA_NUM_PARALLEL says (its scheduler's list of architectures without parallel requests), so its KV cache holds one sequence", plan.Model.Family))
	}
	plan.TensorParallel, plan.PipelineStages, plan.ExpertParallel = in.TensorParallelDegree, in.PipelineStages, in.ExpertParallel
	plan.SequenceParallel = in.SequenceParallel
	if in.ExpertParallel > 1 && plan.Model.ExpertParams() == 0 {
		return nil, inputf("--expert-parallel-size %d needs a mixture-of-experts model whose experts and active parameters are known: %s has none", in.ExpertParallel, plan.Model.Name)
	}
	if in.CPUMoELayers > 0 && plan.Model.ExpertParams() == 0 {
		return nil, inputf("--n-cpu-moe and --cpu-moe need a mixture-of-experts model whose experts and active parameters are known: %s has none (use --gpu-layers to keep whole layers on the host)", plan.Model.Name)
	}
	if in.ContextParallel > 1 && !plan.Mode.Trains() {
		return nil, inputf("--context-parallel-size %d applies to training (lora, qlora, training): inference splits no sequence over devices here", in.ContextParallel)
	}
	plan.ContextParallel = in.ContextParallel
	if in.EvalBatch > 0 && !plan.Mode.Trains() {
		return nil, inputf("--eval-batch-size %d applies to training (lora, qlora, training): the evaluation forward runs between training steps", in.EvalBatch)
	}
	plan.EvalBatch = in.EvalBatch
	if plan.TensorParallel == 0 && !in.TensorParallel && (in.PipelineStages > 1 || in.ExpertParallel > 1) {
		plan.TensorParallel = 1 // pipelining or expert parallelism alone: no matrix split
	}
	if plan.Devices == 1 && in.ZeROStage == 3 && plan.Mode.Trains() {
		// ZeRO-3 on one device shares nothing out, but it is how DeepSpeed
		// moves the parameters to the host (ZeRO-Infinity's offload_param,
		// ArcticTraining's single-GPU recipes): one block at a time is
		// gathered onto the device.
		plan.Sharding = oomsim.ShardZeRO3
		why("devices", "1", "ZeRO-3 on one device: nothing is shared out; with --offload cpu --offload-params the parameters live on the host and one block at a time is brought to the device")
	}
	if plan.Devices == 1 && in.ZeROStage == 1 && plan.Mode.Trains() && plan.Offload == oomsim.OffloadCPU {
		// ZeRO-1 on one device shares nothing out either, but with the
		// states offloaded its gradients accumulate whole on the device
		// (stage 2 sends them to the host bucket by bucket).
		plan.Sharding = oomsim.ShardZeRO1
		why("devices", "1", "ZeRO-1 on one device with --offload cpu: the optimizer states live on the host, the gradients accumulate whole on the device until the step")
	}
	if plan.Devices > 1 && plan.Sharding == oomsim.ShardNone {
		switch {
		case plan.Mode == oomsim.Inference:
			// Serving over several devices splits the weights (and the KV
			// cache) between them: device_map="auto" or tensor parallel.
			plan.Sharding = oomsim.ShardZeRO3
			if t, pp := plan.TensorDegree(), plan.PipelineDegree(); t*pp > 1 && t*pp < plan.Devices {
				why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("inference over %d devices: weights and KV cache split over %d (tensor parallel %d × %d pipeline stage(s)), %d replicas; memory is per device",
					plan.Devices, t*pp, t, pp, plan.Devices/(t*pp)))
				break
			}
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("inference over %d devices: weights and KV cache split between them (device_map=\"auto\" / tensor parallel); memory is per device", plan.Devices))
		case in.TensorParallel || in.TensorParallelDegree > 1 || in.PipelineStages > 1 || in.ExpertParallel > 1:
			plan.Sharding = oomsim.ShardTP
			zero := in.ZeROStage
			if zero == 0 && plan.Stack == oomsim.StackMegatron && !in.TensorParallel && plan.Devices > plan.TensorDegree()*plan.PipelineDegree() {
				zero = 2 // the distributed optimizer of Megatron's recipes, over the replicas
			}
			if zero > 0 {
				plan.Sharding = map[int]oomsim.Sharding{1: oomsim.ShardZeRO1, 2: oomsim.ShardZeRO2, 3: oomsim.ShardZeRO3}[zero]
			}
			why("devices", fmt.Sprint(plan.Devices), modelParallelReason(plan, zero))
		case in.ZeROStage == 1 && plan.Stack.ShardsLikeFSDP():
			return nil, inputf("--zero-stage 1 is DeepSpeed's stage 1 (or PyTorch's ZeroRedundancyOptimizer); --stack %s shards with FSDP, which has no stage 1: use 2 (SHARD_GRAD_OP) or 3 (FULL_SHARD)", plan.Stack)
		case in.ZeROStage == 1:
			plan.Sharding = oomsim.ShardZeRO1
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("training over %d devices with ZeRO-1: the optimizer states are sharded, every device keeps whole gradients; memory is per device", plan.Devices))
		case in.ZeROStage > 0:
			plan.Sharding = map[int]oomsim.Sharding{2: oomsim.ShardZeRO2, 3: oomsim.ShardZeRO3}[in.ZeROStage]
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("training over %d devices with ZeRO-%d/FSDP: memory is per device", plan.Devices, in.ZeROStage))
		case in.ZeROStage < 0:
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("training over %d devices, data parallel: every device holds the whole model", plan.Devices))
		case plan.Stack.ShardsLikeFSDP():
			// FSDP's default sharding_strategy is FULL_SHARD (FSDP2's
			// fully_shard): parameters, gradients and states sharded.
			plan.Sharding = oomsim.ShardZeRO3
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("training over %d devices with FSDP's default FULL_SHARD: memory is per device (--zero-stage 2 for SHARD_GRAD_OP)", plan.Devices))
		case plan.Stack == oomsim.StackMegatron:
			// Megatron-Bridge's and NeMo's recipes turn the distributed
			// optimizer on: gradients and states shared out, ZeRO-2's shape.
			plan.Sharding = oomsim.ShardZeRO2
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("training over %d devices with Megatron's distributed optimizer (its recipes' default; ZeRO-2's shape): memory is per device (--tensor-parallel-size and --pipeline-parallel-size split the model)", plan.Devices))
		case oomsim.ProfileOf(plan.Stack).DeepSpeed:
			// A DeepSpeed run names a ZeRO stage; 2 is the stage of the
			// configs people start from (DeepSpeed-Chat's scripts,
			// transformers' ds_config_zero2.json).
			plan.Sharding = oomsim.ShardZeRO2
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("training over %d devices with DeepSpeed, taken as ZeRO-2: memory is per device (--zero-stage 3 to shard the weights too)", plan.Devices))
		default:
			why("devices", fmt.Sprint(plan.Devices), fmt.Sprintf("training over %d devices, data parallel: every device holds the whole model (give --zero-stage 2 or 3 to shard it)", plan.Devices))
		}
	}

	if c := plan.ContextDegree(); c > 1 {
		why("context_parallel", fmt.Sprint(c), fmt.Sprintf("each sequence of %d tokens split over %d devices by tokens (context parallelism, ring attention or Ulysses): a device keeps the activations and logits of %d tokens; for the model states the %d devices are data-parallel replicas",
			plan.SeqLen, c, (plan.SeqLen+c-1)/c, c))
	}

	// Precision.
	prec, err := choosePrecision(in, t, plan, budget, why)
	if err != nil {
		return nil, err
	}
	plan.Precision = prec
	if (plan.Mode == oomsim.Inference || plan.Mode == oomsim.LoRA) && in.Mixed != "" {
		plan.Mixed = in.Mixed // cleared while the precision was open (autocast inference, LoRA over an fp32 base)
	}
	if in.Recompute == "" {
		plan.Recompute = "" // the stack's default can depend on the precision (8-bit LoRA)
	}
	plan = oomsim.WithDefaults(plan) // the stack's regime for this precision
	r.Precision = prec
	if t.Backend == backend.CUDA && (plan.ExpandableSegments || oomsim.ProfileOf(plan.Stack).ExpandableSegments) {
		src := cmp.Or(in.ExpandableFrom, "--expandable-segments")
		if !plan.ExpandableSegments {
			src = string(plan.Stack) + "'s launcher sets PYTORCH_ALLOC_CONF=expandable_segments:True"
		}
		why("allocator", "expandable segments", src+": freed blocks are reused whatever their size, so reserved memory stays at the peak of live tensors")
	}
	if plan.Objective == oomsim.ObjectiveGRPO {
		grpoReasons(&plan, in, why)
	}
	if in.Recompute == "" && oomsim.ShardedRecipe(plan) && plan.Recompute == oomsim.RecomputeFull {
		why("recompute", string(plan.Recompute), fmt.Sprintf("full training sharded over %d devices: the recipes that shard (LLaMA-Factory, axolotl, torchtune, DeepSpeed-Chat) checkpoint activations; --recompute none to plan without", plan.Devices))
	}

	b, err := oomsim.Estimate(plan)
	if err != nil {
		if errors.Is(err, oomsim.ErrNotApplicable) {
			return nil, fmt.Errorf("%w: %v", ErrContradiction, err)
		}
		return nil, err
	}
	if slots := oomsim.OllamaParallel(plan); slots > 1 && plan.BatchSize == 1 {
		// OLLAMA_NUM_PARALLEL auto: the server takes the slots when their
		// KV caches fit, one slot otherwise (it starts either way).
		q := plan
		q.BatchSize = slots
		if qb, err := oomsim.Estimate(q); err == nil && oomsim.Fits(qb, device(t, budget)) {
			plan, b = q, qb
			why("parallel", fmt.Sprint(slots), fmt.Sprintf("Ollama %s serves %d requests at once when their KV caches fit (OLLAMA_NUM_PARALLEL auto), each with num_ctx; memory is for all %d", plan.StackVersion, slots, slots))
		}
	}
	if tokens, seqs, ok := oomsim.ServingProfile(plan); ok {
		src := "the engine's defaults for this release and device"
		if plan.MaxNumSeqs > 0 || plan.PrefillTokens > 0 {
			src = "--max-num-batched-tokens / --max-num-seqs, else the engine's defaults"
		}
		why("profile", fmt.Sprintf("%d tokens, %d seqs", tokens, seqs), fmt.Sprintf("%s profiles a forward of %d tokens and samples %d sequences at start-up (%s): %s of activations held beside the weights",
			plan.Stack, tokens, seqs, src, units.Bytes(b.ActivationsBytes).Format(units.GiB, 2)))
	}
	r.Plan = plan
	r.Memory = Memory{Breakdown: b, UsableBytes: budget, StrategyBytes: strategyBudget, Band: oomsim.EstimateBand(plan, b, in.Pinned)}
	r.Fits = oomsim.Fits(b, device(t, budget))
	if band := r.Memory.Band; band.LowBytes <= budget && budget < band.HighBytes && len(band.DependsOn) > 0 {
		edge := "fits at the estimate, but not at the top of its range"
		if !r.Fits {
			edge = "does not fit at the estimate, but would at the bottom of its range"
		}
		// Within 10% of the budget the plan is near the limit whatever
		// moves it; further away, what takes the total across the budget
		// (the band's bottom for a plan that does not fit, its top for
		// one that does) is an assumption the user can pin (the stack,
		// mixed precision, the attention kernel) or devctl's own error.
		crosses := band.HighBy
		if !r.Fits {
			crosses = band.LowBy
		}
		label := "near the limit"
		switch d := b.TotalBytes - budget; {
		case d <= budget/10 && -d <= budget/10:
		case crosses != oomsim.SpreadWhat:
			label = "an assumption decides"
			edge += " (name the stack or pin the assumption to decide)"
		default:
			// Far from the budget, but devctl's own error on runs of
			// this kind (errorSpread) is wider still.
			label = "within devctl's error"
		}
		why("edge", label, fmt.Sprintf("%s: %s, %s to %s depending on %s; %s can be allocated",
			edge, units.Bytes(b.TotalBytes).Format(units.GiB, 2), units.Bytes(band.LowBytes).Format(units.GiB, 2),
			units.Bytes(band.HighBytes).Format(units.GiB, 2), strings.Join(band.DependsOn, " and "), units.Bytes(budget).Format(units.GiB, 2)))
	}
	if in.Max != "" {
		m, err := searchMax(in.Max, plan, device(t, budget))
		if err != nil {
			return nil, err
		}
		r.Max = m
		why("max", fmt.Sprint(m.Value), maxReason(m, plan))
	}
	r.WithinStrategy = r.Fits && b.NeededBytes() <= strategyBudget
	r.HeadroomBytes = budget - b.NeededBytes()
	per := ""
	if plan.Devices > 1 {
		per = " per device"
	}
	switch {
	case r.WithinStrategy:
		why("verdict", "fits", fmt.Sprintf("%s%s of the %s the framework can allocate (runtime overhead counted once), %s headroom; within the %s strategy's %s (%g)",
			units.Bytes(b.TotalBytes).Format(units.GiB, 2), per, units.Bytes(budget).Format(units.GiB, 2), units.Bytes(r.HeadroomBytes).Format(units.GiB, 2), strategy, units.Bytes(strategyBudget).Format(units.GiB, 2), frac))
	case r.Fits:
		why("verdict", "fits", fmt.Sprintf("%s%s of the %s the framework can allocate (runtime overhead counted once), %s headroom; above the %s strategy's %s (%g of usable), so little margin is left for other processes and fragmentation",
			units.Bytes(b.TotalBytes).Format(units.GiB, 2), per, units.Bytes(budget).Format(units.GiB, 2), units.Bytes(r.HeadroomBytes).Format(units.GiB, 2), strategy, units.Bytes(strategyBudget).Format(units.GiB, 2), frac))
	default:
		why("verdict", "does not fit", fmt.Sprintf("%s%s needed, %s can be allocated (short by %s)", units.Bytes(b.TotalBytes).Format(units.GiB, 2), per, units.Bytes(budget).Format(units.GiB, 2), units.Bytes(-r.HeadroomBytes).Format(units.GiB, 2)))
		if b.HostBytes > 0 && t.HostBytes > 0 && b.TotalBytes <= budget {
			why("verdict", "does not fit", fmt.Sprintf("the offloaded state needs %s of host memory, the host has %s", units.Bytes(b.HostBytes).Format(units.GiB, 2), units.Bytes(t.HostBytes).Format(units.GiB, 2)))
		}
		tr, err := oomsim.Ladder(plan, device(t, budget), oomsim.LadderOptions{CPUFallback: in.CPUFallback})
		if err == nil {
			r.Ladder = &tr
			if first, ok := tr.FirstFit(); ok && tr.Fits {
				why("ladder", first.Action, fmt.Sprintf("first change that fits: %s (%s)", first.Change, units.Bytes(tr.FinalMemory.TotalBytes).Format(units.GiB, 2)))
			} else {
				why("ladder", "nothing fits", "no step of the fallback ladder fits this device; use more devices (--devices N) or a bigger one")
			}
		}
	}
	final := plan
	if r.Ladder != nil && r.Ladder.Fits {
		final = r.Ladder.Final
	}
	r.Env = append(Env(t, strategy, frac, final, in.Devices), FrameworkEnv(t, final)...)
	if r.Max != nil {
		// A script that asked for the most that fits reads it from the
		// environment, next to the settings it runs with.
		name := "DEVCTL_MAX_" + strings.ToUpper(strings.ReplaceAll(string(r.Max.What), "-", "_"))
		r.Env = append(r.Env, envvar.Var{Name: name, Value: strconv.Itoa(r.Max.Value),
			Why: fmt.Sprintf("the largest %s that fits (--max %s)", r.Max.What, r.Max.What)})
	}
	r.Framework = FrameworkFor(t, final)
	return r, nil
}

func device(t Target, budget int64) oomsim.Device {
	host := t.HostBytes
	if t.Catalogue {
		host = 0
	}
	return oomsim.Device{Name: t.Name, Backend: t.Backend, BudgetBytes: budget, Support: t.Support, Available: max(t.Count, 1), HostBudgetBytes: host, Unified: t.Unified}
}

// choosePrecision honours a requested precision when the device supports
// it; auto picks bf16 where native, else fp16 where fast, else fp32, and
// 8-bit/4-bit weights only when 16-bit does not fit and the device runs them.
func choosePrecision(in Input, t Target, plan oomsim.Plan, budget int64, why func(d, c, w string)) (capability.Precision, error) {
	req := in.Precision
	if req == capability.Auto {
		req = ""
	}
	src := srcOr(in.PrecisionSource)
	if plan.Mode == oomsim.QLoRA {
		if req != "" && req != capability.Int4 {
			return "", fmt.Errorf("%w: --mode qlora trains on 4-bit weights, but precision is %s (from %s)", ErrContradiction, req, src)
		}
		if req != capability.Int4 {
			src = "--mode qlora"
		}
		req = capability.Int4
	}
	if req != "" {
		if req == capability.Int8 || req == capability.Int4 {
			if plan.Mode == oomsim.Training {
				return "", fmt.Errorf("%w: full training needs 16-bit or fp32 weights, not %s (from %s); use --mode lora (8bit) or --mode qlora (4bit)", ErrContradiction, req, src)
			}
		}
		if !supports(t, in.Stack, req) && runsSlowly(t, req) {
			// The kernels exist but are not the fast ones (bf16 before
			// Ampere, bitsandbytes' 8/4-bit before Turing): the memory is
			// the same, so plan it and say so.
			why("precision", string(req), fmt.Sprintf("requested (%s); %s runs it, but not natively (that needs %s): slow, memory as planned", src, t.Name, capability.Requirement(t.Backend, req)))
			return req, nil
		}
		if !supports(t, in.Stack, req) {
			need := capability.Requirement(t.Backend, req)
			if why, ok := t.Excluded[req]; ok {
				need = why
			} else if need == "" {
				need = "no " + string(t.Backend) + " rule grants it"
			} else {
				need = "needs " + need
			}
			return "", fmt.Errorf("%w: precision %s (from %s) is not supported on %s (%s)", ErrContradiction, req, src, t.Name, need)
		}
		if st := in.Model.Stored; st != nil && in.PrecisionSource == storedSource(st) {
			why("precision", string(req), "the checkpoint is stored so ("+st.From+"); --precision for another")
		} else if plan.Mode == oomsim.QLoRA && (in.Precision == "" || in.Precision == capability.Auto) {
			why("precision", string(req), "QLoRA trains adapters on NF4 4-bit weights")
		} else {
			why("precision", string(req), "requested ("+src+")")
		}
		return req, nil
	}
	if pulled := oomsim.ProfileOf(plan.Stack).PulledPrecision; pulled != "" && plan.Mode == oomsim.Inference {
		// A stack that loads quantised files (llama.cpp, Ollama, ExLlama):
		// the file's bits per weight where given (an EXL2 file's 4.0bpw, a
		// GGUF type's rate), else what its usual download gives (an
		// `ollama pull` user runs the library's default tag whatever the
		// device could hold).
		switch {
		case in.WeightBits > 0 && in.WeightBits < 16:
			bits := capability.Int4
			if in.WeightBits >= 6 {
				bits = capability.Int8
			}
			if supports(t, in.Stack, bits) {
				why("precision", string(bits), fmt.Sprintf("%s loads quantised files: --weight-bits %g is the file's rate", plan.Stack, in.WeightBits))
				return bits, nil
			}
		case in.WeightBits == 0 && supports(t, in.Stack, pulled):
			switch {
			case plan.Stack.ExLlama():
				why("precision", string(pulled), fmt.Sprintf("%s loads EXL2/EXL3 files: planned as a 4-bit download; --weight-bits for the file's rate (4.0bpw: --weight-bits 4)", plan.Stack))
			case plan.Stack == oomsim.StackOllama:
				why("precision", string(pulled), fmt.Sprintf("%s's default model tag is %s weights (GGUF Q4_K_M; Q4_0 for models published before December 2024); --precision for another tag", plan.Stack, pulled))
			default:
				why("precision", string(pulled), fmt.Sprintf("%s loads GGUF files: planned as the usual download, %s Q4_K_M; --precision and --weight-bits for another (Q8_0: 8bit, 8.5 bits)", plan.Stack, pulled))
			}
			return pulled, nil
		}
	}
	half := oomsim.Half(t.Support)
	base := capability.FP32
	switch {
	case t.Support.BF16:
		base = half
		why("precision", string(base), t.Name+" runs bf16 natively"+parenthesised(t.Support.Reasons[capability.BF16]))
	case t.Support.FP16:
		base = half
		why("precision", string(base), "no native bf16; fp16 is fast here"+parenthesised(t.Support.Reasons[capability.FP16]))
	default:
		why("precision", string(base), "neither bf16 nor fp16 runs fast on "+t.Name)
	}
	if plan.Mode == oomsim.Training {
		return base, nil
	}
	p := plan
	p.Precision = base
	if b, err := oomsim.Estimate(p); err == nil && b.NeededBytes() <= budget {
		return base, nil
	}
	for _, q := range []capability.Precision{capability.Int8, capability.Int4} {
		if !supports(t, in.Stack, q) {
			continue
		}
		p.Precision = q
		if b, err := oomsim.Estimate(p); err == nil && b.NeededBytes() <= budget {
			why("precision", string(q), fmt.Sprintf("does not fit at %s; %s weights fit and %s supports them (%s)", base, q, t.Name, t.Support.Reasons[q]))
			return q, nil
		}
	}
	return base, nil
}

// loadStored plans a checkpoint published quantised (Model.Stored) as
// it loads: transformers, vLLM and mlx keep GPTQ, AWQ, bitsandbytes, fp8
// and mlx weights as stored, so unless --precision asks for another, the
// plan takes the stored precision, format and bits. Full training needs
// the 16-bit weights, and QLoRA 4-bit ones: those plans keep their own.
func loadStored(in Input, why func(d, c, w string)) Input {
	st := in.Model.Stored
	if st == nil {
		return in
	}
	asked := in.Precision != "" && in.Precision != capability.Auto
	switch {
	case in.Mode == oomsim.Training:
		why("model", "stored "+string(st.Precision), "the checkpoint stores quantised weights ("+st.From+"); full training plans the 16-bit model it was made from")
		return in
	case asked && in.Precision != st.Precision:
		why("model", "stored "+string(st.Precision), fmt.Sprintf("the checkpoint stores %s weights (%s); planned at %s as asked", st.Precision, st.From, in.Precision))
		return in
	case in.Mode == oomsim.QLoRA && st.Precision != capability.Int4:
		why("model", "stored "+string(st.Precision), "the checkpoint stores "+string(st.Precision)+" weights ("+st.From+"); QLoRA plans 4-bit NF4 weights")
		return in
	}
	t := in.Target
	if st.Format == oomsim.QuantMLX && (in.Stack == "" || in.Stack == oomsim.StackAuto) && t.Backend == backend.MPS {
		// An mlx conversion is what mlx-lm loads.
		in.Stack = oomsim.StackMLX
		why("stack", string(in.Stack), "the checkpoint is an mlx conversion ("+st.From+"), which mlx-lm runs")
	}
	if !asked && !supports(t, in.Stack, st.Precision) && !runsSlowly(t, st.Precision) {
		why("model", "stored "+string(st.Precision), fmt.Sprintf("the checkpoint stores %s weights (%s), which %s does not run; planned as the 16-bit model (an mlx or GGUF conversion runs 4-bit there)", st.Precision, st.From, t.Name))
		return in
	}
	if !asked {
		in.Precision, in.PrecisionSource = st.Precision, storedSource(st)
	}
	if in.Quant == "" {
		in.Quant = st.Format
	}
	if in.WeightBits == 0 {
		in.WeightBits = st.Bits
	}
	return in
}

func storedSource(st *oomsim.StoredWeights) string { return "the checkpoint: " + st.From }

// supports reports whether the plan can use a precision on the target: the
// device's capability rules, or a stack that quantises weights itself
// (mlx on Apple GPUs, llama.cpp's GGUF everywhere) for 8-bit and 4-bit.
func supports(t Target, stack oomsim.Stack, p capability.Precision) bool {
	if t.Support.Has(p) {
		return true
	}
	return (p == capability.Int8 || p == capability.Int4) && oomsim.ProfileOf(stack).Quantises
}

// runsSlowly: a precision a CUDA GPU runs without the fast path. PyTorch
// keeps bf16 tensors and computes them on GPUs before Ampere (emulated;
// torch.cuda.is_bf16_supported(including_emulation=True)), and
// bitsandbytes' 8-bit and 4-bit layers fall back to slower kernels on GPUs
// without int8 tensor cores. Other backends' missing precisions have no
// kernels at all.
func runsSlowly(t Target, p capability.Precision) bool {
	if t.Backend != backend.CUDA {
		return false
	}
	switch p {
	case capability.BF16, capability.Int8, capability.Int4:
		return true
	}
	return false
}

func archMaxPositions(m oomsim.Model) int {
	if m.Arch == nil {
		return 0
	}
	return m.Arch.MaxPositions
}

func srcOr(s string) string {
	if s == "" {
		return "config"
	}
	return s
}

// parenthesised returns " (s)", or "" when there is no reason to quote.
func parenthesised(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// EnvWarning is the one line `-o env` writes to stderr when the plan as
// given does not fit: the exports alone cannot say so.
func EnvWarning(r *Result) string {
	msg := fmt.Sprintf("devctl: the plan does not fit %s: %s needed, %s can be allocated", r.Device.Name, units.Bytes(r.Memory.TotalBytes).Format(units.GiB, 2), units.Bytes(r.Memory.UsableBytes).Format(units.GiB, 2))
	switch {
	case r.Ladder != nil && r.Ladder.Fits:
		first, _ := r.Ladder.FirstFit()
		msg += "; the exports are for the ladder's plan that fits (" + first.Change + ")"
	default:
		msg += "; no change on the ladder fits, the exports are for the plan as given"
	}
	return msg
}

// paramsNear formats a count compared with a threshold: the short form
// ("124.44M") unless it would round onto the threshold, when the exact
// count is shown, so that a reason never reads "100M is under 100M".
func paramsNear(p, threshold int64) string {
	if p != threshold && FormatParams(p) == FormatParams(threshold) {
		return strconv.FormatInt(p, 10)
	}
	return FormatParams(p)
}

// modelParallelReason says how a model-parallel plan splits its devices.
func modelParallelReason(p oomsim.Plan, zero int) string {
	t, pp := p.TensorDegree(), p.PipelineDegree()
	tensor := fmt.Sprintf("tensor parallel %d", t)
	switch {
	case t > 1 && p.SequenceParallel == oomsim.SwitchOff:
		tensor += " (without sequence parallelism: the norms' and linear layers' inputs whole on every device)"
	case t > 1:
		tensor += " (with sequence parallelism)"
	}
	what := fmt.Sprintf("training over %d devices: %s, %d pipeline stage(s), %d data-parallel replica(s)", p.Devices, tensor, pp, p.Devices/(t*pp))
	switch zero {
	case 3:
		what += ", ZeRO-3/FSDP over the replicas"
	case 2:
		what += ", ZeRO-2 (Megatron's distributed optimizer) over the replicas"
	case 1:
		what += ", ZeRO-1 over the replicas (optimizer states sharded, gradients whole; Megatron's distributed optimizer has ZeRO-2's totals)"
	}
	if p.ExpertParallel > 1 {
		what += fmt.Sprintf(", the routed experts over %d devices", p.ExpertParallel)
	}
	if pp > 1 {
		what += "; the first stage holds as many micro-batches in flight as there are stages (1F1B), the last the loss"
	}
	return what + "; memory is per device"
}

// GRPO is a GRPO step's settings: the rollout engine (oomsim.Plan's
// Rollout), a colocated vLLM's share and sleep mode, TRL's
// steps_per_generation, the KL coefficient (negative: the TRL release's
// default, which decides whether full training keeps a reference model)
// and num_generations (0: TRL's 8; it sizes the step only where the
// per-device batch counts prompts, TRL before 0.15).
type GRPO struct {
	Rollout        oomsim.RolloutEngine
	RolloutShare   float64
	RolloutSleep   bool
	RolloutSteps   int
	KLBeta         float64
	NumGenerations int
}

// grpoReasons decides what a GRPO plan keeps besides the policy (the KL
// term's reference model, by the TRL release's default beta when
// --kl-beta is not given) and says it, with the rollout engine.
func grpoReasons(plan *oomsim.Plan, in Input, why func(d, c, w string)) {
	beta, src := in.KLBeta, "--kl-beta"
	if beta < 0 {
		beta, src = 0, "TRL's default beta (0.0 since 0.19)"
		if plan.Stack == oomsim.StackTRL && oomsim.VersionBelow(plan.StackVersion, 0, 19) {
			beta, src = 0.04, "TRL "+plan.StackVersion+"'s default beta (0.04 before 0.19)"
		}
	}
	plan.KLReference = beta != 0 && plan.Mode == oomsim.Training
	batch := "--batch-size counts completions (TRL since 0.15)"
	if plan.Stack == oomsim.StackTRL && oomsim.VersionBelow(plan.StackVersion, 0, 15) {
		plan.Generations = cmp.Or(in.NumGenerations, 8)
		batch = fmt.Sprintf("--batch-size counts prompts in TRL %s, each with %d completions (--num-generations): %d sequences a step", plan.StackVersion, plan.Generations, plan.BatchSize*plan.Generations)
	}
	ref := "no reference model (TRL loads none when beta is 0)"
	switch {
	case beta != 0 && plan.Mode != oomsim.Training:
		ref = "the reference is the base with the adapters disabled (no second copy)"
	case beta != 0:
		ref = "a frozen reference model beside the policy"
	}
	rollout := "completions from the policy's model.generate (TRL's use_vllm=False), a phase between training steps"
	switch plan.Rollout {
	case oomsim.RolloutVLLMColocate:
		rollout = fmt.Sprintf("completions from a colocated vLLM holding %.0f%% of the device", 100*plan.VLLMShare())
		if plan.RolloutSleep {
			rollout += ", released by its sleep mode during the training step"
		}
	case oomsim.RolloutVLLMServer:
		rollout = "completions from a vLLM server on other devices"
	}
	loss := "the loss on all --seq-len tokens (give --prompt-len for the completion's share)"
	if plan.PromptLen > 0 && plan.PromptLen < plan.SeqLen {
		loss = fmt.Sprintf("logits for the %d completion tokens only (logits_to_keep)", plan.SeqLen-plan.PromptLen)
	}
	why("objective", "grpo", fmt.Sprintf("%s; %s; %s; KL beta %g from %s: %s", rollout, batch, loss, beta, src, ref))
}
