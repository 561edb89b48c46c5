package oomsim

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
)

// Stack is the framework that runs the model. The same model, batch and
// sequence allocate very different amounts under different stacks: the
// attention kernel, how the loss is computed, whether training keeps an
// fp32 master copy, which modules LoRA adapts, whether activations are
// checkpointed by default, and whether a serving engine preallocates the
// device. A Profile records those defaults with their sources.
type Stack string

// The stacks devctl knows. StackAuto means "not said": the planner then
// assumes the most common one for the mode (Hugging Face transformers for
// training and generation) and says so.
const (
	StackAuto         Stack = "auto"
	StackHF           Stack = "hf"             // transformers: Trainer, generate(); also accelerate and PEFT
	StackTRL          Stack = "trl"            // TRL's trainers (SFTTrainer, DPOTrainer) over transformers and PEFT
	StackAxolotl      Stack = "axolotl"        // transformers under axolotl's configs
	StackLlamaFactory Stack = "llama-factory"  // transformers under LLaMA-Factory
	StackMSSwift      Stack = "ms-swift"       // transformers under ModelScope's ms-swift (swift sft)
	StackDeepSpeed    Stack = "deepspeed"      // DeepSpeed ZeRO (usually under the HF Trainer)
	StackFSDP         Stack = "fsdp"           // PyTorch FSDP/FSDP2 (accelerate's FSDP plugin, llama-cookbook)
	StackTorchtitan   Stack = "torchtitan"     // FSDP2 under torchtitan, whose AdamW is fused by default
	StackAutomodel    Stack = "nemo-automodel" // FSDP2 under NeMo Automodel, which trains the checkpoint's dtype
	StackLLMFoundry   Stack = "llm-foundry"    // FSDP under MosaicML's llm-foundry (Composer), MPT's fused loss
	StackXTuner       Stack = "xtuner"         // DeepSpeed under InternLM's xtuner (v0.1), checkpointing on
	StackMegatron     Stack = "megatron"       // Megatron-Core: Megatron-LM, NeMo, Megatron-Bridge
	StackLitGPT       Stack = "litgpt"
	StackTorchtune    Stack = "torchtune"
	StackUnsloth      Stack = "unsloth"
	StackVLLM         Stack = "vllm"         // serving engines that take a share of the device at start-up
	StackSGLang       Stack = "sglang"       // ...of the memory free at start, for weights and the KV pool
	StackTGI          Stack = "tgi"          // ...of what its warm-up forward leaves (text-generation-inference)
	StackLMDeploy     Stack = "lmdeploy"     // ...of what the weights leave (TurboMind, PyTorch engine)
	StackTRTLLM       Stack = "tensorrt-llm" // ...of what the engine and its buffers leave
	StackLlamaCpp     Stack = "llama.cpp"
	StackOllama       Stack = "ollama"    // llama.cpp under Ollama, whose defaults change by release
	StackExLlama      Stack = "exllamav2" // ExLlamaV2 (TabbyAPI, text-generation-webui's loader): EXL2 files, prefill in chunks, one scratch buffer
	StackExLlamaV3    Stack = "exllamav3" // ExLlamaV3: EXL3 files, prefill in chunks
	StackMLX          Stack = "mlx"
	StackPyTorch      Stack = "pytorch" // a plain PyTorch loop: eager attention, full fp32 loss, fp32 weights under autocast
)

// Stacks lists the accepted values, in the order help texts show them.
var Stacks = []Stack{StackAuto, StackHF, StackTRL, StackAxolotl, StackLlamaFactory, StackMSSwift, StackDeepSpeed, StackXTuner, StackFSDP, StackTorchtitan, StackAutomodel, StackLLMFoundry, StackMegatron, StackLitGPT, StackTorchtune, StackUnsloth,
	StackVLLM, StackSGLang, StackTGI, StackLMDeploy, StackTRTLLM, StackLlamaCpp, StackOllama, StackExLlama, StackExLlamaV3, StackMLX, StackPyTorch}

// stackAliases are the other names users and corpora give a stack.
var stackAliases = map[string]Stack{
	"transformers": StackHF, "huggingface": StackHF, "accelerate": StackHF, "peft": StackHF,
	"llamafactory": StackLlamaFactory, "llama_factory": StackLlamaFactory, "hf-trainer": StackHF, "hf-generate": StackHF,
	"llama-recipes": StackFSDP, "llama-cookbook": StackFSDP, "fsdp2": StackFSDP,
	"text-generation-inference": StackTGI, "text-generation-server": StackTGI,
	"turbomind": StackLMDeploy, "lmdeploy-turbomind": StackLMDeploy, "lmdeploy-pytorch": StackLMDeploy,
	"trtllm": StackTRTLLM, "trt-llm": StackTRTLLM, "tensorrt_llm": StackTRTLLM,
	"llamacpp": StackLlamaCpp, "koboldcpp": StackLlamaCpp, "lm-studio": StackLlamaCpp, "gguf": StackLlamaCpp,
	"exllama": StackExLlama, "exllama2": StackExLlama, "tabbyapi": StackExLlama, "exui": StackExLlama, "exl2": StackExLlama, "exllama3": StackExLlamaV3, "exl3": StackExLlamaV3,
	"lightning": StackPyTorch, "plain-torch": StackPyTorch, "torch": StackPyTorch,
	"lit-llama": StackLitGPT, "lit-gpt": StackLitGPT, "lit_gpt": StackLitGPT,
	"mlx-lm": StackMLX, "mlx_lm": StackMLX,
	"swift": StackMSSwift, "ms_swift": StackMSSwift,
	"openrlhf": StackDeepSpeed, "deepspeed-chat": StackDeepSpeed,
	"verl": StackFSDP, "fsdp_qlora": StackFSDP, "fsdp-qlora": StackFSDP,
	"olmo-core": StackFSDP, "lingua": StackFSDP, "fms-fsdp": StackFSDP,
	"automodel": StackAutomodel, "nemo_automodel": StackAutomodel, "llmfoundry": StackLLMFoundry, "llm_foundry": StackLLMFoundry,
	"megatron-lm": StackMegatron, "megatron-core": StackMegatron, "mcore": StackMegatron, "nemo": StackMegatron,
	"megatron-bridge": StackMegatron, "nemo-megatron": StackMegatron, "ms-swift-megatron": StackMegatron, "swift-megatron": StackMegatron,
}

// ParseStack reads a stack name or one of its aliases (case-insensitive).
func ParseStack(s string) (Stack, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if st, ok := Parse(s, Stacks); ok {
		return st, true
	}
	st, ok := stackAliases[s]
	return st, ok
}

// Loss is how a causal LM's cross-entropy is computed over the vocabulary.
type Loss string

// Losses.
const (
	// LossFull materialises every position's logits and upcasts them to
	// fp32 for the cross-entropy (transformers' ForCausalLMLoss does
	// logits.float(); a plain F.cross_entropy on bf16 logits upcasts
	// inside log_softmax).
	LossFull Loss = "full"
	// LossChunked keeps the 16-bit logits but upcasts and reduces them a
	// chunk of positions at a time (litgpt chunked_cross_entropy, chunk
	// 128; torchtune CEWithChunkedOutputLoss, 8 chunks).
	LossChunked Loss = "chunked"
	// LossFused never materialises the logits (Liger's fused linear
	// cross-entropy, Apple's cut cross-entropy, Unsloth).
	LossFused Loss = "fused"
	// LossVocabParallel is Megatron-Core's vocab-parallel cross-entropy:
	// the logits in the compute dtype and one fp32 copy, which becomes the
	// softmax and then the gradient in place (torch.exp(..., out=), div_,
	// and a backward that edits the saved softmax;
	// megatron/core/tensor_parallel/cross_entropy.py), not the full loss's
	// four tensors. A loop of one's own that calls F.cross_entropy on the
	// logits a Megatron-Core model returns computes LossFull.
	LossVocabParallel Loss = "vocab-parallel"
)

// LoRATargets names the modules LoRA adapts.
type LoRATargets string

// LoRA target sets.
const (
	LoRAQV        LoRATargets = "qv"         // q and v projections (PEFT's default for Llama-like models, litgpt's default)
	LoRAQKVO      LoRATargets = "qkvo"       // the four attention projections
	LoRAAllLinear LoRATargets = "all-linear" // every Linear in the blocks (QLoRA paper, Unsloth, axolotl recipes)
)

// Profile is what a stack does by default, each choice with its source.
type Profile struct {
	Stack Stack
	// Attention is the default attention kernel: fused (SDPA/flash) keeps
	// no s×s score matrix, eager does.
	Attention Attention
	// Loss is how the LM loss is computed in training.
	Loss Loss
	// ChunkedLossBytes is what a chunked loss keeps per logit: the 16-bit
	// logits and each chunk's log-softmax for the backward (2 + 2 when the
	// chunk stays 16-bit, 2 + 4 when it is upcast to fp32 first).
	ChunkedLossBytes float64
	// PureHalf: training keeps weights, gradients and optimizer state in
	// the 16-bit type (litgpt's bf16-true, torchtune's dtype: bf16); false
	// means autocast with an fp32 master copy (HF Trainer bf16=True).
	PureHalf bool
	// Recompute is the activation checkpointing a training recipe turns
	// on by default.
	Recompute Recompute
	// QLoRARecompute, when set, replaces Recompute for QLoRA and 8-bit
	// LoRA: PEFT's prepare_model_for_kbit_training, which every
	// transformers QLoRA and 8-bit LoRA recipe calls, turns gradient
	// checkpointing on by default.
	QLoRARecompute Recompute
	// LoRATargets and AdapterBytes: the modules adapted by default and the
	// bytes per adapter value (4 for fp32 adapters, 2 for 16-bit).
	LoRATargets  LoRATargets
	AdapterBytes float64
	// LoRALayers is how many of the last blocks get adapters (0: all).
	LoRALayers int
	// ChoosesAttention: the stack asks transformers for its attention
	// implementation itself (axolotl's configs for flash attention, xtuner
	// for flash_attention_2 or sdpa), so transformers' per-family default
	// by release (transformersEager) does not apply.
	ChoosesAttention bool
	// LoRADropout: the stack's recipes put dropout on the adapter input
	// (lora_dropout > 0). Each dropout then keeps its own output and a
	// one-byte mask for the backward, instead of every adapter reading the
	// one normalised input.
	LoRADropout bool
	// FusedQKVAdapter: q, k and v are one Linear with one adapter input
	// (litgpt's LoRAQKVLinear), so one dropout serves all three.
	FusedQKVAdapter bool
	// QuantizesHead: 4-bit loading converts the output head too (Lightning's
	// BitsandbytesPrecision replaces every nn.Linear unless told to ignore
	// some; transformers keeps lm_head in 16 bits). The head is then stored
	// in 4 bits and dequantised whole at every call, the largest
	// dequantisation buffer of the model.
	QuantizesHead bool
	// FusedLoRAKernels: the stack's own autograd functions for LoRA blocks
	// (Unsloth's LoRA_QKV, LoRA_W, LoRA_MLP and fast RMSNorm) save only each
	// adapted projection's input, the MLP's gate and up outputs (the SwiGLU
	// product is recomputed) and each norm's 16-bit input.
	FusedLoRAKernels bool
	// UnfusedAttentionBackward: the fused attention kernel has no backward
	// of its own, so the gradient recomputes attention unfused, one block
	// at a time, with its b·heads·s² scores (mlx on Apple GPUs:
	// ScaledDotProductAttentionVJP::use_fallback is true on Metal).
	UnfusedAttentionBackward bool
	// KbitUpcast: LoRA on 8-bit or 4-bit weights goes through peft's
	// prepare_model_for_kbit_training, which casts every parameter left in
	// 16 bits (embeddings, norms, the output head) to fp32.
	KbitUpcast bool
	// Quantises: the stack loads 8-bit and 4-bit weights itself, on every
	// backend it runs on (mlx on Apple GPUs, llama.cpp's GGUF on Metal
	// and CPUs), whatever PyTorch's kernels support there.
	Quantises bool
	// QuantFormat is the storage of the stack's 8-bit and 4-bit weights
	// when the plan names none (--quant): llama.cpp and Ollama load GGUF
	// files, mlx its own affine quantisation. Empty: bitsandbytes, as
	// transformers' load_in_8bit/load_in_4bit.
	QuantFormat QuantFormat
	// PulledPrecision is the weights a plan gets when no precision is
	// asked for, where the stack's usual way of getting a model fixes it
	// (Ollama: `ollama pull MODEL` fetches the library's default tag,
	// 4-bit; llama.cpp: a GGUF file, planned as Q4_K_M, the quantisation
	// of Ollama's default tags, since the file is not named). Empty:
	// devctl chooses by device and budget.
	PulledPrecision capability.Precision
	// ChunkLogits: a generate call computes the logits of every position
	// of the prompt's last chunk and keeps the last one after (mlx-lm's
	// generate_step runs the model on what is left of the prompt after
	// its prefill_step_size steps, then slices logits[:, -1, :]; mlx
	// evaluates the whole product before the slice).
	ChunkLogits bool
	// DoubleQuant: the stack's QLoRA loader quantises the NF4 block
	// constants again (bnb_4bit_use_double_quant=True), 4.13 bits a weight
	// instead of 4.5.
	DoubleQuant bool
	// FusedOptimizer: the optimizer step makes no temporaries (fused=True
	// AdamW); false is PyTorch's default foreach AdamW, whose step holds a
	// temporary the size of one state (torch/optim/adamw.py
	// _multi_tensor_adamw: torch._foreach_sqrt(exp_avg_sqs)).
	FusedOptimizer bool
	// ExpandableSegments: the stack's launcher sets
	// PYTORCH_ALLOC_CONF=expandable_segments:True (torchtitan's
	// run_train.sh).
	ExpandableSegments bool
	// FusedNorms: the stack's RMSNorm/LayerNorm is one kernel that keeps
	// its 16-bit input (and the per-token rstd) for the backward, where
	// transformers' LlamaRMSNorm keeps an fp32 upcast of its input and,
	// with a trainable weight, the normalised tensor the weight scales
	// (TransformerEngine's fused norms under Megatron-Core; mlx's
	// mx.fast.rms_norm).
	FusedNorms bool
	// PrefillChunk is how many prompt tokens one forward evaluates at a
	// time (0: the whole prompt at once): the working set of a prefill is
	// sized for a chunk, not the prompt.
	PrefillChunk int
	// ChunkFlag is the setting that changes PrefillChunk on a local
	// engine (Plan.PrefillChunk, devctl's --prefill-chunk); "" where the
	// chunk is not the user's (a serving engine's prefill budget is
	// Plan.PrefillTokens).
	ChunkFlag string
	// GraphCompute: the stack allocates a block's whole compute graph at
	// once (llama.cpp's ggml-alloc, mlx's lazy evaluation) rather than
	// freeing each intermediate as eager PyTorch does.
	GraphCompute bool
	// RepeatKV: the attention path expands grouped k and v to every query
	// head before the kernel (transformers' sdpa and eager paths call
	// repeat_kv), so the backward keeps the expanded copies.
	RepeatKV bool
	// Trainer: the stack trains through transformers' Trainer, whose
	// ZeRO (--deepspeed) is DeepSpeed's: see deepSpeedZeRO.
	Trainer bool
	// DeepSpeed: the stack always trains through DeepSpeed's engine, on one
	// device too (its fused Adam, its fp32 master partitions, its gradient
	// buckets), and shards with ZeRO-2 over several devices unless told.
	DeepSpeed bool
	// Dist is the Python distribution whose release is the stack's
	// (StackVersion): transformers for the stacks that run its models.
	Dist string
	// Preallocates is the share a serving engine takes at start-up,
	// whatever the batch (vLLM's gpu_memory_utilization, default 0.9);
	// 0 for stacks that allocate as they go. PreallocOf says of what.
	Preallocates float64
	PreallocOf   PreallocRule
	// NoGraphBuffers: a preallocating engine that captures no CUDA graphs
	// and takes its working buffers out of the share its rule leaves
	// (lmdeploy's TurboMind), so it holds nothing beside weights, KV cache
	// and activations; the others hold 1 GiB of graphs and non-torch
	// allocations (vLLM's start-up log).
	NoGraphBuffers bool
	// Source names where these defaults were read.
	Source string
}

// PreallocRule is what a serving engine's start-up share is a share of,
// and so what its KV cache gets (servingEngine). With D the device's
// usable memory, f the share, W the weights, A the activations of the
// engine's profiling forward and G its CUDA graphs and other buffers:
type PreallocRule string

// The rules, read in each engine's code (docs/recommend.md, "Serving
// engines").
const (
	// ShareOfDevice: f·D holds everything; the KV cache gets
	// f·D − W − A − G (vLLM: total × gpu_memory_utilization − peak; TGI v3:
	// free after warm-up − (1 − cuda_memory_fraction × wiggle room) × total).
	ShareOfDevice PreallocRule = "device"
	// ShareForStatic: f·D holds the weights and the KV pool, which gets
	// f·D − W; activations and graphs come on top (SGLang's
	// mem_fraction_static).
	ShareForStatic PreallocRule = "static"
	// ShareOfFree: the KV cache gets f × what is free once the weights
	// (and, for engines that profile first, the activations) are in place
	// (lmdeploy's cache_max_entry_count from v0.2.2, TensorRT-LLM's
	// free_gpu_memory_fraction, TGI before v3).
	ShareOfFree PreallocRule = "free"
	// KVShareOfDevice: the KV cache alone gets f·D (lmdeploy v0.1.0-v0.2.1,
	// cache_max_entry_count 0.5 of the total).
	KVShareOfDevice PreallocRule = "kv-of-device"
	// KVPerSequence: no share; each sequence's KV cache is allocated
	// whole (session_len tokens) when the sequence arrives (lmdeploy
	// v0.0.x, TurboMind 1.0: cache_chunk_size 1 sequence at a time, up to
	// cache_max_entry_count 48).
	KVPerSequence PreallocRule = "kv-per-sequence"
)

// KVPerSequenceEngine reports whether a serving engine allocates each
// sequence's KV cache as it arrives instead of a share at start-up:
// lmdeploy before v0.1.0, TurboMind 1.0 (docs/en/inference/turbomind_config.md,
// "TurboMind 1.0 config": k/v for cache_chunk_size (1) sequences of
// session_len tokens each time one arrives).
func KVPerSequenceEngine(st Stack, version string) bool {
	return st == StackLMDeploy && releaseBelow(version, "0.1.0")
}

// profiles are the stacks' defaults. Each was read in the stack's own code
// or documented configs at a known version (docs/recommend.md, "Stacks").
var profiles = map[Stack]Profile{
	StackHF: {Stack: StackHF, Trainer: true, Dist: "transformers", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeNone, QLoRARecompute: RecomputeFull,
		LoRATargets: LoRAQV, AdapterBytes: 4, RepeatKV: true, LoRADropout: true, KbitUpcast: true,
		Source: "transformers >= 4.36 uses SDPA by default (attn_implementation); Trainer bf16=True is torch.autocast over fp32 weights; ForCausalLMLoss upcasts logits to fp32; gradient_checkpointing off by default, but on for QLoRA (peft.prepare_model_for_kbit_training(use_gradient_checkpointing=True), which also casts the 16-bit parameters left, embeddings and lm_head, to fp32); PEFT adapts q_proj,v_proj of Llama-like models by default and keeps adapters in fp32 (autocast_adapter_dtype); the recipes people run set lora_dropout (TRL's ModelConfig default 0.05, the QLoRA and alpaca-lora scripts 0.05)"},
	StackTRL: {Stack: StackTRL, Trainer: true, Dist: "trl", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeFull, QLoRARecompute: RecomputeFull,
		LoRATargets: LoRAQV, AdapterBytes: 4, RepeatKV: true, LoRADropout: true, KbitUpcast: true,
		Source: "TRL's SFTConfig turns gradient_checkpointing on by default (since v0.22; see trlRelease) and loads the model in float32 under bf16 autocast (model_init_kwargs dtype float32); its ModelConfig sets lora_dropout 0.05 and leaves the targets to PEFT (q_proj, v_proj of Llama-like models); from v1.7 the loss is chunked_nll, which never materialises the logits (each chunk recomputed in the backward); attention and the rest as transformers"},
	StackAxolotl: {Stack: StackAxolotl, Trainer: true, Dist: "transformers", Attention: AttentionSDPA, ChoosesAttention: true, Loss: LossFull, Recompute: RecomputeFull, PureHalf: true,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, LoRADropout: true, DoubleQuant: true,
		Source: "axolotl loads the model in bfloat16 when bf16 is on (utils/config normalize_config: cfg.torch_dtype = torch.bfloat16, passed to from_pretrained by loaders/model.py), so full training keeps 16-bit weights and Adam moments with no fp32 master, except under DeepSpeed ZeRO; axolotl's example configs, which users start from, set gradient_checkpointing: true, flash_attention: true (grouped k and v reach the kernel unexpanded), lora_target_linear: true and lora_dropout: 0.05; its QLoRA loader sets bnb_4bit_use_double_quant (src/axolotl/loaders/model.py _set_quantization_config); 8/4-bit adapters go through prepare_model_for_kbit_training, after which axolotl casts the norms, embed_tokens and lm_head back to the training dtype for any LoRA or QLoRA run not sharded with FSDP (src/axolotl/utils/models.py, needs_fa2_dtype), so they stay 16-bit; the model, loss and adapters are transformers' and PEFT's"},
	StackLlamaFactory: {Stack: StackLlamaFactory, Trainer: true, Dist: "transformers", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeFull,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, RepeatKV: true, DoubleQuant: true,
		Source: "LLaMA-Factory turns gradient checkpointing on unless disable_gradient_checkpointing is set, adapts every Linear by default (lora_target: all), keeps trainable parameters in fp32 (upcast_trainable_params) and quantises QLoRA's NF4 constants again (ModelArguments double_quantization, default True); flash_attn auto is transformers' sdpa"},
	StackMSSwift: {Stack: StackMSSwift, Trainer: true, Dist: "transformers", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeFull, QLoRARecompute: RecomputeFull, PureHalf: true,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, RepeatKV: true, LoRADropout: true, DoubleQuant: true,
		Source: "ms-swift (modelscope/ms-swift at 3602360, 2026-08-22): torch_dtype None loads the model in the dtype of its config.json (swift/arguments/base_args/model_args.py _init_torch_dtype) and sets the Trainer's bf16 from it (_init_mixed_precision), so a bf16 model trains in bf16 with no fp32 master copy, except under DeepSpeed ZeRO; gradient_checkpointing True (swift/trainers/arguments.py); LoRA on all-linear with lora_dropout 0.05 (swift/arguments/tuner_args.py), adapters in PEFT's fp32 (lora_dtype None); bnb_4bit_use_double_quant True (swift/arguments/base_args/quant_args.py), and no prepare_model_for_kbit_training, so the 16-bit parameters stay 16-bit under QLoRA; attn_impl None is transformers' default; the model, loss and adapters are transformers' and PEFT's"},
	StackDeepSpeed: {Stack: StackDeepSpeed, Trainer: true, DeepSpeed: true, Dist: "transformers", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 4, FusedOptimizer: true, RepeatKV: true, LoRADropout: true,
		Source: "DeepSpeed ZeRO keeps 16-bit parameters and gradients and an fp32 master copy with Adam states in the optimizer partitions (12 bytes per parameter, sharded by stage); at the step its ZeRO optimizer copies the rank's 16-bit gradient partition to fp32 (a sub-group of at most 1e9 elements at stage 3) for its fused Adam, which makes no other temporary; attention and loss as transformers"},
	StackXTuner: {Stack: StackXTuner, DeepSpeed: true, Dist: "transformers", Attention: AttentionFlash, ChoosesAttention: true, Loss: LossFull, Recompute: RecomputeFull,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, FusedOptimizer: true, LoRADropout: true,
		Source: "xtuner v0.1 (InternLM/xtuner at v0.1.23): xtuner train with --deepspeed deepspeed_zero2, as its README runs it (bf16 auto on where the GPU has it), so DeepSpeed's 16-bit parameters and gradients and fp32 master partitions, as deepspeed; SupervisedFinetune's use_activation_checkpointing=True; flash_attention_2 where installed, else sdpa (xtuner/model/sft.py); transformers' loss; its LoRA configs adapt every Linear"},
	StackFSDP: {Stack: StackFSDP, Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 4, LoRADropout: true,
		Source: "FSDP with a bf16 MixedPrecision policy shards fp32 parameters, gradients and Adam states and all-gathers one wrapped block at a time in bf16 (with one block prefetched)"},
	StackTorchtitan: {Stack: StackTorchtitan, Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 4, LoRADropout: true, FusedOptimizer: true, ExpandableSegments: true,
		Source: "torchtitan: FSDP2 as fsdp, with its optimizer's default implementation \"fused\" (job_config Optimizer.implementation), whose AdamW step makes no temporaries, launched by run_train.sh with PYTORCH_ALLOC_CONF=expandable_segments:True"},
	StackAutomodel: {Stack: StackAutomodel, Dist: "nemo-automodel", Attention: AttentionFlash, Loss: LossFull, Recompute: RecomputeNone, PureHalf: true,
		LoRATargets: LoRAAllLinear, AdapterBytes: 2,
		Source: "NeMo Automodel (NVIDIA-NeMo/Automodel at 36044ad, 2026-08-22): from_pretrained with torch_dtype \"auto\", the checkpoint's dtype (_transformers/auto_model.py, model_init.py), so the weights and, as its mixed-precision guide warns, the Adam states are bf16; FSDP2 (strategy: fsdp2 in its example configs) with MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32) and activation_checkpointing False (components/distributed/config.py); MaskedCrossEntropy upcasts the logits to fp32 (components/loss/masked_ce.py); flash_attention_2 where installed, else sdpa (kernel_patches.py); torch.optim.Adam, the foreach step; LoRA on '*_proj' in its examples, adapters in the base weight's dtype, dropout 0 (components/_peft/lora.py)"},
	StackLLMFoundry: {Stack: StackLLMFoundry, Dist: "llm-foundry", Attention: AttentionFlash, Loss: LossChunked, ChunkedLossBytes: 4, Recompute: RecomputeFull,
		LoRATargets: LoRAQV, AdapterBytes: 4, LoRADropout: true,
		Source: "llm-foundry (mosaicml/llm-foundry at 8c8dd48, Composer at 6405188): every GPU train yaml shards FSDP FULL_SHARD with mixed_precision PURE over fp32 master weights (models/consts.py _MASTER_WEIGHTS_PRECISION; composer/distributed/mosaic_parallelism.py: bf16 parameters, reductions and buffers), as fsdp; attn_impl flash (models/utils/config_defaults.py); activation_checkpointing true in the 3B-and-up pretraining and the finetuning yamls; MPT's loss is flash-attn's fused CrossEntropyLoss over the 16-bit logits (models/mpt/modeling_mpt.py), which keeps them and their 16-bit gradient and no fp32 copy, 4 bytes a logit as litgpt's chunked loss; LoRA as fsdp"},
	StackMegatron: {Stack: StackMegatron, Dist: "megatron-core", Attention: AttentionFlash, Loss: LossVocabParallel, Recompute: RecomputeNone,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, FusedOptimizer: true, FusedNorms: true,
		Source: "Megatron-Core (Megatron-LM, NeMo, Megatron-Bridge): TransformerEngine's fused attention, which takes grouped k and v unexpanded; the vocab-parallel cross-entropy over the logits, whose fp32 copy becomes the softmax and then the gradient in place (tensor_parallel/cross_entropy.py); no recomputation unless asked; fused Adam; bf16 weights with fp32 main gradients, master weights and Adam states, 18 bytes a parameter as devctl's AMP count; over several devices the distributed optimizer, which Megatron-Bridge's recipes turn on (recipes/llama/h100/llama3.py: cfg.ddp.use_distributed_optimizer = True) and whose shape is ZeRO-2's; its gradients are the contiguous buffer DDP reduces, with no bucket copy; LoRA on linear_qkv, linear_proj, linear_fc1 and linear_fc2 (peft/lora.py's default)"},
	StackLitGPT: {Stack: StackLitGPT, Dist: "litgpt", Attention: AttentionSDPA, Loss: LossChunked, ChunkedLossBytes: 4, PureHalf: true, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 2, RepeatKV: true, LoRADropout: true, FusedQKVAdapter: true, QuantizesHead: true,
		Source: "litgpt finetune defaults: precision bf16-true, torch SDPA with grouped k and v repeated to every query head in training (model.py: 'flash attention requires it in training mode'), chunked_cross_entropy (chunk 128), lora_query and lora_value on one fused qkv adapter with lora_dropout 0.05, no activation checkpointing on one device; --quantize bnb.* is Lightning's BitsandbytesPrecision without ignore_modules, so lm_head is 4-bit too"},
	StackTorchtune: {Stack: StackTorchtune, Dist: "torchtune", Attention: AttentionSDPA, Loss: LossChunked, ChunkedLossBytes: 6, PureHalf: true, Recompute: RecomputeFull,
		LoRATargets: LoRAAllLinear, AdapterBytes: 2, FusedOptimizer: true, RepeatKV: true, DoubleQuant: true,
		Source: "torchtune recipe configs: dtype bf16, enable_activation_checkpointing True, CEWithChunkedOutputLoss (each chunk upcast to fp32 before the cross-entropy), AdamW fused, lora_dropout 0; QLoRA stores torchao's NF4Tensor, whose block scalers are quantised again to int8 per 256 (to_nf4(block_size=64, scaler_block_size=256)); LoRA on q_proj, v_proj, output_proj and the MLP since v0.5.0 (apply_lora_to_mlp True; q_proj and v_proj only before, see torchtuneQVOnly); its MultiHeadAttention expands grouped k and v to every head before SDPA (modules/attention.py)"},
	StackUnsloth: {Stack: StackUnsloth, Dist: "unsloth", Attention: AttentionSDPA, Loss: LossFused, Recompute: RecomputeOffload,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, FusedLoRAKernels: true,
		Source: "Unsloth: fused cross-entropy (no full logits), use_gradient_checkpointing=\"unsloth\" (checkpoints offloaded to the host), LoRA on q,k,v,o,gate,up,down in its notebooks; its LoRA kernels save X, e and g for the MLP and X for q/k/v and o (unsloth/kernels/fast_lora.py), its RMSNorm the 16-bit input"},
	StackVLLM: {Stack: StackVLLM, Dist: "vllm", Attention: AttentionSDPA, Preallocates: 0.9, PreallocOf: ShareOfDevice, PrefillChunk: 8192,
		Source: "vLLM takes gpu_memory_utilization (default 0.9) of the device at start-up: weights, the activation peak it profiles with max_num_batched_tokens (8,192 in the V1 engine), CUDA graphs, and the KV cache in the rest (vllm/v1/worker/gpu_worker.py: requested_memory - non_kv_cache_memory)"},
	StackSGLang: {Stack: StackSGLang, Dist: "sglang", Attention: AttentionSDPA, Preallocates: 0.88, PreallocOf: ShareForStatic, PrefillChunk: 8192,
		Source: "SGLang's mem_fraction_static of the memory free at start-up holds the weights and the KV pool (model_runner.py: rest_memory = available - total × (1 - mem_fraction_static)); activations of a chunked_prefill_size forward and the CUDA graphs come on top; the default fraction is (GPU memory - reserved)/GPU memory from 0.4.7.post1, a table by tensor-parallel size before (sglangFraction)"},
	StackTGI: {Stack: StackTGI, Dist: "text-generation-server", Attention: AttentionSDPA, Preallocates: 0.9, PreallocOf: ShareOfDevice, PrefillChunk: 4096,
		Source: "TGI warms up with a forward of max_batch_prefill_tokens (4,096 by default) and gives the KV cache what is then free minus (1 - cuda_memory_fraction × TGI_WIGGLE_ROOM) of the device: 1.0 × 0.90 from v3.3 (flash_causal_lm.py warmup, globals.py)"},
	StackLMDeploy: {Stack: StackLMDeploy, Dist: "lmdeploy", Attention: AttentionSDPA, Preallocates: 0.8, PreallocOf: ShareOfFree, NoGraphBuffers: true, PrefillChunk: 8192,
		Source: "lmdeploy gives the KV cache cache_max_entry_count (0.8 from v0.2.2) of the memory free once the weights are loaded, allocated whole at start-up (TurboMind BlockManager/turbomind.cc: free × ratio); its prefill buffers for max_prefill_token_num (8,192) come from the rest; v0.1.0-v0.2.1 took 0.5 of the total instead (lmdeployRelease)"},
	StackTRTLLM: {Stack: StackTRTLLM, Dist: "tensorrt-llm", Attention: AttentionSDPA, Preallocates: 0.9, PreallocOf: ShareOfFree, PrefillChunk: 8192,
		Source: "TensorRT-LLM gives the KV cache free_gpu_memory_fraction (0.9) of the memory free after the engine, its weights and the activations of max_num_tokens (8,192) are in place (kvCacheManager.cpp calculateFreeMemBytes; the PyTorch backend's _cal_max_memory)"},
	StackLlamaCpp: {Stack: StackLlamaCpp, Dist: "llama.cpp", Attention: AttentionSDPA, Quantises: true, QuantFormat: QuantGGUF, PulledPrecision: capability.Int4, PrefillChunk: 512, ChunkFlag: "--ubatch-size", GraphCompute: true,
		Source: "llama.cpp allocates the GGUF weights, an f16 KV cache for the context and a compute buffer sized for one n_ubatch (512 tokens) of the prompt; flash attention auto (on where the GPU has it) from build b6327, off before (llamaCppEager)"},
	StackOllama: {Stack: StackOllama, Dist: "ollama", Attention: AttentionSDPA, Quantises: true, QuantFormat: QuantGGUF, PulledPrecision: capability.Int4, PrefillChunk: 512, ChunkFlag: "num_batch", GraphCompute: true,
		Source: "Ollama runs llama.cpp: GGUF weights (4-bit unless asked: the library's default tag is Q4_K_M, Q4_0 for models published before December 2024, ollama/ollama#1543), an f16 KV cache for num_ctx and a compute buffer for one 512-token ubatch; flash attention was off by default before v0.12.4, then on for an allow-list of architectures, and auto for llama.cpp-engine models from v0.13.4 (ollamaRelease)"},
	StackExLlama: {Stack: StackExLlama, Dist: "exllamav2", Attention: AttentionFlash, Quantises: true, QuantFormat: QuantGPTQ, PulledPrecision: capability.Int4, PrefillChunk: exllamaChunk, ChunkFlag: "--chunk-size",
		Source: "ExLlamaV2 (turboderp-org/exllamav2; also ExLlama v1, TabbyAPI and text-generation-webui's loader) loads EXL2 (or GPTQ) files at their bits per weight with the output head at its own width (6 bits unless converted otherwise), keeps the input embedding in host memory (model.py: 'Embedding layer on CPU'), allocates an FP16 (or Q8/Q6/Q4) cache for max_seq_len at load, evaluates a prompt max_input_len (2048) tokens at a time (config.py; TabbyAPI's chunk_size), and reserves one scratch buffer per device for its largest module, the output head's: its dequantised weights and a chunk's fp32 logits (linear.py temp_dq_size, temp_fwd_size)"},
	StackExLlamaV3: {Stack: StackExLlamaV3, Dist: "exllamav3", Attention: AttentionFlash, Quantises: true, QuantFormat: QuantGPTQ, PulledPrecision: capability.Int4, PrefillChunk: exllamaChunk, ChunkFlag: "--chunk-size",
		Source: "ExLlamaV3 (turboderp-org/exllamav3, and TabbyAPI on it) loads EXL3 files at their bits per weight with the head at its own width, the input embedding in host memory, a cache for max_seq_len allocated at load and prompts evaluated 2048 tokens at a time, as ExLlamaV2; the EXL3 loads in testdata/memory (round 41's exllamav3 rows, Gemma 3 27B and Nemotron Super 49B on a 4090) hold 0 to 1.3 GiB beside weights and cache, where ExLlamaV2's head scratch would be 2.9 to 4.6 GiB: no scratch is planned"},
	StackMLX: {Stack: StackMLX, Dist: "mlx-lm", Attention: AttentionSDPA, Loss: LossChunked, ChunkedLossBytes: 4, PureHalf: true, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 2, LoRALayers: 16, Quantises: true, QuantFormat: QuantMLX, PrefillChunk: 2048, ChunkFlag: "--prefill-step-size", GraphCompute: true, ChunkLogits: true, UnfusedAttentionBackward: true, FusedNorms: true,
		Source: "mlx-lm generate evaluates the prompt prefill_step_size (2048) tokens at a time, with mlx's fused attention for head sizes 64, 72, 80, 96 and 128 and its unfused fallback, which holds the chunk's scores against the whole prompt, for any other (and for every size before mlx-lm 0.24.1); mlx-lm lora defaults: weights as stored, mx.fast.scaled_dot_product_attention, cross-entropy on the 16-bit logits (mlx computes the logsumexp without an fp32 copy), LoRA rank 8 on q_proj and v_proj of the last 16 blocks (num_layers 16), grad_checkpoint off; mlx quantises weights itself on every device; the fast attention's gradient on Metal is the unfused fallback (mlx/backend/metal/scaled_dot_product_attention.cpp)"},
	StackPyTorch: {Stack: StackPyTorch, Attention: AttentionEager, Loss: LossFull, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 4, RepeatKV: true,
		Source: "a plain PyTorch loop: attention as written (eager s×s scores), fp32 weights under autocast, F.cross_entropy over all logits"},
}

// ProfileOf is the stack's profile; StackAuto and unknown stacks get the
// Hugging Face one.
func ProfileOf(s Stack) Profile {
	if p, ok := profiles[s]; ok {
		return p
	}
	p := profiles[StackHF]
	p.Stack = StackAuto
	return p
}

// VersionBelow reports whether a release ("4.44.2", "0.6.4") is below
// major.minor; an empty or unreadable one (the current release) is not.
func VersionBelow(v string, major, minor int) bool {
	ma, mi, ok := capability.ParseVersion(v)
	return ok && (ma < major || (ma == major && mi < minor))
}

// legacyGenerateLogits: transformers before 4.45 computed the logits of
// every prompt position in generate() and upcast them to fp32 (the
// models' forward did logits.float()); 4.45 keeps only the last position
// (logits_to_keep).
//
// The release says when generate() began asking for the last position only;
// a model's forward had to accept logits_to_keep for it, and some added
// later did not at first (Qwen2-VL's README benchmark, transformers 4.45
// and up, still grows by every prompt position's fp32 logits), so the
// family's own release is no floor here.
func legacyGenerateLogits(p Plan) bool {
	return ProfileOf(p.Stack).Dist == "transformers" && VersionBelow(p.StackVersion, 4, 45)
}

// transformersAdded is the transformers release that added a model family
// (its release notes): a model of the family cannot run on an older one,
// so a stated or inferred older release says nothing about it. Families
// added after 4.36 came with Cache classes (tupleKVCache).
var transformersAdded = map[string]string{
	"mixtral": "4.36", "qwen2": "4.37", "gemma": "4.38", "stablelm": "4.38", "starcoder2": "4.39", "cohere": "4.39",
	"phi3": "4.40", "qwen2_moe": "4.40", "olmo": "4.40", "dbrx": "4.40", "gemma2": "4.42",
	"qwen2_vl": "4.45", "granite": "4.45", "granitemoe": "4.45", "olmo2": "4.47", "qwen2_5_vl": "4.49",
	"gemma3": "4.50", "gemma3_text": "4.50", "mistral3": "4.50", "qwen3": "4.51", "qwen3_moe": "4.51",
	"llama4": "4.51", "llama4_text": "4.51", "smollm3": "4.53", "gpt_oss": "4.55",
}

// transformersBelow reports whether the plan's transformers release is
// below major.minor, taking the release that added the model's family as
// its floor.
func transformersBelow(p Plan, major, minor int) bool {
	if floor, ok := transformersAdded[strings.ToLower(p.Model.Family)]; ok && !VersionBelow(floor, major, minor) {
		return false
	}
	return VersionBelow(p.StackVersion, major, minor)
}

// tupleKVCache: generate() holds two KV caches at once near the end of
// every decoding step when the model returns its cache as new tuples
// (torch.cat of the old layer cache and the new token into a new tensor):
// the previous step's cache stays referenced by generate's model_kwargs
// until the forward returns. transformers' own models returned tuples
// whenever they were given none or a tuple, converting to DynamicCache
// inside the forward and back (use_legacy_cache), and generate() passed
// them none until 4.42, where it began to create the DynamicCache itself
// (use_dynamic_cache_by_default in generation/utils.py; remote-code models
// gate their generate hooks on the same release, is_transformers_4_42_or_higher
// in ChatGLM's modeling file). The zerollama limit-length table (Qwen1.5 under
// transformers 4.38.2 on a 24 GB RTX 4090, testdata/memory) stops where
// the weights and two caches fill the card. The remote-code families below
// still build tuples (modeling_qwen.py, modeling_chatglm.py,
// modeling_internlm(2).py, modeling_baichuan.py, Falcon's RefinedWeb code).
func tupleKVCache(p Plan) bool {
	switch strings.ToLower(p.Model.Family) {
	case "qwen", "chatglm", "internlm", "internlm2", "baichuan", "refinedwebmodel", "refinedweb":
		// Engines with their own cache (serving engines, llama.cpp, mlx)
		// run these models with it.
		prof := ProfileOf(p.Stack)
		return prof.Preallocates == 0 && !prof.GraphCompute
	}
	return ProfileOf(p.Stack).Dist == "transformers" && transformersBelow(p, 4, 42)
}

// unslothMaterialisedLogits: Unsloth before 2024.11 computed the loss with
// its fast_cross_entropy_loss kernel over the 16-bit logits the LM head had
// materialised (the kernel writes their gradient in place); Cut Cross
// Entropy, which never materialises them, arrived in 2024.11
// (unsloth/models/llama.py, commit fa8e59eb1b, 2024-11-17).
func unslothMaterialisedLogits(p Plan) bool {
	return p.Stack == StackUnsloth && VersionBelow(p.StackVersion, 2024, 11)
}

// trlRelease applies TRL's release-dependent defaults: SFTConfig's
// gradient_checkpointing True arrived in v0.22 (2025-08-29; before, the
// Trainer's False), and the chunked_nll loss, which never materialises the
// logits, became the default in v1.7 (2026-06-25; before, nll over full
// logits). An unknown release is the current one. TRL's chunked loss is
// that chunked_nll whichever release names it, so --kernels chunked-ce under TRL
// is planned as the fused loss it is, not as torchtune's chunks, which
// keep every chunk's logits.
func trlRelease(p Plan, pinnedRecompute, pinnedLoss bool) Plan {
	if p.Stack != StackTRL {
		return p
	}
	if p.Loss == LossChunked {
		p.Loss = LossFused
	}
	if !pinnedRecompute && p.Mode != QLoRA && VersionBelow(p.StackVersion, 0, 22) {
		p.Recompute = RecomputeNone
	}
	if !pinnedLoss && !VersionBelow(p.StackVersion, 1, 7) {
		p.Loss = LossFused
	}
	return p
}

// torchtuneQVOnly: torchtune's LoRA recipes before v0.5.0 (2024-12-20)
// adapted q_proj and v_proj only (lora_attn_modules ['q_proj', 'v_proj'],
// apply_lora_to_mlp False in recipes/configs/llama3_1/8B_lora_single_device.yaml
// at v0.4.0); from v0.5.0 they add output_proj and the MLP.
func torchtuneQVOnly(p Plan) bool {
	return p.Stack == StackTorchtune && VersionBelow(p.StackVersion, 0, 5)
}

// msSwiftAttentionOnly: ms-swift before 3.0 (2024-12-20) adapted its
// model type's DEFAULT modules, the attention's q, k and v projections
// (lora_target_modules ['DEFAULT'] in swift/llm/utils/argument.py at
// v1.6.0 and v2.6.1; Qwen's fused c_attn); 3.0 made it all-linear
// (swift/llm/argument/tuner_args.py at v3.0.0). Its release is read from
// transformers' (the stack's Dist): releases before 4.48 (2025-01-10)
// predate ms-swift 3.0 in use. Planned as qkvo, the nearest set devctl has.
func msSwiftAttentionOnly(p Plan) bool {
	return p.Stack == StackMSSwift && p.StackVersion != "" && VersionBelow(p.StackVersion, 4, 48)
}

// vllmV0 reports a vLLM running its V0 engine (before 0.8; on ROCm before
// 0.9), which profiles a forward of max(max_model_len, 2048) tokens when
// chunked prefill is off (its default up to 32k contexts) instead of V1's
// max_num_batched_tokens.
func vllmV0(p Plan) bool {
	if p.Stack != StackVLLM {
		return false
	}
	// On ROCm, vLLM fell back to V0 until 0.9 even where V1 was asked
	// for (vllm-project/vllm#18480, May 2025).
	return VersionBelow(p.StackVersion, 0, 8) || p.Backend == backend.ROCm && VersionBelow(p.StackVersion, 0, 9)
}

// vllmBatchDefaults is vLLM's default max_num_batched_tokens and
// max_num_seqs for `vllm serve` on the plan's device and release: the
// tokens its start-up profile forwards at once and the sequences its dummy
// sampler run draws logits for.
//
//   - V0 (before 0.8): a forward of max(max_model_len, 2048) tokens when
//     chunked prefill is off (its default up to 32k contexts), else 2,048;
//     256 sequences.
//   - V1: 2,048 tokens and 256 sequences (vllm/engine/arg_utils.py,
//     "TODO(woosuk): Tune the default values for other hardware"); on a
//     device of at least 70 GiB that is not an A100, 8,192 tokens and,
//     from 0.9, 1,024 sequences (#12369 for H100/H200, #17885 keeping the
//     A100 small; the v0.19 logs of llm-d-planner print "Defaulting
//     max_num_seqs to 1024" and max_num_batched_tokens 8192 on H100).
func vllmBatchDefaults(p Plan) (tokens, seqs int) {
	tokens, seqs = vllmEngineDefaults(p)
	if p.PrefillTokens > 0 {
		tokens = p.PrefillTokens
	}
	if p.MaxNumSeqs > 0 {
		seqs = p.MaxNumSeqs
	}
	return tokens, seqs
}

// ServingProfile is what a preallocating engine's start-up profile runs
// for the plan: the tokens of its forward and the sequences its sampler
// draws logits for (the plan's --max-num-batched-tokens and
// --max-num-seqs, else the engine's defaults for the release and device).
// ok is false for stacks that do not preallocate.
func ServingProfile(p Plan) (tokens, seqs int, ok bool) {
	if ProfileOf(p.Stack).Preallocates == 0 || p.Mode != Inference {
		return 0, 0, false
	}
	_, _, tokens = servingDefaults(p)
	return tokens, servingSeqs(p), true
}

// servingSeqs is the sequences a serving engine's dummy sampler run draws
// logits for: the plan's --max-num-seqs, else vLLM's default for the
// release and device, else 256.
func servingSeqs(p Plan) int {
	switch {
	case p.Stack == StackVLLM:
		_, seqs := vllmBatchDefaults(p)
		return seqs
	case p.MaxNumSeqs > 0:
		return p.MaxNumSeqs
	}
	return 256
}

// vllmEngineDefaults is vllmBatchDefaults before the plan's own settings.
func vllmEngineDefaults(p Plan) (tokens, seqs int) {
	if vllmV0(p) {
		if p.SeqLen <= 32768 {
			return max(p.SeqLen, 2048), 256
		}
		return 2048, 256
	}
	big := p.DeviceBytes >= 70*GiB && !strings.Contains(strings.ToLower(p.DeviceName), "a100")
	switch {
	case !big:
		return 2048, 256
	case VersionBelow(p.StackVersion, 0, 9):
		return 8192, 256
	}
	return 8192, 1024
}

// releaseBelow reports whether a release ("0.2.1", "v0.4.7.post1",
// "3.3.4") is below want ("0.2.2"), comparing up to three numbers; an empty
// or unreadable release (the current one) is not.
func releaseBelow(v, want string) bool {
	c := canonicalRelease(v)
	return c != "" && semver.Compare(c, canonicalRelease(want)) < 0
}

// canonicalRelease is a release as semver's "vMAJOR.MINOR.PATCH" prefix:
// up to three leading numbers, a part's trailing letters ("7rc1",
// "post1") ending it; "" when it starts with no number.
func canonicalRelease(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	var nums []string
	for _, part := range strings.SplitN(v, ".", 4) {
		digits := part[:len(part)-len(strings.TrimLeft(part, "0123456789"))]
		if digits == "" {
			break
		}
		nums = append(nums, strings.TrimLeft(digits, "0"))
		if nums[len(nums)-1] == "" {
			nums[len(nums)-1] = "0"
		}
		if len(nums) == 3 || digits != part {
			break
		}
	}
	if len(nums) == 0 {
		return ""
	}
	return "v" + strings.Join(nums, ".")
}

// servingDefaults is a serving engine's rule, default share and the tokens
// its start-up forward profiles, for the plan's release and device
// (docs/recommend.md, "Serving engines").
func servingDefaults(p Plan) (rule PreallocRule, share float64, tokens int) {
	prof := ProfileOf(p.Stack)
	rule, share, tokens = prof.PreallocOf, prof.Preallocates, prof.PrefillChunk
	switch p.Stack {
	case StackVLLM:
		tokens, _ = vllmBatchDefaults(p)
	case StackSGLang:
		share, tokens = sglangDefaults(p)
	case StackTGI:
		// Before v3 the KV cache took 0.95 of what the warm-up left free
		// (flash_causal_lm.py warmup at v1.4.1-v2.3.0).
		if releaseBelow(p.StackVersion, "3.0.0") {
			rule, share = ShareOfFree, 0.95
		}
	case StackLMDeploy:
		// v0.1.0-v0.2.1: cache_max_entry_count 0.5 of the total memory
		// (BlockManager::GetBlockCount: total * ratio); from v0.2.2, 0.8
		// of the memory free after the weights (commit 0f324a4, #973).
		if releaseBelow(p.StackVersion, "0.2.2") {
			rule, share = KVShareOfDevice, 0.5
		}
		if KVPerSequenceEngine(p.Stack, p.StackVersion) {
			rule, share = KVPerSequence, 0
		}
	}
	if p.PrefillTokens > 0 {
		tokens = p.PrefillTokens // the engine's prefill budget, as the user set it
	}
	return rule, share, tokens
}

// sglangDefaults is SGLang's default mem_fraction_static and
// chunked_prefill_size for the device (server_args.py). From 0.4.7.post1
// the fraction is (memory − reserved)/memory, reserved (MiB) = 512 +
// 1.5 × the prefill chunk + 2 × the CUDA-graph batch + 128 per
// tensor-parallel rank, at least 10 GiB on devices over 60 GiB (the 0.5.3
// form); before, a table by tensor-parallel size (0.4.0: 0.88 on one GPU,
// 0.87 on 2, 0.85 on 4, 0.81 on 8, 0.79 on 16).
func sglangDefaults(p Plan) (share float64, chunk int) {
	gib := float64(p.DeviceBytes) / float64(GiB)
	graphBS := 256.0
	switch {
	case gib < 35:
		chunk, graphBS = 2048, 24
	case gib < 60:
		chunk, graphBS = 4096, 32
	case gib < 160:
		chunk = 8192
	default:
		chunk, graphBS = 16384, 512
	}
	tp := 1
	if p.Sharding == ShardTP || p.Sharding == ShardZeRO3 {
		tp = p.devices()
	}
	if p.TensorParallel > 0 {
		tp = p.TensorDegree()
	}
	if releaseBelow(p.StackVersion, "0.4.7") {
		if gib < 25 && !releaseBelow(p.StackVersion, "0.4.0") {
			chunk = 2048
		} else {
			chunk = 8192
		}
		switch {
		case tp >= 16:
			return 0.79, chunk
		case tp >= 8:
			return 0.81, chunk
		case tp >= 4:
			return 0.85, chunk
		case tp >= 2:
			return 0.87, chunk
		}
		return 0.88, chunk
	}
	if gib <= 0 {
		return 0.88, chunk
	}
	if p.PrefillTokens > 0 {
		chunk = p.PrefillTokens // --chunked-prefill-size enters the reserve
	}
	reserved := sglangReservedMiB(gib, chunk, graphBS, tp)
	// A device smaller than the reserve leaves nothing for the weights:
	// SGLang cannot start there (servingEngine sizes the device it needs).
	return max(0, math.Round(1000*(gib*1024-reserved)/(gib*1024))/1000), chunk
}

// sglangReservedMiB is what SGLang's default leaves outside
// mem_fraction_static for activations and CUDA graphs (0.5.3 form).
func sglangReservedMiB(gib float64, chunk int, graphBS float64, tp int) float64 {
	reserved := 512 + 1.5*float64(chunk) + 2*graphBS + 128*float64(tp)
	if gib > 60 {
		reserved = max(reserved, 10*1024)
	}
	return reserved
}

// transformersSDPA is the first transformers release whose modeling file
// for a family sets _supports_sdpa, so that attn_implementation defaults to
// "sdpa" (from v4.36 with torch >= 2.1.1, modeling_utils.py
// _check_and_enable_sdpa). Read at every release tag from v4.33 to v5.15
// (docs/recommend.md, "Attention"). Families not listed run SDPA from
// v4.36 (llama and the architectures built like it); "never" families run
// eager as of v5.15.
var transformersSDPA = map[string]string{
	"llama": "4.36", "falcon": "4.31", "gpt_bigcode": "4.36", "bart": "4.36", "whisper": "4.36",
	"mistral": "4.37", "mixtral": "4.37", "qwen2": "4.37", "llava": "4.37",
	"gemma": "4.38", "phi": "4.39", "starcoder2": "4.39", "stablelm": "4.39", "cohere": "4.39",
	"qwen2_moe": "4.40", "olmo": "4.40", "dbrx": "4.40", "jamba": "4.40",
	"bert": "4.41", "vit": "4.41", "gpt2": "4.42", "gpt_neox": "4.42", "gemma2": "4.42", "clip": "4.43",
	"phi3": "4.45", "roberta": "4.45", "xlm-roberta": "4.45", "albert": "4.45", "mbart": "4.45", "qwen2_vl": "4.45", "mllama": "4.45",
	"opt": "4.46", "distilbert": "4.46", "gemma3": "4.50", "electra": "5.0", "t5": "5.15", "mt5": "5.15",
	"mpt": "never", "gpt_neo": "never", "gptj": "never", "bloom": "never", "codegen": "never", "deberta-v2": "never",
}

// remoteCodeFused are remote-code families whose own modeling file calls
// torch's scaled_dot_product_attention (ChatGLM2/3 on torch 2, Falcon's
// RefinedWeb code) whatever the transformers release.
var remoteCodeFused = map[string]bool{"chatglm": true, "refinedwebmodel": true, "refinedweb": true}

// transformersEager reports whether transformers runs the plan's model with
// eager attention by default: before v4.36 every model did (bar the fused
// remote-code ones and Falcon), after it the families whose SDPA path came
// later or never did, and Gemma2 from v4.45 to v4.47, which defaulted to
// eager for its logit soft-capping (commit 975b988).
func transformersEager(p Plan) bool {
	// The stacks whose release is transformers' (TRL's release says
	// nothing of it) and that leave the choice to it.
	if prof := ProfileOf(p.Stack); prof.Dist != "transformers" || prof.ChoosesAttention {
		return false
	}
	family := strings.ToLower(p.Model.Family)
	if remoteCodeFused[family] {
		return false
	}
	since, known := transformersSDPA[family]
	switch {
	case since == "never":
		return true
	case family == "gemma2" && !VersionBelow(p.StackVersion, 4, 45) && VersionBelow(p.StackVersion, 4, 48):
		return true
	case !known:
		since = "4.36"
	}
	return releaseBelow(p.StackVersion, since)
}

// ollamaFlash are the architectures Ollama turned flash attention on for by
// default before it let llama.cpp decide for every model (v0.13.4), with
// the release that added each (fs/ggml/ggml.go FlashAttention at each tag).
var ollamaFlash = map[string]string{
	"gpt_oss": "0.12.4", "qwen3": "0.12.4", "qwen3_moe": "0.12.4", "gemma3": "0.12.6", "gemma3_text": "0.12.6",
	"qwen3_vl": "0.12.8", "qwen3_vl_moe": "0.12.8", "mistral3": "0.13.2",
}

// ollamaEager reports whether Ollama runs the plan's model without flash
// attention by default: every model before v0.12.4 (OLLAMA_FLASH_ATTENTION
// unset), the architectures off its allow-list until v0.13.4, when
// llama.cpp's auto mode became the default (commit bd6c1d6).
func ollamaEager(p Plan) bool {
	if p.Stack != StackOllama || !releaseBelow(p.StackVersion, "0.13.4") {
		return false
	}
	since, ok := ollamaFlash[strings.ToLower(p.Model.Family)]
	return !ok || releaseBelow(p.StackVersion, since)
}

// OllamaContext is Ollama's default num_ctx, which its KV cache is sized
// for: 2048 before v0.6.7, 4096 until v0.15.5, then by the GPUs' total
// memory (4096 below 23 GiB, 32768 from 23 GiB, 262144 from 47 GiB;
// server/routes.go), never more than the model's positions (maxPos, 0 when
// unknown).
func OllamaContext(p Plan, maxPos int) int {
	ctx := 4096
	switch gib := float64(p.DeviceBytes) / float64(GiB) * float64(p.devices()); {
	case releaseBelow(p.StackVersion, "0.6.7"):
		ctx = 2048
	case releaseBelow(p.StackVersion, "0.15.5"):
	case gib >= 47:
		ctx = 262144
	case gib >= 23:
		ctx = 32768
	}
	if maxPos > 0 && ctx > maxPos {
		ctx = maxPos
	}
	return ctx
}

// loadsCheckpointDtype: from transformers v5.0 (2026-01-26) from_pretrained
// loads a model in its checkpoint's dtype ("auto" is the default, PR
// #42805; before, float32), so the Trainer's bf16=True trains 16-bit
// weights with 16-bit gradients and AdamW states (pure 16-bit), with no
// fp32 master copy. The stacks that set the dtype themselves (TRL's
// model_init_kwargs, LLaMA-Factory's upcast of trainable parameters,
// DeepSpeed's fp32 partitions, sharded by ZeRO) keep their own regime. An
// unstated release keeps the fp32 master copy: most published runs
// predate v5, and a plan that assumed pure 16-bit wrongly would promise
// half the model states' memory.
func loadsCheckpointDtype(p Plan) bool {
	if p.StackVersion == "" || p.Sharding == ShardZeRO1 || p.Sharding == ShardZeRO2 || p.Sharding == ShardZeRO3 {
		return false
	}
	return (p.Stack == StackHF || p.Stack == StackAuto) && !transformersBelow(p, 5, 0)
}

// fusedByDefault reports whether the stack's own default optimizer is
// PyTorch's fused AdamW, whose step makes no temporaries: transformers'
// TrainingArguments default to adamw_torch_fused on PyTorch 2.8 and later
// (huggingface/transformers#37358, merged July 2025, first released in
// 4.54), which the Trainer stacks (the HF Trainer, LLaMA-Factory, axolotl,
// and TRL, whose configs leave optim alone) inherit; before, adamw_torch,
// the foreach step with one state-sized temporary. TRL's release stands
// for its transformers: TRL 0.21 (2025-08-05) requires transformers 4.55
// or later (its setup.cfg). Both releases must be known (stated or
// probed): a plan that assumed the fused step wrongly would promise a
// state's worth of memory it does not have.
func fusedByDefault(p Plan) bool {
	prof := ProfileOf(p.Stack)
	if !prof.Trainer || prof.FusedOptimizer || p.StackVersion == "" || p.TorchVersion == "" || VersionBelow(p.TorchVersion, 2, 8) {
		return false
	}
	switch prof.Dist {
	case "transformers":
		return !VersionBelow(p.StackVersion, 4, 54)
	case "trl":
		return !VersionBelow(p.StackVersion, 0, 21)
	}
	return false
}

// llamaCppEager reports whether llama.cpp runs without flash attention by
// default: before build b6327 (2025-08-30) flash_attn defaulted to false
// (llama_context_default_params; -fa had to be given); since, the
// flash_attn_type default is LLAMA_FLASH_ATTN_TYPE_AUTO, on where the
// backend supports it (the copies vendored at Ollama v0.11.10 and v0.12.4).
// Releases are build numbers ("b5123"); an unreadable or unstated one is
// the current build.
func llamaCppEager(p Plan) bool {
	return p.Stack == StackLlamaCpp && llamaCppBuildBelow(p, 6327)
}

// llamaCppBuildBelow reports whether the plan names a llama.cpp build
// ("b6000", "6000") below build; an empty or unreadable one is current.
func llamaCppBuildBelow(p Plan, build int) bool {
	v := strings.TrimPrefix(strings.TrimSpace(p.StackVersion), "b")
	n, err := strconv.Atoi(v)
	return err == nil && n < build
}

// OllamaParallel is how many requests an Ollama server of the plan's
// release serves at once by default when their KV caches fit
// (OLLAMA_NUM_PARALLEL auto, each slot num_ctx tokens: KvSize = NumCtx ×
// numParallel): 4 from v0.2.0, 2 from v0.6.7, 1 from v0.10.0 (commit
// 20c3266, "Reduce default parallelism to 1"); 1 for other stacks, for
// inference-less plans, for an unstated release (the current one) and for
// the architectures Ollama serves one request at a time (OllamaOneSlot).
func OllamaParallel(p Plan) int {
	if p.Stack != StackOllama || p.Mode != Inference || p.StackVersion == "" || OllamaOneSlot(p) {
		return 1
	}
	switch {
	case releaseBelow(p.StackVersion, "0.2.0"), !releaseBelow(p.StackVersion, "0.10.0"):
		return 1
	case releaseBelow(p.StackVersion, "0.6.7"):
		return 4
	}
	return 2
}

// ollamaOneSlot are the architectures (config.json model_type) Ollama's
// scheduler loads with a single slot whatever OLLAMA_NUM_PARALLEL says
// ("model architecture does not currently support parallel requests",
// server/sched.go, ollama/ollama#4165): mllama from its first release,
// Qwen3-VL, and the hybrid recurrent models (Qwen3-Next, Qwen3.5/3.6,
// LFM2, Nemotron-H), each as Ollama learned to run it.
var ollamaOneSlot = map[string]bool{
	"mllama": true, "qwen3_vl": true, "qwen3_vl_moe": true, "qwen3_next": true,
	"qwen3_5": true, "qwen3_5_text": true, "qwen3_5_moe": true, "qwen3_5_moe_text": true,
	"lfm2": true, "lfm2_moe": true, "nemotron_h": true,
}

// OllamaOneSlot reports whether Ollama serves the plan's model one request
// at a time: its KV cache is num_ctx tokens, not num_ctx × parallel.
func OllamaOneSlot(p Plan) bool {
	return p.Stack == StackOllama && ollamaOneSlot[strings.ToLower(p.Model.Family)]
}

// ShardsLikeFSDP reports whether the stack runs PyTorch FSDP/FSDP2 itself
// (fsdp, torchtitan, nemo-automodel, llm-foundry): FULL_SHARD by default
// over several devices, whole embedding and head gathered, torchtitan's
// per-op selective recompute.
func (s Stack) ShardsLikeFSDP() bool {
	return s == StackFSDP || s == StackTorchtitan || s == StackAutomodel || s == StackLLMFoundry
}

// ExLlama reports ExLlamaV2 or ExLlamaV3 (exllama.go): EXL2/EXL3 files,
// the input embedding on the host, no host offload.
func (s Stack) ExLlama() bool { return s == StackExLlama || s == StackExLlamaV3 }
