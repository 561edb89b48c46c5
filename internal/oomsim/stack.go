package oomsim

import (
	"strings"

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
	StackHF           Stack = "hf"            // transformers: Trainer, generate(); also accelerate and PEFT
	StackTRL          Stack = "trl"           // TRL's trainers (SFTTrainer, DPOTrainer) over transformers and PEFT
	StackAxolotl      Stack = "axolotl"       // transformers under axolotl's configs
	StackLlamaFactory Stack = "llama-factory" // transformers under LLaMA-Factory
	StackDeepSpeed    Stack = "deepspeed"     // DeepSpeed ZeRO (usually under the HF Trainer)
	StackFSDP         Stack = "fsdp"          // PyTorch FSDP/FSDP2 (torchtitan, accelerate's FSDP plugin)
	StackLitGPT       Stack = "litgpt"
	StackTorchtune    Stack = "torchtune"
	StackUnsloth      Stack = "unsloth"
	StackVLLM         Stack = "vllm" // also SGLang and TGI: serving engines that preallocate the device
	StackLlamaCpp     Stack = "llama.cpp"
	StackMLX          Stack = "mlx"
	StackPyTorch      Stack = "pytorch" // a plain PyTorch loop: eager attention, full fp32 loss, fp32 weights under autocast
)

// Stacks lists the accepted values, in the order help texts show them.
var Stacks = []Stack{StackAuto, StackHF, StackTRL, StackAxolotl, StackLlamaFactory, StackDeepSpeed, StackFSDP, StackLitGPT, StackTorchtune, StackUnsloth,
	StackVLLM, StackLlamaCpp, StackMLX, StackPyTorch}

// stackAliases are the other names users and corpora give a stack.
var stackAliases = map[string]Stack{
	"transformers": StackHF, "huggingface": StackHF, "accelerate": StackHF, "peft": StackHF,
	"llamafactory": StackLlamaFactory, "llama_factory": StackLlamaFactory, "hf-trainer": StackHF, "hf-generate": StackHF,
	"llama-recipes": StackFSDP, "llama-cookbook": StackFSDP, "torchtitan": StackFSDP, "fsdp2": StackFSDP,
	"sglang": StackVLLM, "tgi": StackVLLM, "text-generation-inference": StackVLLM,
	"ollama": StackLlamaCpp, "llamacpp": StackLlamaCpp, "koboldcpp": StackLlamaCpp, "lm-studio": StackLlamaCpp, "gguf": StackLlamaCpp,
	"lightning": StackPyTorch, "plain-torch": StackPyTorch, "torch": StackPyTorch,
	"lit-llama": StackLitGPT, "lit-gpt": StackLitGPT, "lit_gpt": StackLitGPT,
	"mlx-lm": StackMLX, "mlx_lm": StackMLX,
	"ms-swift": StackHF, "swift": StackHF,
	"openrlhf": StackDeepSpeed, "deepspeed-chat": StackDeepSpeed,
	"verl": StackFSDP, "fsdp_qlora": StackFSDP, "fsdp-qlora": StackFSDP,
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
	// FusedOptimizer: the optimizer step makes no temporaries (fused=True
	// AdamW); false is PyTorch's default foreach AdamW, whose step holds a
	// temporary the size of one state (torch/optim/adamw.py
	// _multi_tensor_adamw: torch._foreach_sqrt(exp_avg_sqs)).
	FusedOptimizer bool
	// PrefillChunk is how many prompt tokens one forward evaluates at a
	// time (0: the whole prompt at once): the working set of a prefill is
	// sized for a chunk, not the prompt.
	PrefillChunk int
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
	// Dist is the Python distribution whose release is the stack's
	// (StackVersion): transformers for the stacks that run its models.
	Dist string
	// Preallocates is the share of device memory a serving engine takes
	// at start-up whatever the model (vLLM's gpu_memory_utilization,
	// default 0.9); 0 for stacks that allocate as they go.
	Preallocates float64
	// Source names where these defaults were read.
	Source string
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
	StackAxolotl: {Stack: StackAxolotl, Trainer: true, Dist: "transformers", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeFull,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, LoRADropout: true, KbitUpcast: true,
		Source: "axolotl's example configs, which users start from, set gradient_checkpointing: true, flash_attention: true (grouped k and v reach the kernel unexpanded), lora_target_linear: true and lora_dropout: 0.05, and 8/4-bit adapters go through prepare_model_for_kbit_training; the model, loss and adapters are transformers' and PEFT's"},
	StackLlamaFactory: {Stack: StackLlamaFactory, Trainer: true, Dist: "transformers", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeFull,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, RepeatKV: true,
		Source: "LLaMA-Factory turns gradient checkpointing on unless disable_gradient_checkpointing is set, adapts every Linear by default (lora_target: all) and keeps trainable parameters in fp32 (upcast_trainable_params); flash_attn auto is transformers' sdpa"},
	StackDeepSpeed: {Stack: StackDeepSpeed, Trainer: true, Dist: "transformers", Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 4, FusedOptimizer: true, RepeatKV: true, LoRADropout: true,
		Source: "DeepSpeed ZeRO keeps 16-bit parameters and gradients and an fp32 master copy with Adam states in the optimizer partitions (12 bytes per parameter, sharded by stage); its fused Adam makes no step temporaries; attention and loss as transformers"},
	StackFSDP: {Stack: StackFSDP, Attention: AttentionSDPA, Loss: LossFull, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 4, LoRADropout: true,
		Source: "FSDP with a bf16 MixedPrecision policy shards fp32 parameters, gradients and Adam states and all-gathers one wrapped block at a time in bf16 (with one block prefetched)"},
	StackLitGPT: {Stack: StackLitGPT, Dist: "litgpt", Attention: AttentionSDPA, Loss: LossChunked, ChunkedLossBytes: 4, PureHalf: true, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 2, RepeatKV: true, LoRADropout: true, FusedQKVAdapter: true, QuantizesHead: true,
		Source: "litgpt finetune defaults: precision bf16-true, torch SDPA with grouped k and v repeated to every query head in training (model.py: 'flash attention requires it in training mode'), chunked_cross_entropy (chunk 128), lora_query and lora_value on one fused qkv adapter with lora_dropout 0.05, no activation checkpointing on one device; --quantize bnb.* is Lightning's BitsandbytesPrecision without ignore_modules, so lm_head is 4-bit too"},
	StackTorchtune: {Stack: StackTorchtune, Dist: "torchtune", Attention: AttentionSDPA, Loss: LossChunked, ChunkedLossBytes: 6, PureHalf: true, Recompute: RecomputeFull,
		LoRATargets: LoRAAllLinear, AdapterBytes: 2, FusedOptimizer: true, RepeatKV: true,
		Source: "torchtune recipe configs: dtype bf16, enable_activation_checkpointing True, CEWithChunkedOutputLoss (each chunk upcast to fp32 before the cross-entropy), AdamW fused, lora_dropout 0; LoRA on q_proj, v_proj, output_proj and the MLP since v0.5.0 (apply_lora_to_mlp True; q_proj and v_proj only before, see torchtuneQVOnly); its MultiHeadAttention expands grouped k and v to every head before SDPA (modules/attention.py)"},
	StackUnsloth: {Stack: StackUnsloth, Dist: "unsloth", Attention: AttentionSDPA, Loss: LossFused, Recompute: RecomputeOffload,
		LoRATargets: LoRAAllLinear, AdapterBytes: 4, FusedLoRAKernels: true,
		Source: "Unsloth: fused cross-entropy (no full logits), use_gradient_checkpointing=\"unsloth\" (checkpoints offloaded to the host), LoRA on q,k,v,o,gate,up,down in its notebooks; its LoRA kernels save X, e and g for the MLP and X for q/k/v and o (unsloth/kernels/fast_lora.py), its RMSNorm the 16-bit input"},
	StackVLLM: {Stack: StackVLLM, Dist: "vllm", Attention: AttentionSDPA, Preallocates: 0.9, PrefillChunk: 8192,
		Source: "vLLM takes gpu_memory_utilization (default 0.9) of the device at start-up: weights, the activation peak it profiles with max_num_batched_tokens (8,192 in the V1 engine), CUDA graphs, and the KV cache in the rest"},
	StackLlamaCpp: {Stack: StackLlamaCpp, Attention: AttentionSDPA, Quantises: true, PrefillChunk: 512, GraphCompute: true,
		Source: "llama.cpp/ollama allocate the GGUF weights, an f16 KV cache for the context and a compute buffer sized for one n_ubatch (512 tokens) of the prompt"},
	StackMLX: {Stack: StackMLX, Dist: "mlx-lm", Attention: AttentionSDPA, Loss: LossChunked, ChunkedLossBytes: 4, PureHalf: true, Recompute: RecomputeNone,
		LoRATargets: LoRAQV, AdapterBytes: 2, LoRALayers: 16, Quantises: true, PrefillChunk: 2048, GraphCompute: true, UnfusedAttentionBackward: true,
		Source: "mlx-lm generate evaluates the prompt prefill_step_size (2048) tokens at a time; mlx-lm lora defaults: weights as stored, mx.fast.scaled_dot_product_attention, cross-entropy on the 16-bit logits (mlx computes the logsumexp without an fp32 copy), LoRA rank 8 on q_proj and v_proj of the last 16 blocks (num_layers 16), grad_checkpoint off; mlx quantises weights itself on every device; the fast attention's gradient on Metal is the unfused fallback (mlx/backend/metal/scaled_dot_product_attention.cpp)"},
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
// until the forward returns. transformers' own models did so before 4.36
// (DynamicCache, which replaces each layer's tensor as it goes, arrived in
// 4.36); the remote-code families below still do (modeling_qwen.py,
// modeling_chatglm.py, modeling_internlm(2).py, modeling_baichuan.py,
// Falcon's RefinedWeb code).
func tupleKVCache(p Plan) bool {
	switch strings.ToLower(p.Model.Family) {
	case "qwen", "chatglm", "internlm", "internlm2", "baichuan", "refinedwebmodel", "refinedweb":
		return p.Stack != StackVLLM && p.Stack != StackLlamaCpp && p.Stack != StackMLX
	}
	return ProfileOf(p.Stack).Dist == "transformers" && transformersBelow(p, 4, 36)
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
// logits). An unknown release is the current one.
func trlRelease(p Plan, pinnedRecompute, pinnedLoss bool) Plan {
	if p.Stack != StackTRL {
		return p
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

// vllmV0 reports a vLLM before 0.8, whose V0 engine profiles a forward of
// max(max_model_len, 2048) tokens when chunked prefill is off (its default
// up to 32k contexts) instead of V1's max_num_batched_tokens.
func vllmV0(p Plan) bool {
	return p.Stack == StackVLLM && VersionBelow(p.StackVersion, 0, 8)
}
