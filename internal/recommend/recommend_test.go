package recommend

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
)

func catalogueTarget(t *testing.T, name string) Target {
	t.Helper()
	devs, err := LoadDevices(configs.DevicesYAML)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := FindDevice(devs, name)
	if !ok {
		t.Fatalf("no device %s", name)
	}
	return TargetFromCatalogue(d, 1)
}

func catalogueModel(t *testing.T, name string) oomsim.Model {
	t.Helper()
	ms, err := LoadModels(configs.ModelsYAML)
	if err != nil {
		t.Fatal(err)
	}
	m, err := FindModel(ms, name)
	if err != nil {
		t.Fatal(err)
	}
	return m.Model()
}

func TestStrategyByModelSize(t *testing.T) {
	cases := []struct {
		name   string
		params int64
		shared bool
		want   oomsim.Strategy
	}{
		{"under 1M parameters is conservative", 350_000, false, "conservative"},
		{"exactly 1M parameters is no longer conservative", 1_000_000, false, "balanced"},
		{"under 100M parameters is balanced", 60_000_000, false, "balanced"},
		{"exactly 100M parameters is already aggressive", 100_000_000, false, "aggressive"},
		{"100M parameters or more is aggressive", 150_000_000, false, "aggressive"},
		{"never aggressive on a shared device", 7_000_000_000, true, "balanced"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := catalogueTarget(t, "a100-80gb")
			if c.shared {
				tg.Catalogue, tg.Shared, tg.FreeBytes = false, true, tg.UsableBytes/2
			}
			r, err := Recommend(Input{Model: oomsim.Model{Params: c.params}, Precision: "auto", Strategy: "auto", Target: tg, RunSettings: RunSettings{Mode: oomsim.Inference}})
			if err != nil {
				t.Fatal(err)
			}
			if r.MemoryStrategy != c.want {
				t.Errorf("strategy = %s, want %s", r.MemoryStrategy, c.want)
			}
			if c.shared && r.Memory.UsableBytes > tg.FreeBytes {
				t.Errorf("budget %d exceeds the free memory %d", r.Memory.UsableBytes, tg.FreeBytes)
			}
		})
	}
}

func TestCustomStrategyTakesTheFraction(t *testing.T) {
	tg := catalogueTarget(t, "t4")
	r, err := Recommend(Input{Model: oomsim.Model{Params: 150_000_000}, Precision: "auto", Strategy: "custom", Fraction: 0.5, StrategySource: "flag --memory-fraction", Target: tg, RunSettings: RunSettings{Mode: oomsim.Inference}})
	if err != nil {
		t.Fatal(err)
	}
	if r.MemoryFraction != 0.5 || r.Memory.StrategyBytes != tg.UsableBytes/2 || r.Memory.UsableBytes != tg.UsableBytes {
		t.Errorf("fraction %g strategy budget %d usable %d, want 0.5, %d and %d", r.MemoryFraction, r.Memory.StrategyBytes, r.Memory.UsableBytes, tg.UsableBytes/2, tg.UsableBytes)
	}
}

func TestPrecisionChoice(t *testing.T) {
	cases := []struct {
		name, model, device, mode, req, want string
	}{
		{"bf16 where native (A100)", "llama-2-7b", "a100-80gb", "inference", "auto", "bf16"},
		{"fp16 where bf16 is not native (T4)", "gpt2", "t4", "inference", "auto", "fp16"},
		{"fp32 on a CPU without bf16", "gpt2", "cpu-64gb", "inference", "auto", "fp32"},
		{"bf16 on a TPU", "gpt2", "tpu-v5e", "inference", "auto", "bf16"},
		{"8-bit only when 16-bit does not fit (Llama-3-8B on a T4)", "llama-3-8b", "t4", "inference", "auto", "8bit"},
		{"a requested precision is honoured", "gpt2", "a100-80gb", "inference", "fp32", "fp32"},
		{"QLoRA implies 4-bit", "llama-2-7b", "t4", "qlora", "auto", "4bit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Recommend(Input{Model: catalogueModel(t, c.model), Precision: capability.Precision(c.req), Strategy: "auto", Target: catalogueTarget(t, c.device), RunSettings: RunSettings{Mode: oomsim.Mode(c.mode)}})
			if err != nil {
				t.Fatal(err)
			}
			if string(r.Precision) != c.want {
				t.Errorf("precision = %s, want %s", r.Precision, c.want)
			}
		})
	}
}

func TestContradictionsAreRefused(t *testing.T) {
	cases := []struct {
		name, device, mode, req, want string
	}{
		{"4-bit on a TPU", "tpu-v5e", "inference", "4bit", "not supported on tpu-v5e"},
		{"8-bit weights for full training", "a100-80gb", "training", "8bit", "use --mode lora"},
		{"QLoRA at fp16", "a100-80gb", "qlora", "fp16", "4-bit weights"},
		{"QLoRA on a TPU names --mode qlora, not the auto precision, as the source", "tpu-v5e", "qlora", "auto", "precision 4bit (from --mode qlora) is not supported on tpu-v5e"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Recommend(Input{Model: catalogueModel(t, "llama-2-7b"), Precision: capability.Precision(c.req), PrecisionSource: "flag --precision", Strategy: "auto", Target: catalogueTarget(t, c.device), RunSettings: RunSettings{Mode: oomsim.Mode(c.mode)}})
			if !errors.Is(err, ErrContradiction) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want a contradiction mentioning %q", err, c.want)
			}
		})
	}
}

func TestLlama2TrainingOnA100UsesTheLadder(t *testing.T) {
	r, err := Recommend(Input{Model: catalogueModel(t, "llama-2-7b"), Precision: "auto", Strategy: "auto", Target: catalogueTarget(t, "a100-80gb"), RunSettings: RunSettings{Mode: oomsim.Training}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fits || r.Ladder == nil || !r.Ladder.Fits {
		t.Fatalf("fits %v, ladder %v; want no fit and a ladder that finds one", r.Fits, r.Ladder)
	}
}

// Full training of a 70B model over 32 A100s: unsharded, the optimizer
// step is the peak and recomputation saves nothing; once ZeRO-2 shards
// the states, the activations are the peak, recomputation is tried again,
// and ZeRO-3 makes full training fit: the ladder does not change the
// method to LoRA.
func TestLadderKeepsFullTrainingWhenShardingFits(t *testing.T) {
	target := catalogueTarget(t, "a100-80gb")
	target.Count = 32
	r, err := Recommend(Input{Model: catalogueModel(t, "llama-2-70b"), Precision: "auto", Strategy: "auto", Target: target, RunSettings: RunSettings{Mode: oomsim.Training, Devices: 32}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Ladder == nil || !r.Ladder.Fits {
		t.Fatalf("ladder %v; want one that fits", r.Ladder)
	}
	if f := r.Ladder.Final; f.Mode != oomsim.Training || f.Sharding != oomsim.ShardZeRO3 || f.Recompute == oomsim.RecomputeNone {
		t.Errorf("final plan %s, sharding %s, recompute %s; want full training with ZeRO-3 and recomputation", f.Mode, f.Sharding, f.Recompute)
	}
}

// ZeRO-1 on one device with the states offloaded: nothing is shared out,
// but the gradients accumulate whole on the device (stage 2 sends them to
// the host bucket by bucket), so the stage is kept.
func TestZeROStageOneOnOneDeviceKeepsGradients(t *testing.T) {
	plan := func(stage int) *Result {
		t.Helper()
		r, err := Recommend(Input{Model: catalogueModel(t, "llama-2-7b"), Precision: "auto", Strategy: "auto", Target: catalogueTarget(t, "a100-80gb"), RunSettings: RunSettings{Mode: oomsim.Training, Stack: oomsim.StackDeepSpeed, ZeROStage: stage, Offload: oomsim.OffloadCPU, Devices: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	one, two := plan(1), plan(2)
	if one.Plan.Sharding != oomsim.ShardZeRO1 || one.Memory.GradientsBytes <= two.Memory.GradientsBytes {
		t.Errorf("stage 1: sharding %s, gradients %d bytes; stage 2: %d; want zero1 with whole gradients, more than stage 2's",
			one.Plan.Sharding, one.Memory.GradientsBytes, two.Memory.GradientsBytes)
	}
}

func TestEnvAndFramework(t *testing.T) {
	cases := []struct {
		device  string
		shared  bool
		env     []string
		torch   string
		jax     string
		context string
	}{
		{"a100-80gb", false, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "XLA_PYTHON_CLIENT_MEM_FRACTION=0.90"}, "cuda", "cuda", "torch.inference_mode"},
		{"a100-80gb", true, []string{"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "XLA_PYTHON_CLIENT_MEM_FRACTION=0.75", "XLA_PYTHON_CLIENT_PREALLOCATE=false"}, "cuda:0", "cuda", "torch.inference_mode"},
		{"tpu-v5e", false, []string{"PJRT_DEVICE=TPU"}, "xla", "tpu", "torch.no_grad"},
		{"apple-m2-max-32gb", false, []string{"PYTORCH_ENABLE_MPS_FALLBACK=1", "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.90", "PYTORCH_MPS_LOW_WATERMARK_RATIO=0.74"}, "mps", "metal", "torch.inference_mode"},
		{"mi300x", false, []string{"HIP_VISIBLE_DEVICES=0", "XLA_PYTHON_CLIENT_MEM_FRACTION=0.90"}, "cuda", "rocm", "torch.inference_mode"},
		{"cpu-64gb", false, []string{"JAX_PLATFORMS=cpu"}, "cpu", "cpu", "torch.inference_mode"},
	}
	for _, c := range cases {
		t.Run(c.device, func(t *testing.T) {
			tg := catalogueTarget(t, c.device)
			if c.shared {
				tg.Catalogue, tg.Shared, tg.FreeBytes = false, true, tg.UsableBytes/2
			}
			r, err := Recommend(Input{Model: oomsim.Model{Params: 150_000_000}, Precision: "auto", Strategy: "auto", Target: tg, RunSettings: RunSettings{Mode: oomsim.Inference}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range r.Env {
				got = append(got, e.Name+"="+e.Value)
			}
			if diff := cmp.Diff(c.env, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			f := r.Framework
			if diff := cmp.Diff([]string{c.torch, c.jax, c.context}, []string{f.PyTorchDevice, f.JAXPlatform, f.InferenceContext}); diff != "" {
				t.Errorf("framework (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTargetFromProbeMarksASharedGPU(t *testing.T) {
	cc := "8.0"
	rep := &probe.Report{
		Host:      probe.HostInfo{MemoryTotalMB: probe.Ptr(int64(65536))},
		Summary:   probe.Summary{DefaultDevice: "cuda:1"},
		Selection: &probe.Selection{Chosen: "cuda:1"},
		Devices: []probe.Device{
			{ID: "cuda:0", Index: 0, Backend: "cuda", TotalMemoryMB: probe.Ptr(int64(81920)), FreeMemoryMB: probe.Ptr(int64(81000)), ComputeCapability: &cc, SupportsFP16: true, SupportsBF16: true, Supports8Bit: true},
			{ID: "cuda:1", Index: 1, Backend: "cuda", TotalMemoryMB: probe.Ptr(int64(81920)), FreeMemoryMB: probe.Ptr(int64(20000)), ComputeCapability: &cc, SupportsFP16: true, SupportsBF16: true, Supports8Bit: true},
		},
	}
	tg, err := TargetFromProbe(rep)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "cuda:1" || !tg.Shared || tg.Count != 2 || !tg.Support.Int4 {
		t.Errorf("target %+v: want cuda:1, shared, 2 devices, 4-bit from the rules", tg)
	}
	r, err := Recommend(Input{Model: oomsim.Model{Params: 7_000_000_000}, Precision: "auto", Strategy: "auto", Target: tg, RunSettings: RunSettings{Mode: oomsim.Inference}})
	if err != nil {
		t.Fatal(err)
	}
	if r.MemoryStrategy == "aggressive" || r.Framework.PyTorchDevice != "cuda:1" {
		t.Errorf("strategy %s device %s", r.MemoryStrategy, r.Framework.PyTorchDevice)
	}
}

func TestTargetFromProbeDoesNotWrapAbsurdMemory(t *testing.T) {
	tests := []struct {
		name    string
		dev     probe.Device
		host    int64
		wantErr string
		check   func(Target) string
	}{
		{name: "a GPU reporting 2^43 MiB is refused, not wrapped to a negative size",
			dev:     probe.Device{ID: "cuda:0", Backend: "cuda", TotalMemoryMB: probe.Ptr(int64(1) << 43), FreeMemoryMB: probe.Ptr(int64(1) << 43)},
			host:    65536,
			wantErr: "the probe reported 8796093022208 MiB for cuda:0, more than any device has"},
		{name: "a host reporting the largest MemTotal saturates instead of wrapping",
			dev:  probe.Device{ID: "cpu", Backend: "cpu"},
			host: math.MaxInt64 >> 20,
			check: func(tg Target) string {
				if tg.TotalBytes <= 0 || tg.UsableBytes <= 0 {
					return fmt.Sprintf("total %d usable %d, want positive", tg.TotalBytes, tg.UsableBytes)
				}
				return ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &probe.Report{
				Host:    probe.HostInfo{MemoryTotalMB: probe.Ptr(tt.host)},
				Summary: probe.Summary{DefaultDevice: tt.dev.ID},
				Devices: []probe.Device{tt.dev},
			}
			tg, err := TargetFromProbe(rep)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(tg); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func TestTargetFromProbeSizesTheCPUFromTheHost(t *testing.T) {
	type sizes struct{ Total, Usable, Free int64 }
	tests := []struct {
		name string
		host probe.HostInfo
		want sizes
	}{
		{
			name: "without a cgroup limit the CPU plans with MemTotal and MemAvailable is its free memory",
			host: probe.HostInfo{MemoryTotalMB: probe.Ptr(int64(65536)), MemoryAvailMB: probe.Ptr(int64(40000))},
			want: sizes{65536 << 20, 65536 << 20, 40000 << 20},
		},
		{
			name: "a cgroup limit below MemTotal caps the CPU's memory",
			host: probe.HostInfo{MemoryTotalMB: probe.Ptr(int64(65536)), MemoryLimitMB: probe.Ptr(int64(8192))},
			want: sizes{8192 << 20, 8192 << 20, 0},
		},
		{
			name: "a cgroup limit above MemTotal changes nothing",
			host: probe.HostInfo{MemoryTotalMB: probe.Ptr(int64(8192)), MemoryLimitMB: probe.Ptr(int64(65536))},
			want: sizes{8192 << 20, 8192 << 20, 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &probe.Report{
				Host:    tt.host,
				Summary: probe.Summary{DefaultDevice: "cpu"},
				Devices: []probe.Device{{ID: "cpu", Backend: "cpu", DeviceType: "cpu"}},
			}
			tg, err := TargetFromProbe(rep)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, sizes{tg.TotalBytes, tg.UsableBytes, tg.FreeBytes}); diff != "" {
				t.Errorf("CPU target sizes (-want +got):\n%s", diff)
			}
		})
	}
}

// Over several devices an unset ZeRO stage takes the stack's: FSDP shards
// everything (FULL_SHARD), DeepSpeed is taken as ZeRO-2, the rest
// replicate; -1 replicates whatever the stack.
func TestShardingFollowsTheStack(t *testing.T) {
	for _, c := range []struct {
		stack oomsim.Stack
		stage int
		want  oomsim.Sharding
	}{
		{oomsim.StackFSDP, 0, oomsim.ShardZeRO3},
		{oomsim.StackDeepSpeed, 0, oomsim.ShardZeRO2},
		{oomsim.StackHF, 0, oomsim.ShardNone},
		{oomsim.StackFSDP, -1, oomsim.ShardNone},
		{oomsim.StackHF, 3, oomsim.ShardZeRO3},
	} {
		r, err := Recommend(Input{Model: catalogueModel(t, "llama-2-7b"), Precision: "bf16", Strategy: "auto", Target: catalogueTarget(t, "a100-80gb"), RunSettings: RunSettings{Mode: oomsim.Training, Devices: 4, Stack: c.stack, ZeROStage: c.stage}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Plan.Sharding != c.want {
			t.Errorf("%s, stage %d: sharding %s, want %s", c.stack, c.stage, r.Plan.Sharding, c.want)
		}
	}
}

// A precision a CUDA GPU only runs slowly (bf16 before Ampere, 8-bit
// before Turing) is planned as asked, with the reason saying so.
func TestSlowPrecisionsArePlanned(t *testing.T) {
	for _, c := range []struct{ device, req string }{{"t4", "bf16"}, {"v100-32gb", "8bit"}, {"v100-32gb", "bf16"}} {
		r, err := Recommend(Input{Model: catalogueModel(t, "llama-2-7b"), Precision: capability.Precision(c.req), PrecisionSource: "flag --precision", Strategy: "auto", Target: catalogueTarget(t, c.device), RunSettings: RunSettings{Mode: oomsim.Inference}})
		if err != nil {
			t.Fatalf("%s on %s: %v", c.req, c.device, err)
		}
		if string(r.Precision) != c.req {
			t.Errorf("%s on %s: planned %s", c.req, c.device, r.Precision)
		}
		found := false
		for _, w := range r.Reasons {
			if w.Decision == "precision" && strings.Contains(w.Why, "not natively") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s on %s: no reason says it is not native: %+v", c.req, c.device, r.Reasons)
		}
	}
}

// An Ollama of v0.2-v0.9 takes its default parallel slots when their KV
// caches fit, and one slot when they do not: it starts either way.
func TestOllamaTakesItsSlotsWhenTheyFit(t *testing.T) {
	plan := func(device string) *Result {
		t.Helper()
		r, err := Recommend(Input{Model: catalogueModel(t, "llama-3-8b"), Precision: "4bit", Strategy: "auto", Target: catalogueTarget(t, device), RunSettings: RunSettings{Mode: oomsim.Inference, Stack: oomsim.StackOllama, StackVersion: "0.5.7", SeqLen: 8192, BatchSize: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := plan("a100-80gb"); r.Plan.BatchSize != 4 || !r.Fits {
		t.Errorf("a100-80gb: %d slots (fits %v), want 4 that fit", r.Plan.BatchSize, r.Fits)
	}
	if r := plan("rtx-3060-8gb"); r.Plan.BatchSize != 1 {
		t.Errorf("rtx-3060-8gb: %d slots, want 1 (4 × 8192 tokens do not fit)", r.Plan.BatchSize)
	}
}

// Ollama lowers a num_ctx beyond the model's trained context to that
// context before it sizes the KV cache (llm/server.go), and serves the
// hybrid recurrent architectures one request at a time whatever
// OLLAMA_NUM_PARALLEL says (server/sched.go); --max concurrency says so.
// llama.cpp allocates what it is asked for.
func TestOllamaClampsContextAndSlots(t *testing.T) {
	qwen3, err := ParseHFConfig(readModel(t, "qwen3-8b.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Model: qwen3, Strategy: "auto", Target: catalogueTarget(t, "a100-80gb"), RunSettings: RunSettings{Mode: oomsim.Inference, Stack: oomsim.StackOllama, StackVersion: "0.12.0", SeqLen: 65536, BatchSize: 1}}
	r, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Plan.SeqLen != qwen3.Arch.MaxPositions {
		t.Errorf("ollama num_ctx 65536 on %s: seq %d, want its %d positions", qwen3.Name, r.Plan.SeqLen, qwen3.Arch.MaxPositions)
	}
	found := false
	for _, x := range r.Reasons {
		found = found || (x.Decision == "seq_len" && strings.Contains(x.Why, "lowers num_ctx 65536"))
	}
	if !found {
		t.Errorf("no reason says Ollama lowers num_ctx: %+v", r.Reasons)
	}
	in.Stack, in.StackVersion = oomsim.StackLlamaCpp, ""
	if r, err = Recommend(in); err != nil {
		t.Fatal(err)
	}
	if r.Plan.SeqLen != 65536 {
		t.Errorf("llama.cpp -c 65536: seq %d, want 65536", r.Plan.SeqLen)
	}

	next, err := ParseHFConfig(readModel(t, "qwen3-next-80b-a3b.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	in = Input{Model: next, Strategy: "auto", Target: catalogueTarget(t, "h100-80gb"), Precision: capability.Int4, RunSettings: RunSettings{Mode: oomsim.Inference, Stack: oomsim.StackOllama, StackVersion: "0.13.0", SeqLen: 32768, BatchSize: 8}}
	if r, err = Recommend(in); err != nil {
		t.Fatal(err)
	}
	if r.Plan.BatchSize != 1 {
		t.Fatalf("ollama qwen3_next at 8 requests: batch %d, want 1", r.Plan.BatchSize)
	}
	in.BatchSize, in.Max = 1, MaxConcurrency
	if r, err = Recommend(in); err != nil {
		t.Fatal(err)
	}
	if r.Max == nil || r.Max.Value != 1 || !strings.Contains(r.Max.Limit, "one request at a time") {
		t.Errorf("ollama qwen3_next --max concurrency: %+v, want 1 with the reason", r.Max)
	}
}

// vLLM schedules at most max_num_seqs sequences at once: --max concurrency
// stops there (1024 by default on an H100 from 0.9) and says so, and a
// larger --max-num-seqs lets memory bound it instead.
func TestMaxConcurrencyStopsAtMaxNumSeqs(t *testing.T) {
	in := Input{Model: catalogueModel(t, "llama-3-8b"), Precision: "bf16", Strategy: "auto", Target: catalogueTarget(t, "h100-80gb"),
		RunSettings: RunSettings{Mode: oomsim.Inference, Stack: oomsim.StackVLLM, StackVersion: "0.11.0", SeqLen: 256, BatchSize: 1, Max: MaxConcurrency}}
	r, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Max == nil || r.Max.Value != 1024 || !strings.Contains(r.Max.Limit, "max_num_seqs") {
		t.Errorf("vllm --max concurrency at 256 tokens: %+v, want 1024, bounded by max_num_seqs", r.Max)
	}
	in.MaxNumSeqs = 2048
	if r, err = Recommend(in); err != nil {
		t.Fatal(err)
	}
	if r.Max == nil || r.Max.Limit != "" || r.Max.Value <= 1024 || r.Max.Value >= 2048 {
		t.Errorf("with --max-num-seqs 2048: %+v, want a memory bound between 1024 and 2048", r.Max)
	}
}

// `ollama pull` fetches the library's default tag, 4-bit GGUF: a plan for
// Ollama that names no precision is a 4-bit one even on a card that holds
// the 16-bit weights, and says why; a named precision still wins.
func TestOllamaPlansItsDefaultTag(t *testing.T) {
	in := Input{Model: catalogueModel(t, "llama-3-8b"), Strategy: "auto", Target: catalogueTarget(t, "a100-80gb"), RunSettings: RunSettings{Mode: oomsim.Inference, Stack: oomsim.StackOllama, SeqLen: 2048, BatchSize: 1}}
	r, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Precision != capability.Int4 || r.Plan.Quant != oomsim.QuantGGUF {
		t.Errorf("precision %s, quant %q; want 4bit gguf", r.Precision, r.Plan.Quant)
	}
	found := false
	for _, x := range r.Reasons {
		found = found || (x.Decision == "precision" && strings.Contains(x.Why, "default model tag"))
	}
	if !found {
		t.Errorf("no reason names Ollama's default tag: %+v", r.Reasons)
	}
	in.Precision = capability.BF16
	if r, err = Recommend(in); err != nil || r.Precision != capability.BF16 {
		t.Errorf("with --precision bf16: %v, %v", r.Precision, err)
	}
}

// ZeRO-3 on one device shares nothing out but is how DeepSpeed offloads the
// parameters: with --offload cpu --offload-params one block's parameters
// are on the device, and the gradients go to the host with the states.
func TestZeRO3OnOneDeviceOffloadsParameters(t *testing.T) {
	in := Input{Model: catalogueModel(t, "llama-2-7b"), Precision: "bf16", Strategy: "auto", Target: catalogueTarget(t, "a100-80gb"), RunSettings: RunSettings{Mode: oomsim.Training, Stack: oomsim.StackDeepSpeed, BatchSize: 1, SeqLen: 2048}}
	plain, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	in.ZeROStage, in.Offload, in.OffloadParams = 3, oomsim.OffloadCPU, true
	off, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	if off.Plan.Sharding != oomsim.ShardZeRO3 || off.Plan.Devices != 1 {
		t.Fatalf("plan sharding %s over %d devices, want zero3 over 1", off.Plan.Sharding, off.Plan.Devices)
	}
	if w, g := off.Memory.WeightsBytes, off.Memory.GradientsBytes; w >= plain.Memory.WeightsBytes/10 || g >= plain.Memory.GradientsBytes/10 {
		t.Errorf("offloaded weights %d and gradients %d, want a block's worth (replicated: %d, %d)", w, g, plain.Memory.WeightsBytes, plain.Memory.GradientsBytes)
	}
	if off.Memory.HostBytes == 0 {
		t.Error("nothing planned on the host")
	}
}

// When the budget falls inside the band far from the estimate, the edge
// reason names what takes the total across it: devctl's own error on runs
// of that kind, or an assumption the user can pin. Near the budget it is
// "near the limit" whatever moves it.
func TestEdgeNamesWhatCrossesTheBudget(t *testing.T) {
	in := Input{Model: catalogueModel(t, "llama-2-7b"), Precision: "bf16", Strategy: "auto", RunSettings: RunSettings{Mode: oomsim.LoRA, Stack: oomsim.StackHF, Attention: oomsim.AttentionSDPA}}
	target := catalogueTarget(t, "a100-80gb")
	in.Target = target
	r, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	central, band := r.Memory.TotalBytes, r.Memory.Band
	if band.LowBy != oomsim.SpreadWhat || band.HighBy == oomsim.SpreadWhat || band.HighBy == "" {
		t.Fatalf("band's bottom by %q, top by %q; this test wants devctl's own error at the bottom and an assumption at the top", band.LowBy, band.HighBy)
	}
	edge := func(budget int64) string {
		t.Helper()
		tg := target
		tg.UsableBytes = budget
		in.Target = tg
		r, err := Recommend(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range r.Reasons {
			if w.Decision == "edge" {
				return w.Choice
			}
		}
		return ""
	}
	// Between the band's bottom and 10% below the estimate: devctl's own
	// error takes the total across; just below the estimate: near the limit.
	if got := edge((band.LowBytes + central*10/11) / 2); got != "within devctl's error" {
		t.Errorf("far below the estimate, inside the band: edge %q, want \"within devctl's error\"", got)
	}
	if got := edge(central * 98 / 100); got != "near the limit" {
		t.Errorf("2%% below the estimate: edge %q, want \"near the limit\"", got)
	}
	// Between 10% above the estimate and the band's top, an assumption
	// (here the attention kernel) takes it across.
	if got := edge((central*11/10 + band.HighBytes) / 2); got != "an assumption decides" {
		t.Errorf("far above the estimate, inside the band: edge %q, want \"an assumption decides\"", got)
	}
}
