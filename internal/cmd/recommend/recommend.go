// Package recommend is the `devctl recommend` command: will a model fit a
// device, in what precision, with what settings, and what to change when
// it will not.
package recommend

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/devctl/devctl/internal/capability"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/units"
)

// formats are what -o offers.
var formats = output.Spec{output.Table, output.JSON, output.YAML, output.Env}

// Options are the recommend command's flags and the dependencies it uses.
type Options struct {
	IO *iostreams.IOStreams
	// Config loads the configuration with the command's own flag layer
	// (--strategy, --device) on top of the global flags.
	Config func(extra map[string]config.Flag) (*config.Config, error)
	// GlobalConfigFlags are the config keys global flags set, to catch a
	// --strategy that contradicts --memory-strategy.
	GlobalConfigFlags map[string]config.Flag
	// Probe runs the probe under cfg.
	Probe func(ctx context.Context, cfg *config.Config) (*probe.Report, error)
	// Deps are the planner's other dependencies (history, files, the Hub).
	Deps recommend.Deps

	ModelParams string
	Model       string
	ModelConfig string

	Mode      string
	BatchSize int
	SeqLen    int
	Optimizer string
	Recompute string
	// RecomputeLayers is --recompute-layers.
	RecomputeLayers int
	Attention       string
	Strategy        string
	Devices         int
	Convention      string
	Offload         string
	// OffloadParams also moves parameters to the host (ZeRO-3).
	OffloadParams bool
	// FSDP is --fsdp.
	FSDP           bool
	ZeROStage      int
	TensorParallel bool
	// TensorParallelSize and PipelineParallelSize are the degrees of
	// model parallelism (0: every device of a stage with --tensor-parallel,
	// else none).
	TensorParallelSize, PipelineParallelSize int
	// ExpertParallelSize splits a mixture of experts' routed experts.
	ExpertParallelSize int
	// ContextParallelSize splits each training sequence over devices.
	ContextParallelSize int
	// EvalBatchSize is --eval-batch-size: an evaluation forward between
	// training steps.
	EvalBatchSize int
	Device        string
	// DeviceMemory names a device by its memory (24GiB): a generic GPU of
	// that size, or the size of the --device given.
	DeviceMemory string
	Output       string

	Stack string
	// StackVersion is the stack's release (4.44.2), when not this machine's.
	StackVersion string
	// TorchVersion is PyTorch's release (2.8.0), when not this machine's.
	TorchVersion string
	// WeightBits is --weight-bits: a quantised weight's storage in bits.
	WeightBits  float64
	Mixed       string
	LoRARank    int
	DoRA        bool
	GaLoreRank  int
	LoRATargets string
	LoRALayers  int
	Quant       string
	Compile     bool
	Expandable  bool
	// Kernels is --kernels: liger, fused-ce, chunked-ce, full-ce, compile, tiled-mlp.
	Kernels    string
	Objective  string
	PromptLen  int
	GPUMemUtil float64
	// Rollout, VLLMSleep and KLBeta describe a GRPO step (--objective grpo).
	Rollout            string
	VLLMSleep          bool
	KLBeta             float64
	StepsPerGeneration int
	NumGenerations     int
	// KVCacheDtype is --kv-cache-dtype: auto or the cache's element type.
	KVCacheDtype string
	// MaxNumSeqs and MaxBatchedTokens are a serving engine's
	// max_num_seqs and max_num_batched_tokens (0: the engine's).
	MaxNumSeqs       int
	MaxBatchedTokens int
	// PrefillChunk is a local engine's prompt chunk (--prefill-chunk).
	PrefillChunk int
	// Speculative is --speculative: none or mtp.
	Speculative string
	// KVCacheTokens is a serving engine's KV cache given as a count of
	// tokens (0: its memory share).
	KVCacheTokens int
	// SequenceParallel is --sequence-parallel: auto, on or off.
	SequenceParallel string
	// GPULayers is --gpu-layers: llama.cpp's -ngl, Ollama's num_gpu.
	GPULayers int
	// NCPUMoE and CPUMoE are llama.cpp's --n-cpu-moe and --cpu-moe.
	NCPUMoE int
	CPUMoE  bool
	Max     string
	// RequireFit makes a plan that does not fit exit 3 (scripts and CI).
	RequireFit bool
	// LookupEnv reads the environment the planned run would inherit
	// (PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF).
	LookupEnv func(string) (string, bool)

	// precisionRegime is what a Lightning --precision name (bf16-true,
	// bf16-mixed) says about the weights: read by RunE from the global flag.
	precisionRegime string
	format          output.Format         // set by Complete
	run             recommend.RunSettings // set by Validate
	strat           oomsim.Strategy       // --strategy, set by Validate ("" for auto)
	devMem          int64                 // --device-memory, set by Validate
	devicesSet      bool                  // --devices was given, read by RunE
	ggufPrecision   capability.Precision  // the weights' class a GGUF --quant type states, by Validate
	expandableFrom  string                // the environment variable that set Expandable, by RunE
}

// NewCmdRecommend builds `devctl recommend`. runF, when not nil, replaces
// the run step (tests stop after flag parsing).
func NewCmdRecommend(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO:                f.IO,
		Config:            f.ConfigWith,
		GlobalConfigFlags: f.Global.ConfigFlags,
		Probe: func(ctx context.Context, cfg *config.Config) (*probe.Report, error) {
			h, err := f.Host()
			if err != nil {
				return nil, err
			}
			rep, _, err := cmdutil.RunProbeOn(ctx, f, h, cfg, nil)
			return rep, err
		},
		Deps:      cmdutil.PlanDeps(f),
		LookupEnv: f.LookupEnv,
	}
	cmd := &cobra.Command{
		Use:   "recommend",
		Short: "Say whether a model fits a device, in what precision and with what settings",
		Long: `Recommend estimates the memory a model needs on a device (weights, gradients,
optimizer state, activations, KV cache, runtime overhead), picks a memory
strategy and a precision with reasons, prints the environment variables to
set, and, when the plan does not fit, runs the fallback ladder to find the
cheapest change that does.

The device is the probed default (or --device cuda:1), or a catalogued one for
planning without the hardware (--device a100-80gb); a catalogued device does
not run the probe.`,
		Example: `  devctl recommend --model-params 150M
  devctl recommend --model llama-2-7b --mode training --device a100-80gb
  devctl recommend --model-config ./config.json --mode inference --seq-len 4096 -o json
  eval "$(devctl recommend --model mistral-7b --device l4 -o env)"
  devctl recommend --model t5-3b --mode training --convention deepspeed --devices 8 --offload cpu`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.devicesSet = cmd.Flags().Changed("devices")
			if p := cmd.Flag("precision"); p != nil && p.Changed {
				opts.precisionRegime = capability.TrainingRegime(p.Value.String())
			}
			if e := cmd.Flag("expandable-segments"); e != nil && !e.Changed && opts.LookupEnv != nil {
				opts.Expandable, opts.expandableFrom = recommend.ExpandableFromEnv(opts.LookupEnv)
			}
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.ModelParams, "model-params", "", "model size: 150M, 7B, 1.3e9, 350k, 6738415616 (K/M/B/T, decimal)")
	fl.StringVar(&opts.Model, "model", "", "a catalogued model (gpt2, llama-2-7b, ...; configs/models.yaml) or any Hugging Face model as ORG/NAME: config.json and the safetensors index from the local HF cache, else downloaded (HF_TOKEN, HF_ENDPOINT, HF_HUB_OFFLINE; never weights), else devctl's built-in config.json of 582 models (configs/hub; also by the name after ORG/, e.g. llama-3.1-8b, and re-uploads by the model they package: unsloth/...-bnb-4bit, ...-AWQ, ...-GGUF, mlx-community/...-4bit, and fine-tunes by the sized model name they contain: ORG/BgGPT-Gemma-3-12B-IT is gemma-3-12b-it), or an Ollama tag as ollama run takes it (llama3.1:8b, qwen2.5:7b-instruct-q8_0: the model it packages, stored as the tag says, Q4_K_M without one, on --stack ollama); a quantised checkpoint is planned as stored unless --precision says otherwise")
	fl.StringVar(&opts.ModelConfig, "model-config", "", "a Hugging Face config.json, or a model directory holding one (and its model.safetensors.index.json)")
	fl.StringVar(&opts.Mode, "mode", "inference", "inference, training, lora or qlora")
	fl.IntVar(&opts.BatchSize, "batch-size", 1, "batch per device step (kept when the ladder shrinks the micro-batch)")
	fl.IntVar(&opts.SeqLen, "seq-len", 0, "tokens per sequence (default 2048, or the model's maximum if shorter)")
	fl.StringVar(&opts.Optimizer, "optimizer", "auto", "auto (the stack's default: adamw, or adamw-fused where the Trainer defaults to it: transformers 4.54 or later on PyTorch 2.8 or later, both releases known), adamw (PyTorch's default foreach step, one state-sized temporary), adamw-fused (fused=True: none), adamw-8bit, paged-adamw, paged-adamw-8bit, sgd, adafactor, lion, muon (AdamW for the embeddings and head), galore, galore-8bit, galore-layerwise, galore-8bit-layerwise, lomo, adalomo or badam (the last seven full training only)")
	fl.IntVar(&opts.GaLoreRank, "galore-rank", oomsim.DefaultGaLoreRank, "projection rank of a GaLore optimizer (the HF Trainer's optim_args rank)")
	fl.StringVar(&opts.Recompute, "recompute", "auto", "activation checkpointing: auto (the stack's default), none, selective, full, or offload (full, with the checkpoints moved to host memory: torchtune enable_activation_offloading, Unsloth)")
	fl.IntVar(&opts.RecomputeLayers, "recompute-layers", 1, "blocks each checkpoint spans under full recomputation: the backward recomputes them together (Megatron's --recompute-num-layers with --recompute-method uniform)")
	fl.StringVar(&opts.Attention, "attention", "auto", "attention implementation: auto (the stack's: fused everywhere but --stack pytorch), eager, sdpa (PyTorch's fused kernel, grouped k/v expanded where the stack does; also xformers, flex) or flash (flash-attention, grouped k/v as they are; also flash_attention_2, fa2)")
	fl.StringVar(&opts.StackVersion, "stack-version", "", "the release of the stack's distribution when it is not the one installed here (transformers 4.44.2 for hf, deepspeed, llama-factory, ms-swift and axolotl; vllm 0.6.4; llama.cpp b6000): transformers before 4.45 keeps every prompt position's logits in generate and runs eager attention before a family's SDPA release, vLLM before 0.8 profiles max_model_len tokens, llama.cpp before b6327 and Ollama before 0.12.4 run without flash attention")
	fl.StringVar(&opts.TorchVersion, "torch-version", "", "the PyTorch release when it is not the one installed here (2.8.0): with transformers 4.54 or later (--stack-version; TRL 0.21 or later for --stack trl) on PyTorch 2.8 or later, the Trainer's default optimizer is fused AdamW, whose step makes no temporaries")
	fl.StringVar(&opts.Stack, "stack", "auto", "the framework that runs it: auto, hf (transformers, accelerate, PEFT), trl, axolotl, llama-factory, ms-swift, deepspeed, xtuner (DeepSpeed ZeRO-2, checkpointing on), fsdp (also OLMo-core, lingua, fms-fsdp), torchtitan (FSDP2 with fused AdamW), nemo-automodel (FSDP2 over the checkpoint's bf16), llm-foundry, megatron (Megatron-LM, NeMo, Megatron-Bridge, ms-swift's Megatron backend), litgpt, torchtune, unsloth, vllm, sglang, tgi, lmdeploy, tensorrt-llm, llama.cpp (also koboldcpp, lm-studio), ollama, exllamav2 (also exllama, TabbyAPI, exui: EXL2/GPTQ files at --weight-bits), exllamav3 (EXL3 files), mlx, pytorch")
	fl.IntVar(&opts.PromptLen, "prompt-len", 0, "serving: how many of the --seq-len tokens are the prompt (the rest are generated); the prefill works on the prompt, the KV cache holds them all (0: all prompt)")
	fl.StringVar(&opts.Objective, "objective", "sft", "the training objective: sft, dpo or kto (a frozen reference model beside the trained one in full training), orpo, simpo or cpo (chosen and rejected completions: twice the sequences), or grpo (TRL's GRPOTrainer, Unsloth's GRPO: generation, then training on prompt + completion; see --rollout, --prompt-len, --kl-beta)")
	fl.StringVar(&opts.Rollout, "rollout", "hf", "with --objective grpo, what generates the completions: hf (the policy's model.generate, TRL's use_vllm=False), vllm-colocate (vLLM in the training process: --gpu-memory-utilization is its share, TRL's default 0.3) or vllm-server (a vLLM server on other devices)")
	fl.BoolVar(&opts.VLLMSleep, "vllm-sleep", false, "with --rollout vllm-colocate: vLLM's sleep mode releases its memory during the training step (TRL's vllm_enable_sleep_mode)")
	fl.IntVar(&opts.StepsPerGeneration, "steps-per-generation", 1, "with --objective grpo, TRL's steps_per_generation (its default: gradient_accumulation_steps): each device generates --batch-size × N completions at once")
	fl.IntVar(&opts.NumGenerations, "num-generations", 8, "with --objective grpo, TRL's num_generations: it sizes the step only with --stack-version below 0.15, where --batch-size counted prompts (since 0.15 it counts completions)")
	fl.Float64Var(&opts.KLBeta, "kl-beta", -1, "with --objective grpo, the KL coefficient beta: 0 keeps no reference model; unset, the TRL release's default (0.0 since 0.19, 0.04 before)")
	fl.StringVar(&opts.Mixed, "mixed-precision", "auto", "how 16-bit training holds weights: auto (the stack's), amp (fp32 master copy, autocast) or pure (16-bit weights and optimizer state); with --mode inference, amp is a forward under torch.autocast over fp32 weights; with --mode lora, amp is a frozen base loaded in fp32 (transformers before v5 without torch_dtype) under 16-bit autocast")
	fl.IntVar(&opts.LoRARank, "lora-rank", 16, "LoRA/QLoRA adapter rank")
	fl.BoolVar(&opts.DoRA, "dora", false, "the adapters are DoRA's (weight-decomposed LoRA: peft use_dora=True, LLaMA-Factory use_dora, axolotl peft_use_dora, torchtune's DoRA recipes): a trainable magnitude per output feature, and each adapted Linear keeps its output and the adapter's for the backward (with lora_dropout, peft also keeps the layer's dequantised weight); --mode lora or qlora")
	fl.StringVar(&opts.LoRATargets, "lora-targets", "auto", "modules LoRA adapts: auto (the stack's), qv, qkvo or all-linear")
	fl.IntVar(&opts.LoRALayers, "lora-layers", 0, "adapt only the last N blocks (0: all, or the stack's: mlx adapts 16)")
	fl.Float64Var(&opts.WeightBits, "weight-bits", 0, "bits per quantised weight, constants included, for a quantisation --quant does not name (GGUF Q5_K_M 5.69, Q6_K 6.56, mlx 6-bit 6.5, EXL2 4.65 bpw); with 8bit or 4bit precision")
	fl.StringVar(&opts.Quant, "quant", "auto", "storage of 8/4-bit weights: auto (bnb on CUDA, the stack's own for mlx and llama.cpp), bnb, gptq (also awq), fp8, gguf, mlx, or a GGUF file's type (Q4_K_M, Q5_K_M, Q6_K, Q8_0, IQ3_XXS, UD-Q4_K_XL: gguf at that type's bits per weight, 4bit or 8bit without --precision)")
	fl.BoolVar(&opts.Compile, "compile", false, "the model runs under torch.compile (fewer saved activations)")
	fl.BoolVar(&opts.Expandable, "expandable-segments", false, "PyTorch's CUDA allocator runs with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: freed blocks are reused whatever their size, so reserved memory stays near the peak of live tensors (torchtitan's launcher sets it); unset, read from PYTORCH_ALLOC_CONF or PYTORCH_CUDA_ALLOC_CONF")
	fl.StringVar(&opts.Kernels, "kernels", "", "kernels the run swaps in, comma-separated: liger (Liger Kernel: fused linear cross-entropy, RMSNorm and SwiGLU; TRL/axolotl use_liger_kernel), fused-ce (a loss that never materialises the logits: Cut Cross-Entropy, Liger's alone), chunked-ce (a loss over chunks of the logits), full-ce (every position's logits materialised and upcast to fp32, a plain F.cross_entropy: what a loop of one's own computes over the logits a Megatron-Core model returns, where Megatron's own loss is its vocab-parallel one), compile (as --compile), tiled-mlp (the MLP over tiles of the sequence, recomputed per tile: DeepSpeed ALST's TiledMLP, Unsloth's long-context tiling)")
	fl.Float64Var(&opts.GPUMemUtil, "gpu-memory-utilization", 0, "a serving engine's memory share: vLLM's gpu_memory_utilization (default 0.9), SGLang's mem_fraction_static, lmdeploy's cache_max_entry_count, TensorRT-LLM's free_gpu_memory_fraction, TGI's cuda_memory_fraction x TGI_WIGGLE_ROOM (default: the engine's)")
	fl.StringVar(&opts.KVCacheDtype, "kv-cache-dtype", "auto", "the KV cache's element type when serving: auto (the compute dtype), fp16, bf16, fp8 (vLLM/SGLang --kv-cache-dtype fp8), int8, q8_0 or q4_0 (llama.cpp -ctk/-ctv, OLLAMA_KV_CACHE_TYPE), q8, q6 or q4 (ExLlama's cache modes, TabbyAPI cache_mode)")
	fl.IntVar(&opts.MaxNumSeqs, "max-num-seqs", 0, "a serving engine's max_num_seqs (SGLang's max_running_requests): the sequences its start-up profile draws logits for (0: the engine's default)")
	fl.StringVar(&opts.Speculative, "speculative", "none", "speculative decoding the serving engine runs: none, or mtp (the checkpoint's multi-token-prediction layers as the draft: vLLM's --speculative-config '{\"method\": \"mtp\"}', SGLang's --speculative-algorithm NEXTN, llama.cpp's MTP): their weights and a KV cache of their own come on top")
	fl.IntVar(&opts.PrefillChunk, "prefill-chunk", 0, "the prompt tokens one forward of a local engine evaluates: llama.cpp's --ubatch-size (512), Ollama's num_batch (512), ExLlama's max_input_len / TabbyAPI's chunk_size (2048), mlx-lm's --prefill-step-size (2048) (0: the engine's default)")
	fl.IntVar(&opts.MaxBatchedTokens, "max-num-batched-tokens", 0, "a serving engine's prefill budget, the tokens its start-up forward profiles: vLLM's max_num_batched_tokens, SGLang's chunked_prefill_size, TGI's max_batch_prefill_tokens (0: the engine's default)")
	fl.IntVar(&opts.KVCacheTokens, "kv-cache-tokens", 0, "a serving engine's KV cache as a count of tokens rather than a memory share: vLLM's num_gpu_blocks_override x block_size, lmdeploy's cache_max_entry_count of 1 or more (blocks x cache_block_seq_len: 128 before v0.2.2, 64 after), SGLang's max_total_tokens and TensorRT-LLM's max_tokens_in_paged_kv_cache (caps) (0: the share)")
	fl.BoolVar(&opts.TensorParallel, "tensor-parallel", false, "with --devices N: tensor (and sequence) parallel training over every device, splitting weights and activations (--tensor-parallel-size for fewer)")
	fl.IntVar(&opts.TensorParallelSize, "tensor-parallel-size", 0, "with --devices N: tensor parallelism over this many devices (Megatron's --tensor-model-parallel-size, vLLM's --tensor-parallel-size); the devices left are data-parallel replicas, which --zero-stage shards over")
	fl.StringVar(&opts.SequenceParallel, "sequence-parallel", "auto", "with tensor parallelism in training: on (auto; Megatron's --sequence-parallel, as NeMo's and Megatron-Bridge's recipes and torchtitan run TP: the norms' and linear layers' inputs split by tokens too) or off (Megatron-LM without --sequence-parallel, Megatron-DeepSpeed: those inputs whole on every device)")
	fl.IntVar(&opts.ExpertParallelSize, "expert-parallel-size", 0, "with --devices N and a mixture-of-experts model: the devices of a pipeline stage its routed experts are split over (Megatron's --expert-model-parallel-size)")
	fl.IntVar(&opts.EvalBatchSize, "eval-batch-size", 0, "training that evaluates between steps: the evaluation batch (the HF Trainer's per_device_eval_batch_size, 8 by default when it evaluates); its forward's logits and loss copies beside the weights and states can be the peak (0: no evaluation planned)")
	fl.IntVar(&opts.ContextParallelSize, "context-parallel-size", 0, "with --devices N, training: the devices each sequence is split over by tokens (Megatron's --context-parallel-size, torchtitan's context_parallel_degree, ring attention, DeepSpeed-Ulysses sequence_parallel_size); each keeps 1/N of the activations and logits")
	fl.IntVar(&opts.PipelineParallelSize, "pipeline-parallel-size", 0, "with --devices N: pipeline stages (1F1B) the blocks are split into (Megatron's --pipeline-model-parallel-size); the first stage holds as many micro-batches in flight as there are stages")
	fl.StringVar(&opts.Max, "max", "", "find the largest batch, seq (context length), concurrency (sequences served at once) or gpu-layers (llama.cpp's -ngl, Ollama's num_gpu) that fits")
	fl.IntVar(&opts.NCPUMoE, "n-cpu-moe", 0, "llama.cpp's --n-cpu-moe: a mixture-of-experts model's routed experts of the first N blocks stay in host memory, their attention and KV cache on the device (--stack llama.cpp)")
	fl.BoolVar(&opts.CPUMoE, "cpu-moe", false, "llama.cpp's --cpu-moe: every block's routed experts stay in host memory (--stack llama.cpp)")
	fl.IntVar(&opts.GPULayers, "gpu-layers", 0, "llama.cpp's -ngl (--n-gpu-layers), Ollama's num_gpu: the layer slots on the device, the output layer counting as one; the other blocks and their KV cache run from host memory (0: all; --stack llama.cpp or ollama)")
	fl.StringVar(&opts.DeviceMemory, "device-memory", "", "the device's memory (24GiB, 16GB): plan for a GPU of that size, or resize --device")
	fl.BoolVar(&opts.RequireFit, "require-fit", false, "exit 3 when the plan as given does not fit (the output still shows what would)")
	// --strategy did what the global --memory-strategy does; it stays as a
	// hidden alias so that old scripts keep working, and one flag is shown.
	fl.StringVar(&opts.Strategy, "strategy", "auto", "alias of the global --memory-strategy")
	_ = fl.MarkHidden("strategy")
	fl.IntVar(&opts.Devices, "devices", 1, "devices to use (data parallel, or sharded with --zero-stage / the ladder)")
	fl.StringVar(&opts.Convention, "convention", "devctl", "a published estimator to show beside devctl's estimate: eleutherai, accelerate or deepspeed (never changes whether it fits)")
	fl.StringVar(&opts.Offload, "offload", "none", "offload optimizer states: none or cpu")
	fl.BoolVar(&opts.OffloadParams, "offload-params", false, "with --offload cpu and ZeRO-3, offload parameters too (on one device as well: ZeRO-Infinity, one block on the device at a time)")
	fl.BoolVar(&opts.FSDP, "fsdp", false, "the sharding is PyTorch FSDP (accelerate's or axolotl's fsdp_config), not DeepSpeed, under a Trainer stack (hf, trl, axolotl, llama-factory, ms-swift): axolotl's keeps the bf16 it loads (no fp32 master), the others' states are fp32 as under DeepSpeed (accelerate upcasts trainable parameters under mixed precision); needs --zero-stage 2 or 3 over several --devices")
	fl.IntVar(&opts.ZeROStage, "zero-stage", 0, "ZeRO stage for --convention deepspeed or --devices N: 1 (optimizer states sharded, gradients whole), 2 or 3 (0: the stack's, FULL_SHARD (3) for fsdp and torchtitan, ZeRO-2 for deepspeed, none for the rest)")
	fl.StringVar(&opts.Device, "device", "", "a probed device (cuda:1, cuda, cpu), a catalogued one (t4, a100-80gb, rtx-4090, h100-80gb, mi300x, apple-m4-16gb, tpu-v5e, ...; names as nvidia-smi prints them and as people write them work too: RTX 3090 24GB, A100 80G, 2x H100) or a size (24GiB)")
	formats.Register(fl, &opts.Output, "")
	return cmd
}

// Run completes, validates, plans and prints.
func Run(ctx context.Context, o *Options) error { return cmdutil.RunSteps(ctx, o) }

// Complete parses -o.
func (o *Options) Complete() (err error) {
	o.format, err = formats.Parse(o.Output)
	return err
}

// Validate checks the flags that need no I/O and reads the choice flags
// into the planner's words.
func (o *Options) Validate() error {
	if (recommend.ModelSpec{Params: o.ModelParams, Name: o.Model, Config: o.ModelConfig}).Given() != 1 {
		return cmdutil.Usagef("give exactly one of --model-params, --model or --model-config")
	}
	r := &o.run
	auto := func(v string) string {
		if strings.EqualFold(strings.TrimSpace(v), "auto") {
			return ""
		}
		return v
	}
	type parsed struct {
		flag, v, want string
		ok            bool
	}
	var choices []parsed
	choice := func(flag, v, want string, ok bool) { choices = append(choices, parsed{flag, v, want, ok}) }
	var ok bool
	r.Mode, ok = oomsim.Parse(o.Mode, oomsim.Modes)
	choice("--mode", o.Mode, oomsim.List(oomsim.Modes), ok)
	r.Optimizer, ok = oomsim.Parse(auto(o.Optimizer), oomsim.Optimizers)
	choice("--optimizer", o.Optimizer, "auto, "+oomsim.List(oomsim.Optimizers), ok || auto(o.Optimizer) == "")
	r.Recompute, ok = oomsim.Parse(auto(o.Recompute), oomsim.Recomputes)
	choice("--recompute", o.Recompute, "auto, "+oomsim.List(oomsim.Recomputes), ok || auto(o.Recompute) == "")
	r.Attention, ok = oomsim.ParseAttention(o.Attention)
	choice("--attention", o.Attention, oomsim.List(oomsim.Attentions), ok)
	r.Convention, ok = oomsim.Parse(o.Convention, oomsim.Conventions)
	choice("--convention", o.Convention, oomsim.List(oomsim.Conventions), ok)
	r.Offload, ok = oomsim.Parse(o.Offload, oomsim.Offloads)
	choice("--offload", o.Offload, oomsim.List(oomsim.Offloads), ok)
	o.strat, ok = oomsim.Parse(o.Strategy, append([]oomsim.Strategy{"auto"}, config.Strategies...))
	choice("--strategy", o.Strategy, "auto, "+oomsim.List(config.Strategies), ok)
	r.Stack, ok = oomsim.ParseStack(o.Stack)
	choice("--stack", o.Stack, oomsim.List(oomsim.Stacks)+" (or transformers, accelerate, peft, torchtitan, text-generation-inference, turbomind, trtllm, koboldcpp)", ok)
	if v := strings.TrimSpace(o.StackVersion); v != "" && !stackVersionRE().MatchString(v) {
		return cmdutil.Usagef("invalid --stack-version %q: want a release number such as 4.44.2 or 0.6, or a llama.cpp build such as b6000", o.StackVersion)
	}
	r.StackVersion = strings.TrimSpace(o.StackVersion)
	if v := strings.TrimSpace(o.TorchVersion); v != "" && !torchVersionRE().MatchString(v) {
		return cmdutil.Usagef("invalid --torch-version %q: want a PyTorch release such as 2.8.0 or 2.9.0+cu128", o.TorchVersion)
	}
	r.TorchVersion = strings.TrimSpace(o.TorchVersion)
	if dist := oomsim.ProfileOf(r.Stack).Dist; dist == "transformers" && r.Stack != oomsim.StackHF && r.StackVersion != "" &&
		oomsim.VersionBelow(r.StackVersion, 4, 0) {
		// DeepSpeed 0.16 or LLaMA-Factory 0.9 read as transformers 0.16
		// would date the plan before SDPA.
		return cmdutil.Usagef("invalid --stack-version %q for --stack %s: the release that decides its terms is transformers' (4.x, e.g. 4.44.2), not %s's own", o.StackVersion, r.Stack, r.Stack)
	}
	r.Objective, ok = oomsim.Parse(o.Objective, oomsim.Objectives)
	choice("--objective", o.Objective, oomsim.List(oomsim.Objectives), ok)
	r.Mixed, ok = oomsim.Parse(auto(o.Mixed), oomsim.MixedPrecisions)
	choice("--mixed-precision", o.Mixed, "auto, "+oomsim.List(oomsim.MixedPrecisions), ok || auto(o.Mixed) == "")
	if auto(o.Mixed) == "" && o.precisionRegime != "" {
		r.Mixed = oomsim.MixedPrecision(o.precisionRegime) // --precision bf16-true / bf16-mixed
	}
	r.SequenceParallel, ok = oomsim.Parse(auto(o.SequenceParallel), oomsim.Switches)
	choice("--sequence-parallel", o.SequenceParallel, "auto, on, off", ok || auto(o.SequenceParallel) == "")
	if r.SequenceParallel == oomsim.SwitchOff && o.TensorParallelSize < 2 && !o.TensorParallel {
		return cmdutil.Usagef("--sequence-parallel off is about tensor parallelism: give --tensor-parallel-size (2 or more) with it")
	}
	r.LoRATargets, ok = oomsim.Parse(auto(o.LoRATargets), []oomsim.LoRATargets{oomsim.LoRAQV, oomsim.LoRAQKVO, oomsim.LoRAAllLinear})
	choice("--lora-targets", o.LoRATargets, "auto, qv, qkvo, all-linear", ok || auto(o.LoRATargets) == "")
	quant := strings.ToLower(auto(o.Quant))
	if quant == "awq" {
		quant = string(oomsim.QuantGPTQ)
	}
	ggufBits, ggufClass, ggufType := oomsim.GGUFTypeBits(quant)
	if ggufType {
		// A GGUF file's type (Q4_K_M, Q8_0, IQ3_XXS, UD-Q6_K_XL): the
		// format and its rate.
		quant = string(oomsim.QuantGGUF)
	}
	r.Quant, ok = oomsim.Parse(quant, []oomsim.QuantFormat{oomsim.QuantBnB, oomsim.QuantGPTQ, oomsim.QuantFP8, oomsim.QuantGGUF, oomsim.QuantMLX})
	choice("--quant", o.Quant, "auto, bnb, gptq, awq, fp8, gguf, mlx, or a GGUF type such as Q4_K_M, Q8_0, IQ3_XXS, UD-Q6_K_XL", ok || quant == "")
	if o.WeightBits != 0 && !(o.WeightBits >= 1 && o.WeightBits <= 16) {
		return cmdutil.Usagef("invalid --weight-bits %g: want bits per weight from 1 to 16, e.g. 5.69 for GGUF Q5_K_M", o.WeightBits)
	}
	r.WeightBits = o.WeightBits
	o.ggufPrecision = ""
	if ggufType {
		if r.WeightBits == 0 {
			r.WeightBits = ggufBits
		}
		// Without --precision, the type says the weights' class.
		o.ggufPrecision = ggufClass
	}
	if err := o.parseKernels(); err != nil {
		return err
	}
	var max recommend.MaxKind
	max, ok = oomsim.Parse(o.Max, recommend.MaxKinds)
	choice("--max", o.Max, oomsim.List(recommend.MaxKinds), ok || o.Max == "")
	r.Max = max
	if o.Max == "" {
		r.Max = ""
	}
	for _, c := range choices {
		if !c.ok {
			return cmdutil.Usagef("invalid %s %q: want one of %s", c.flag, c.v, c.want)
		}
	}
	if o.strat == "auto" {
		o.strat = ""
	}
	if o.BatchSize < 1 || o.BatchSize > 1<<20 {
		return cmdutil.Usagef("invalid --batch-size %d: want 1 to %d", o.BatchSize, 1<<20)
	}
	if o.SeqLen < 0 || o.SeqLen > 1<<24 {
		return cmdutil.Usagef("invalid --seq-len %d: want 1 to %d", o.SeqLen, 1<<24)
	}
	switch {
	case o.PromptLen < 0:
		return cmdutil.Usagef("invalid --prompt-len %d: want 1 to --seq-len", o.PromptLen)
	case o.PromptLen > 0 && r.Mode != oomsim.Inference && r.Objective != oomsim.ObjectiveGRPO:
		return cmdutil.Usagef("--prompt-len is for --mode inference or --objective grpo (supervised training has no prompt to prefill)")
	case o.PromptLen > 0 && o.SeqLen == 0:
		return cmdutil.Usagef("--prompt-len needs --seq-len, the whole context (prompt and generated tokens)")
	case o.PromptLen > o.SeqLen:
		return cmdutil.Usagef("invalid --prompt-len %d: longer than --seq-len %d (the prompt is part of the sequence)", o.PromptLen, o.SeqLen)
	}
	r.PromptLen = o.PromptLen
	if r.Objective != "" && r.Objective != oomsim.ObjectiveSFT && r.Mode == oomsim.Inference {
		return cmdutil.Usagef("--objective %s is for training (--mode training, lora or qlora)", r.Objective)
	}
	if err := o.grpo(r); err != nil {
		return err
	}
	if n, rest := recommend.SplitDeviceCount(o.Device); n > 0 {
		// "2x RTX 3090": the count is --devices.
		if o.devicesSet && o.Devices != n {
			return cmdutil.Usagef("--device %q names %d devices but --devices is %d: give the count once", o.Device, n, o.Devices)
		}
		o.Device, o.Devices = rest, n
	}
	if o.Devices < 1 || o.Devices > 1<<16 {
		return cmdutil.Usagef("invalid --devices %d: want 1 to %d", o.Devices, 1<<16)
	}
	if o.ZeROStage != 0 && (o.ZeROStage < 1 || o.ZeROStage > 3) {
		return cmdutil.Usagef("invalid --zero-stage %d: want 1, 2 or 3", o.ZeROStage)
	}
	if o.FSDP && (o.ZeROStage < 2 || o.Devices < 2 || !oomsim.ProfileOf(r.Stack).Trainer) {
		return cmdutil.Usagef("--fsdp says how a Trainer stack shards: it needs --zero-stage 2 or 3, --devices 2 or more and --stack hf, trl, axolotl, llama-factory or ms-swift")
	}
	if o.OffloadParams && (r.Offload != oomsim.OffloadCPU || o.ZeROStage != 3) {
		return cmdutil.Usagef("--offload-params needs --offload cpu and --zero-stage 3")
	}
	if o.LoRARank < 1 || o.LoRARank > 1<<14 {
		return cmdutil.Usagef("invalid --lora-rank %d: want 1 to %d", o.LoRARank, 1<<14)
	}
	if o.GaLoreRank < 1 || o.GaLoreRank > 1<<16 {
		return cmdutil.Usagef("invalid --galore-rank %d: want 1 to %d", o.GaLoreRank, 1<<16)
	}
	if o.RecomputeLayers < 1 || o.RecomputeLayers > 1<<12 {
		return cmdutil.Usagef("invalid --recompute-layers %d: want 1 (a checkpoint a block) to %d", o.RecomputeLayers, 1<<12)
	}
	if o.RecomputeLayers > 1 && r.Recompute != "" && r.Recompute != oomsim.RecomputeFull {
		return cmdutil.Usagef("--recompute-layers %d groups blocks under full recomputation; it needs --recompute full (or auto), not %s", o.RecomputeLayers, r.Recompute)
	}
	if o.LoRALayers < 0 || o.LoRALayers > 1<<12 {
		return cmdutil.Usagef("invalid --lora-layers %d: want 0 (every block) to %d", o.LoRALayers, 1<<12)
	}
	if o.GPUMemUtil != 0 && (o.GPUMemUtil != o.GPUMemUtil || o.GPUMemUtil <= 0 || o.GPUMemUtil > 1) {
		return cmdutil.Usagef("invalid --gpu-memory-utilization %g: want a share of the device in (0, 1], e.g. 0.9", o.GPUMemUtil)
	}
	kvBits, ok := kvCacheBits[strings.ToLower(strings.TrimSpace(o.KVCacheDtype))]
	if !ok {
		return cmdutil.Usagef("invalid --kv-cache-dtype %q: want one of auto, fp16, bf16, fp8, fp8_e4m3, fp8_e5m2, int8, q8_0, q4_0, q8, q6, q4", o.KVCacheDtype)
	}
	if kvBits > 0 && r.Mode != oomsim.Inference {
		return cmdutil.Usagef("--kv-cache-dtype is for --mode inference (training keeps no KV cache)")
	}
	if o.MaxNumSeqs < 0 || o.MaxNumSeqs > 1<<20 {
		return cmdutil.Usagef("invalid --max-num-seqs %d: want 1 to %d (0: the engine's default)", o.MaxNumSeqs, 1<<20)
	}
	if o.MaxBatchedTokens < 0 || o.MaxBatchedTokens > 1<<24 {
		return cmdutil.Usagef("invalid --max-num-batched-tokens %d: want 1 to %d (0: the engine's default)", o.MaxBatchedTokens, 1<<24)
	}
	if o.PrefillChunk < 0 || o.PrefillChunk > 1<<20 {
		return cmdutil.Usagef("invalid --prefill-chunk %d: want 1 to %d tokens (0: the engine's default)", o.PrefillChunk, 1<<20)
	}
	if o.KVCacheTokens < 0 || o.KVCacheTokens > 1<<30 {
		return cmdutil.Usagef("invalid --kv-cache-tokens %d: want 1 to %d (0: the engine's memory share)", o.KVCacheTokens, 1<<30)
	}
	switch {
	case o.GPULayers < 0 || o.GPULayers > 1<<16:
		return cmdutil.Usagef("invalid --gpu-layers %d: want 1 to %d layers (0: all of them)", o.GPULayers, 1<<16)
	case o.GPULayers > 0 && (r.Mode != oomsim.Inference || (r.Stack != oomsim.StackLlamaCpp && r.Stack != oomsim.StackOllama)):
		return cmdutil.Usagef("--gpu-layers is llama.cpp's -ngl and Ollama's num_gpu: it needs --mode inference and --stack llama.cpp or ollama")
	case o.GPULayers > 0 && r.Offload == oomsim.OffloadCPU:
		return cmdutil.Usagef("--gpu-layers already says what runs from host memory: drop --offload cpu")
	}
	switch {
	case o.NCPUMoE < 0 || o.NCPUMoE > 1<<16:
		return cmdutil.Usagef("invalid --n-cpu-moe %d: want 1 to %d blocks (0: none)", o.NCPUMoE, 1<<16)
	case o.CPUMoE && o.NCPUMoE > 0:
		return cmdutil.Usagef("--cpu-moe keeps every block's experts on the host and --n-cpu-moe %d the first %d: give one", o.NCPUMoE, o.NCPUMoE)
	case (o.CPUMoE || o.NCPUMoE > 0) && (r.Mode != oomsim.Inference || r.Stack != oomsim.StackLlamaCpp):
		return cmdutil.Usagef("--cpu-moe and --n-cpu-moe are llama.cpp's: they need --mode inference and --stack llama.cpp (Ollama has no such option: --gpu-layers is its num_gpu)")
	}
	r.GPULayers, r.CPUMoELayers = o.GPULayers, o.NCPUMoE
	if o.CPUMoE {
		r.CPUMoELayers = 1 << 16 // every block
	}
	r.KVBits, r.MaxNumSeqs, r.PrefillTokens, r.KVCacheTokens, r.PrefillChunk = kvBits, o.MaxNumSeqs, o.MaxBatchedTokens, o.KVCacheTokens, o.PrefillChunk
	switch spec := strings.ToLower(strings.TrimSpace(o.Speculative)); spec {
	case "none", "":
	case "mtp", "nextn":
		r.Speculative = "mtp"
	default:
		return cmdutil.Usagef("invalid --speculative %q: want none or mtp (the checkpoint's multi-token-prediction layers as the draft)", o.Speculative)
	}
	if err := o.validateParallel(); err != nil {
		return err
	}
	if o.DeviceMemory != "" {
		mem, err := units.ParseDeviceMemory(o.DeviceMemory)
		if err != nil {
			return cmdutil.Usagef("invalid --device-memory: %v", err)
		}
		o.devMem = int64(mem)
	}
	r.BatchSize, r.SeqLen, r.Devices, r.ZeROStage, r.OffloadParams = o.BatchSize, o.SeqLen, o.Devices, o.ZeROStage, o.OffloadParams
	r.FSDP = o.FSDP
	r.TensorParallel, r.TensorParallelDegree, r.PipelineStages, r.ExpertParallel = o.TensorParallel, o.TensorParallelSize, o.PipelineParallelSize, o.ExpertParallelSize
	r.ContextParallel = o.ContextParallelSize
	if o.EvalBatchSize < 0 || o.EvalBatchSize > 1<<20 {
		return cmdutil.Usagef("invalid --eval-batch-size %d: want 0 (no evaluation) to %d", o.EvalBatchSize, 1<<20)
	}
	r.EvalBatch = o.EvalBatchSize
	r.LoRARank, r.LoRALayers, r.DoRA, r.Compiled = o.LoRARank, o.LoRALayers, o.DoRA, o.Compile
	if o.RecomputeLayers > 1 {
		r.RecomputeLayers = o.RecomputeLayers
	}
	if r.Objective != oomsim.ObjectiveGRPO {
		r.Prealloc = o.GPUMemUtil // with GRPO it is the colocated vLLM's share (grpo)
	}
	r.ExpandableSegments, r.ExpandableFrom, r.GaLoreRank = o.Expandable, o.expandableFrom, o.GaLoreRank
	return nil
}

// grpo checks and sets the GRPO flags: --rollout, --vllm-sleep and
// --kl-beta belong to --objective grpo, and --gpu-memory-utilization is a
// colocated vLLM's share there (below 1: the training step needs the rest).
func (o *Options) grpo(r *recommend.RunSettings) error {
	rollout, ok := oomsim.Parse(o.Rollout, oomsim.Rollouts)
	if !ok {
		return cmdutil.Usagef("invalid --rollout %q: want one of %s", o.Rollout, oomsim.List(oomsim.Rollouts))
	}
	if o.KLBeta != -1 && (o.KLBeta != o.KLBeta || o.KLBeta < 0 || o.KLBeta > 1e6) {
		return cmdutil.Usagef("invalid --kl-beta %g: want 0 (no reference model) or a positive coefficient such as 0.04", o.KLBeta)
	}
	if o.StepsPerGeneration < 1 || o.StepsPerGeneration > 1<<12 {
		return cmdutil.Usagef("invalid --steps-per-generation %d: want 1 to %d", o.StepsPerGeneration, 1<<12)
	}
	if o.NumGenerations < 1 || o.NumGenerations > 1<<10 {
		return cmdutil.Usagef("invalid --num-generations %d: want 1 to %d", o.NumGenerations, 1<<10)
	}
	if r.Objective != oomsim.ObjectiveGRPO {
		if rollout != oomsim.RolloutHF || o.VLLMSleep || o.KLBeta != -1 || o.StepsPerGeneration != 1 || o.NumGenerations != 8 {
			return cmdutil.Usagef("--rollout, --vllm-sleep, --kl-beta, --steps-per-generation and --num-generations describe a GRPO step: give --objective grpo")
		}
		return nil
	}
	if o.VLLMSleep && rollout != oomsim.RolloutVLLMColocate {
		return cmdutil.Usagef("--vllm-sleep is for --rollout vllm-colocate (a vLLM in the training process)")
	}
	if o.GPUMemUtil != 0 {
		if rollout != oomsim.RolloutVLLMColocate {
			return cmdutil.Usagef("--gpu-memory-utilization with --objective grpo is a colocated vLLM's share: give --rollout vllm-colocate")
		}
		if o.GPUMemUtil != o.GPUMemUtil || o.GPUMemUtil <= 0 || o.GPUMemUtil >= 1 {
			return cmdutil.Usagef("invalid --gpu-memory-utilization %g: a colocated vLLM shares the device with training; want a share below 1, e.g. 0.3", o.GPUMemUtil)
		}
	}
	r.Rollout, r.RolloutShare, r.RolloutSleep, r.KLBeta = rollout, o.GPUMemUtil, o.VLLMSleep, o.KLBeta
	r.RolloutSteps, r.NumGenerations = o.StepsPerGeneration, o.NumGenerations
	return nil
}

// Run plans and prints.
func (o *Options) Run(ctx context.Context) error {
	res, err := o.plan(ctx)
	if err != nil {
		return err
	}
	var werr error
	switch o.format {
	case output.JSON, output.YAML:
		_, werr = output.Export(o.IO.Out, o.format, res)
	case output.Env:
		werr = Env(o.IO.Out, res)
		// The exports go to eval; whether they describe a plan that runs
		// must not be lost, so it goes to stderr.
		if !res.Fits {
			fmt.Fprintln(o.IO.ErrOut, recommend.EnvWarning(res))
		}
	default:
		werr = Table(o.IO.Out, res, report.NewStyle(o.IO.Out, o.IO.ColorEnabled()))
	}
	if werr != nil {
		return werr
	}
	if o.RequireFit && !res.Fits {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// plan builds the request from the flags and the configuration and asks
// the planner. A catalogued --device plans without probing; any other
// --device is the probe's device preference.
func (o *Options) plan(ctx context.Context) (*recommend.Result, error) {
	extra, err := o.strategyFlag()
	if err != nil {
		return nil, err
	}
	// The device catalogue is parsed only when --device names something:
	// the plain probe path stays as cheap as `devctl probe`.
	_, isCatalogue, err := recommend.CatalogueDevice(o.Device)
	if err != nil {
		return nil, usage(err)
	}
	req := recommend.Request{Model: recommend.ModelSpec{Params: o.ModelParams, Name: o.Model, Config: o.ModelConfig}, Run: o.run, DeviceMemory: o.devMem}
	if isCatalogue {
		req.Device = o.Device
	} else if o.Device != "" {
		extra["device.preferred"] = config.Flag{Name: "--device", Value: strings.ToLower(o.Device)}
		req.Probed = o.Device
	}
	cfg, err := o.Config(extra)
	if err != nil {
		return nil, err
	}
	req.Settings = cmdutil.PlanSettings(cfg)
	switch p := req.Settings.Precision; {
	case o.ggufPrecision == "":
	case p == "" || p == capability.Auto:
		req.Settings.Precision, req.Settings.PrecisionSource = o.ggufPrecision, "--quant "+o.Quant
	case p != o.ggufPrecision:
		return nil, cmdutil.Usagef("--quant %s is a %s type; precision %s (from %s) says otherwise: give one of them", o.Quant, o.ggufPrecision, p, req.Settings.PrecisionSource)
	}
	deps := o.Deps
	deps.Probe = func(ctx context.Context) (*probe.Report, error) { return o.Probe(ctx, cfg) }
	res, err := recommend.Plan(ctx, req, deps)
	return res, usage(err)
}

// usage turns the planner's bad-input errors into usage errors (exit 2).
func usage(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, recommend.ErrContradiction):
		return cmdutil.Usagef("%s", strings.TrimPrefix(err.Error(), recommend.ErrContradiction.Error()+": "))
	case errors.Is(err, recommend.ErrInput):
		return cmdutil.Usagef("%w", err)
	}
	return err
}

// strategyFlag turns --strategy into a device.memory_strategy flag layer:
// "auto" leaves the config alone and lets recommend choose by model size.
func (o *Options) strategyFlag() (map[string]config.Flag, error) {
	extra := map[string]config.Flag{}
	if o.strat == "" {
		return extra, nil
	}
	if prev, ok := o.GlobalConfigFlags["device.memory_strategy"]; ok && !strings.EqualFold(strings.TrimSpace(prev.Value), string(o.strat)) {
		return nil, cmdutil.Usagef("--strategy %s conflicts with %s %s: give one of them", o.strat, prev.Name, prev.Value)
	}
	extra["device.memory_strategy"] = config.Flag{Name: "--strategy", Value: string(o.strat)}
	return extra, nil
}

// stackVersionRE is a release number: 4.44.2, 0.6, v0.8.1rc1 (compiled on
// first use, not at every start).
var stackVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(v?[0-9]+\.[0-9]+[.+a-z0-9-]*|b[0-9]+)$`) })

// torchVersionRE is a PyTorch release: 2.8.0, 2.9.0+cu128, 2.6.0a0+ecf3bae40a.
var torchVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+[.+a-zA-Z0-9-]*$`) })

// kvCacheBits is each --kv-cache-dtype's element width; 0 keeps the
// compute dtype (16 bits).
var kvCacheBits = map[string]int{"auto": 0, "": 0, "fp16": 16, "bf16": 16, "fp8": 8, "fp8_e4m3": 8, "fp8_e5m2": 8,
	"int8": 8, "q8_0": 8, "q4_0": 4, "q8": 8, "q6": 6, "q4": 4}

// parseKernels reads --kernels into the run's loss, fused kernels and
// compile flag: one line naming a value it does not know, or two losses.
func (o *Options) parseKernels() error {
	r := &o.run
	for _, k := range strings.Split(o.Kernels, ",") {
		k = strings.ToLower(strings.TrimSpace(k))
		loss := oomsim.Loss("")
		switch k {
		case "":
			continue
		case "liger":
			loss, r.FusedKernels = oomsim.LossFused, true
		case "fused-ce", "cut-ce", "cce":
			loss = oomsim.LossFused
		case "chunked-ce":
			loss = oomsim.LossChunked
		case "full-ce":
			loss = oomsim.LossFull
		case "compile":
			o.Compile = true
			continue
		case "tiled-mlp":
			r.TiledMLP = true
			continue
		default:
			return cmdutil.Usagef("invalid --kernels %q: want a comma-separated list of liger, fused-ce, chunked-ce, full-ce, compile, tiled-mlp", o.Kernels)
		}
		if r.Loss != "" && r.Loss != loss {
			return cmdutil.Usagef("invalid --kernels %q: give one loss (liger or fused-ce, chunked-ce, or full-ce)", o.Kernels)
		}
		r.Loss = loss
	}
	return nil
}

// validateParallel checks --tensor-parallel(-size) and
// --pipeline-parallel-size against --devices and --zero-stage: the degrees
// must divide the devices, and ZeRO shards over the data-parallel replicas
// they leave.
func (o *Options) validateParallel() error {
	tp, pp := o.TensorParallelSize, o.PipelineParallelSize
	if tp < 0 || tp > 1<<16 {
		return cmdutil.Usagef("invalid --tensor-parallel-size %d: want 1 to --devices", tp)
	}
	if pp < 0 || pp > 1<<16 {
		return cmdutil.Usagef("invalid --pipeline-parallel-size %d: want 1 to --devices", pp)
	}
	if ep := o.ExpertParallelSize; ep < 0 || ep > o.Devices || (ep > 1 && (o.Devices/max(pp, 1))%ep != 0) {
		return cmdutil.Usagef("invalid --expert-parallel-size %d: want a number of devices that divides a pipeline stage's (--devices %d over --pipeline-parallel-size %d)", ep, o.Devices, max(pp, 1))
	}
	if cp := o.ContextParallelSize; cp < 0 || cp > 1<<16 || (cp > 1 && o.Devices%(max(tp, 1)*max(pp, 1)*cp) != 0) {
		return cmdutil.Usagef("invalid --context-parallel-size %d: want a number of devices that divides --devices %d with --tensor-parallel-size × --pipeline-parallel-size (%d)", cp, o.Devices, max(tp, 1)*max(pp, 1))
	}
	mp := max(tp, 1) * max(pp, 1)
	switch {
	case o.TensorParallel && tp > 0:
		return cmdutil.Usagef("give one of --tensor-parallel (every device) and --tensor-parallel-size %d", tp)
	case o.Devices%mp != 0:
		return cmdutil.Usagef("--tensor-parallel-size %d × --pipeline-parallel-size %d does not divide --devices %d: want sizes whose product divides the devices", max(tp, 1), max(pp, 1), o.Devices)
	case o.TensorParallel && o.ZeROStage != 0:
		return cmdutil.Usagef("give one of --tensor-parallel and --zero-stage, or --tensor-parallel-size below --devices with --zero-stage: ZeRO shards over the data-parallel replicas the sizes leave")
	case o.ZeROStage != 0 && mp > 1 && mp == o.Devices:
		return cmdutil.Usagef("--zero-stage %d needs data-parallel replicas: --tensor-parallel-size × --pipeline-parallel-size uses all %d devices", o.ZeROStage, o.Devices)
	}
	return nil
}
