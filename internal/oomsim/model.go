package oomsim

import (
	"errors"
	"fmt"
	"math"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
)

// ErrNotApplicable marks a plan a convention has no figure for (accelerate's
// "N/A" for 8-bit training, DeepSpeed's estimators for inference). Callers
// turn it into a usage error.
var ErrNotApplicable = errors.New("not covered by this convention")

// Arch is the shape of a transformer. Activation and KV-cache terms need it.
type Arch struct {
	// Layers is the number of blocks that keep activations for the backward
	// pass (encoder plus decoder blocks).
	Layers int `json:"layers"`
	// KVLayers is the number of attention blocks that keep a KV cache while
	// generating: decoder self-attention (and cross-attention for
	// encoder-decoders). 0 for encoders such as BERT or ViT.
	KVLayers int `json:"kv_layers"`
	Hidden   int `json:"hidden"`
	Heads    int `json:"heads"`
	KVHeads  int `json:"kv_heads"`
	HeadDim  int `json:"head_dim"`
	FFN      int `json:"ffn"`
	// ExpertFFN is one routed expert's MLP width in a mixture of experts
	// (moe_intermediate_size; Mixtral's intermediate_size); 0 for dense
	// models and for families whose parser does not give it.
	ExpertFFN    int `json:"expert_ffn,omitempty"`
	Vocab        int `json:"vocab"`
	MaxPositions int `json:"max_positions,omitempty"`
	// Gated is a three-matrix MLP (SwiGLU/GeGLU: gate, up, down) rather
	// than two (fc1, fc2): it keeps twice the MLP activations.
	Gated bool `json:"gated,omitempty"`
	// AttnDropout is the dropout on the attention probabilities in
	// training (BERT's attention_probs_dropout_prob, GPT-2's attn_pdrop,
	// T5's dropout_rate; 0 for today's LLMs): eager attention then keeps
	// its mask and output beside the probabilities.
	AttnDropout float64 `json:"attn_dropout,omitempty"`
	// SlidingWindow is the window of the layers that attend only to the
	// last tokens (Gemma 2/3, Cohere2, gpt-oss), and SlidingLayers how many
	// of the KV layers do: engines that hold their KV cache to the window
	// (slidingCache) keep only that many tokens for them.
	SlidingWindow int `json:"sliding_window,omitempty"`
	SlidingLayers int `json:"sliding_layers,omitempty"`
	// FullKVHeads and FullHeadDim are the KV heads and head size of the
	// layers that attend to the whole context when they differ from the
	// sliding layers' KVHeads and HeadDim (Gemma 4: 2 or 4 heads of 512
	// against 8 or 16 of 256). 0: the same.
	FullKVHeads int `json:"full_kv_heads,omitempty"`
	FullHeadDim int `json:"full_head_dim,omitempty"`
	// LatentKV and LatentRank describe multi-head latent attention
	// (DeepSeek-V2/V3, Kimi K2): an engine that caches the compressed
	// latent keeps LatentKV values per token and layer (kv_lora_rank +
	// qk_rope_head_dim, 576 for V3) instead of every head's keys and
	// values; LatentRank is kv_lora_rank, the part llama.cpp kept a second
	// time as the V cache until its V-less cache (latentCache).
	LatentKV   int `json:"latent_kv,omitempty"`
	LatentRank int `json:"latent_rank,omitempty"`
	// StateValues is what a hybrid's recurrent layers keep per sequence,
	// whatever its length: a linear-attention layer's state (Gated
	// DeltaNet: value heads × key size × value size) or a Mamba-2 layer's
	// (heads × head size × state size), and each one's convolution inputs
	// (conv channels × (kernel − 1)), summed over those layers.
	StateValues int64 `json:"state_values,omitempty"`
	// ImageProfileBytes is what the vision encoder of an encoder–decoder
	// vision model (Llama 3.2 Vision) holds at its peak for one image at
	// its largest tiling, in 16-bit compute. vLLM's start-up profile gives
	// each of max_num_seqs dummy sequences such an image and runs the
	// encoder over all of them at once (vllmProfilePeak).
	ImageProfileBytes int64 `json:"image_profile_bytes,omitempty"`
	// Assumed is true when the shape was guessed from the parameter count.
	Assumed bool `json:"assumed,omitempty"`
}

// Model is what the estimator knows about a model.
type Model struct {
	Name   string `json:"name"`
	Family string `json:"family,omitempty"`
	// Params is the exact parameter count of the model as trained or served
	// (with its LM head).
	Params int64 `json:"params"`
	// HeadParams is the untied output head, which accelerate's AutoModel
	// (the base model) leaves out. 0 when tied or absent.
	HeadParams int64 `json:"head_params,omitempty"`
	// UnquantizedParams stay 16-bit when weights are quantised: bitsandbytes
	// replaces nn.Linear layers only, so embeddings, norms and the LM head
	// keep their dtype. 0 means "estimate from the shape".
	UnquantizedParams int64 `json:"unquantized_params,omitempty"`
	// VisionParams is a vision-language model's image encoder and
	// projector (within Params and UnquantizedParams): every quantised
	// release keeps it 16-bit, a GGUF model in its f16 mmproj file.
	VisionParams int64 `json:"vision_params,omitempty"`
	// BufferBytes are non-parameter tensors accelerate counts (BERT's int64
	// position_ids and token_type_ids, rotary inv_freq).
	BufferBytes int64 `json:"buffer_bytes,omitempty"`
	// LargestLayerParams is DeepSpeed's "largest layer" (the biggest module
	// by its own parameters), used by ZeRO-3.
	LargestLayerParams int64 `json:"largest_layer_params,omitempty"`
	// ActiveParams is what one token passes through in a mixture of
	// experts (shared weights plus the routed experts' share); 0 for dense
	// models. All experts stay resident, so memory counts Params.
	ActiveParams int64 `json:"active_params,omitempty"`
	// Experts and ExpertsPerToken describe a mixture of experts.
	Experts         int `json:"experts,omitempty"`
	ExpertsPerToken int `json:"experts_per_token,omitempty"`
	// Notes say what the count leaves out or assumes.
	Notes []string `json:"notes,omitempty"`
	// Arch is nil for models that are not transformers (ResNet).
	Arch *Arch `json:"arch,omitempty"`
	// Stored is how the published checkpoint stores its weights when it
	// is already quantised (a GPTQ, AWQ, bitsandbytes, fp8 or mlx
	// upload); nil for a 16/32-bit checkpoint.
	Stored *StoredWeights `json:"stored_weights,omitempty"`
	// MTPLayers is how many multi-token-prediction layers the checkpoint
	// carries beside the model (num_nextn_predict_layers,
	// mtp_num_hidden_layers): not counted in Params, loaded only for
	// speculative decoding (Plan.Speculative).
	MTPLayers int `json:"mtp_layers,omitempty"`
}

// StoredWeights is the storage of a checkpoint published quantised: the
// precision and format a plan loads it in unless asked for another.
type StoredWeights struct {
	Precision capability.Precision `json:"precision"`
	Format    QuantFormat          `json:"format"`
	// Bits per weight with the format's constants; 0 takes the format's
	// default (Plan.WeightBits).
	Bits float64 `json:"bits,omitempty"`
	// From says where it was read: "quantization_config: GPTQ 4-bit,
	// group 128", "the name's -bnb-4bit".
	From string `json:"from"`
}

// Plan is one way to run a model. Zero values take documented defaults.
type Plan struct {
	Model     Model                `json:"-"`
	Mode      Mode                 `json:"mode"`
	Precision capability.Precision `json:"precision"`
	// BatchSize is the batch per device step the user wants (the global
	// batch divided by data-parallel devices). The ladder keeps it.
	BatchSize int `json:"batch_size"`
	// MicroBatch is what runs at once; BatchSize/MicroBatch steps are
	// accumulated. 0 means BatchSize.
	MicroBatch int `json:"micro_batch_size"`
	SeqLen     int `json:"seq_len"`
	// SeqFromModel says SeqLen is the model's maximum positions because no
	// length was asked for: a serving engine's default max_model_len or
	// session_len. An engine that shortens its context to what its KV
	// cache holds (lmdeploy, SGLang) then starts where one that refuses
	// (vLLM) does not.
	SeqFromModel bool      `json:"seq_from_model,omitempty"`
	Optimizer    Optimizer `json:"optimizer,omitempty"`
	Recompute    Recompute `json:"recompute,omitempty"`
	// RecomputeLayers is how many consecutive blocks each checkpoint spans
	// under full recomputation (Megatron's --recompute-num-layers with
	// --recompute-method uniform, NeMo's activations_checkpoint_num_layers,
	// a torch.utils.checkpoint around a group of blocks): the forward keeps
	// one input per group and the backward recomputes a whole group at
	// once. 0 or 1: every block is its own checkpoint.
	RecomputeLayers int `json:"recompute_layers,omitempty"`
	// Attention is the attention implementation: eager keeps s×s scores,
	// sdpa (and flash) does not. "" or "auto": eager for training (the
	// published formula), SDPA for inference (transformers' default).
	Attention Attention `json:"attention,omitempty"`
	// Sharding of model states over Devices (eleutherai convention).
	Sharding Sharding `json:"sharding"`
	// ZeROStage selects the DeepSpeed estimator (2 or 3).
	ZeROStage int `json:"zero_stage,omitempty"`
	Devices   int `json:"devices"`
	// TensorParallel is the tensor-parallel degree: the devices each
	// matrix and each block's activations are split over. 0 with Sharding
	// "tp": every device of a pipeline stage.
	TensorParallel int `json:"tensor_parallel,omitempty"`
	// SequenceParallel says whether tensor parallelism also splits what a
	// block keeps outside its matmuls (the norms' inputs, the linear
	// layers' inputs) by tokens (Megatron's --sequence-parallel): "on",
	// "off"; "" is on (Korthikanti et al. 2022, Table 2: sbh·34/t with
	// it, sbh(10 + 24/t) without).
	SequenceParallel Switch `json:"sequence_parallel,omitempty"`
	// PipelineStages is the pipeline-parallel degree (1F1B): the stages
	// the blocks are split into. 0 or 1: none.
	PipelineStages int `json:"pipeline_stages,omitempty"`
	// ExpertParallel is a mixture of experts' expert-parallel degree: the
	// devices of a pipeline stage its routed experts are split over
	// (Megatron's --expert-model-parallel-size). 0 or 1: the experts are
	// split like the rest of the model.
	ExpertParallel int `json:"expert_parallel,omitempty"`
	// EvalBatch is a training run's evaluation batch when it evaluates
	// between steps (the HF Trainer's per_device_eval_batch_size, 8 by
	// default, with an eval dataset and eval_strategy set): a forward
	// without gradients whose logits the loss copies. 0: no evaluation.
	EvalBatch int `json:"eval_batch,omitempty"`
	// ContextParallel is a training run's context-parallel degree: the
	// devices each sequence is split over by tokens (Megatron's
	// --context-parallel-size, torchtitan's context_parallel_degree, ring
	// attention; DeepSpeed-Ulysses sequence parallelism, the
	// sequence_parallel_size of xtuner, LLaMA-Factory and ms-swift). Each
	// device keeps 1/ContextParallel of every sequence's activations and
	// logits; for the model states its devices are data-parallel, so
	// ZeRO/FSDP shards over them. 0 or 1: none.
	ContextParallel int `json:"context_parallel,omitempty"`
	// Offload "cpu" moves optimizer states to host memory (ZeRO-Offload).
	Offload Offload `json:"offload"`
	// OffloadParams also moves parameters to the host (ZeRO-3 only).
	OffloadParams bool `json:"offload_params,omitempty"`
	// FSDP says a Trainer stack's ZeRO sharding is PyTorch FSDP
	// (accelerate's or axolotl's fsdp_config), not DeepSpeed: axolotl's
	// keeps the bf16 it loads, where DeepSpeed's optimizer keeps its own
	// fp32 master partitions (and accelerate upcasts the other stacks'
	// trainable parameters to fp32 under mixed precision, which the plan
	// keeps as it keeps DeepSpeed's).
	FSDP bool `json:"fsdp,omitempty"`
	// Convention is the published accounting shown beside devctl's own
	// estimate (eleutherai, accelerate, deepspeed); it never changes the
	// estimate or whether the plan fits.
	Convention Convention `json:"convention"`
	// Stack is the framework that runs the plan (its Profile supplies the
	// defaults below when they are empty).
	Stack Stack `json:"stack,omitempty"`
	// StackVersion is the stack's version when known ("4.44.2"): a few
	// terms changed between releases (transformers' generate logits before
	// 4.45, vLLM's V0 engine before 0.8). Empty: the current release.
	StackVersion string `json:"stack_version,omitempty"`
	// TorchVersion is PyTorch's release when known ("2.8.0", stated or
	// probed); empty: not known. The HF Trainer's default optimizer is
	// fused AdamW from transformers 4.54 on PyTorch 2.8 (fusedByDefault).
	TorchVersion string `json:"torch_version,omitempty"`
	// Mixed is how 16-bit training holds weights and optimizer state: amp
	// (fp32 master) or pure 16-bit; empty takes the stack's default.
	Mixed MixedPrecision `json:"mixed_precision,omitempty"`
	// Loss is how the LM loss is computed (full, chunked, fused); empty
	// takes the stack's default.
	Loss Loss `json:"loss,omitempty"`
	// LoRATargets are the adapted modules; empty takes the stack's default.
	LoRATargets LoRATargets `json:"lora_targets,omitempty"`
	// Quant is the storage format of 8-bit and 4-bit weights (bnb by
	// default).
	Quant QuantFormat `json:"quant_format,omitempty"`
	// WeightBits, when set, is the storage of one quantised weight in
	// bits, its constants included (GGUF Q5_K_M 5.69, mlx 6-bit 6.5,
	// EXL2 at 4.65 bpw): it replaces the format's default for 8/4-bit.
	WeightBits float64 `json:"weight_bits,omitempty"`
	// GPULayers is llama.cpp's -ngl (Ollama's num_gpu): how many of the
	// model's layer slots, its blocks and the output layer, are on the
	// device; the rest run from host memory. 0, or more than the blocks,
	// is all of them. llama.cpp and Ollama only.
	GPULayers int `json:"gpu_layers,omitempty"`
	// CPUMoELayers is llama.cpp's --n-cpu-moe: the blocks whose routed
	// experts stay in host memory, from the first (--cpu-moe: all of
	// them). llama.cpp only (Ollama has no such option).
	CPUMoELayers int `json:"cpu_moe_layers,omitempty"`
	// KVBits is the KV cache's element width when it is quantised (8 for
	// an fp8 cache); 0 means the compute dtype.
	KVBits int `json:"kv_cache_bits,omitempty"`
	// Prealloc is a serving engine's share of the device (vLLM's
	// gpu_memory_utilization); 0 takes the stack's default.
	Prealloc float64 `json:"gpu_memory_utilization,omitempty"`
	// MaxNumSeqs is a serving engine's max_num_seqs (vLLM's, SGLang's
	// max_running_requests): the sequences its start-up profile draws
	// logits for; 0 takes the engine's default.
	MaxNumSeqs int `json:"max_num_seqs,omitempty"`
	// KVCacheTokens sizes a serving engine's KV cache by a count of tokens
	// instead of its memory share: vLLM's num_gpu_blocks_override ×
	// block_size and lmdeploy's cache_max_entry_count of 1 or more (blocks
	// × cache_block_seq_len) allocate exactly that; SGLang's
	// max_total_tokens and TensorRT-LLM's max_tokens_in_paged_kv_cache cap
	// what the share gives. 0: the share.
	KVCacheTokens int `json:"kv_cache_tokens,omitempty"`
	// PrefillTokens is the tokens a serving engine's start-up forward
	// profiles at once (vLLM's max_num_batched_tokens, SGLang's
	// chunked_prefill_size, TGI's max_batch_prefill_tokens); 0 takes the
	// engine's default.
	PrefillTokens int `json:"max_num_batched_tokens,omitempty"`
	// PrefillChunk is the prompt tokens one forward of a local engine
	// evaluates (llama.cpp's --ubatch-size, Ollama's num_batch, mlx-lm's
	// --prefill-step-size); 0 takes the stack's (Profile.PrefillChunk).
	PrefillChunk int `json:"prefill_chunk,omitempty"`
	// Speculative is the speculative decoding a serving engine runs:
	// "mtp" drafts with the checkpoint's multi-token-prediction layers
	// (vLLM's speculative_config method "mtp", SGLang's NEXTN), which
	// then sit beside the model with a KV cache of their own.
	Speculative string `json:"speculative,omitempty"`
	// DeviceBytes is the device's memory, for engines that preallocate a
	// share of it.
	DeviceBytes int64 `json:"-"`
	// DeviceName is the device's name, for engines whose defaults depend
	// on it (vLLM keeps its small batch defaults on an A100).
	DeviceName string `json:"-"`
	// LoRARank is the adapter rank for lora/qlora (default 16).
	LoRARank int `json:"lora_rank,omitempty"`
	// DoRA: the adapters are weight-decomposed (DoRA, Liu et al. 2024;
	// peft's use_dora): a trainable magnitude per output feature, and each
	// adapted Linear keeps its output and the adapter's for the backward.
	DoRA bool `json:"dora,omitempty"`
	// LoRALayers is how many of the last blocks carry adapters (mlx-lm
	// adapts the last 16 by default); 0 means every block. Blocks before
	// the first adapted one keep no activations for the backward.
	LoRALayers int `json:"lora_layers,omitempty"`
	// PromptLen is how many of an inference's SeqLen tokens are the prompt
	// (the rest are generated): the prefill works on the prompt, the KV
	// cache holds them all. 0 means the whole sequence is the prompt.
	PromptLen int `json:"prompt_len,omitempty"`
	// Objective is the training objective (sft, dpo, kto, orpo, simpo);
	// empty is sft, next-token prediction on the batch as given.
	Objective Objective `json:"objective,omitempty"`
	// Compiled: the model runs under torch.compile, which fuses norms and
	// element-wise ops so fewer intermediates are saved.
	Compiled bool `json:"compiled,omitempty"`
	// FusedKernels: Liger Kernel's RMSNorm and SwiGLU replace the model's
	// (apply_liger_kernel_to_*, TRL's and axolotl's use_liger_kernel): each
	// norm keeps its 16-bit input and the rstd, the gated MLP its gate and
	// up outputs (LigerRMSNormFunction, LigerSiLUMulFunction). Liger's
	// fused linear cross-entropy is Loss fused.
	FusedKernels bool `json:"fused_kernels,omitempty"`
	// TiledMLP: the MLP runs over tiles of the sequence and recomputes
	// each tile in the backward (DeepSpeed/ArcticTraining ALST's TiledMLP,
	// Unsloth's tiled MLP for long context): none of its intermediates is
	// kept for the whole sequence, only one tile's (tiles of about hidden
	// tokens, ALST's ceil(seq/hidden) shards).
	TiledMLP bool `json:"tiled_mlp,omitempty"`
	// OptimizerInBackward steps each parameter as soon as its gradient is
	// ready and frees the gradient (torchtune's optimizer_in_bwd): the
	// gradients are never all alive.
	OptimizerInBackward bool `json:"optimizer_in_backward,omitempty"`
	// GaLoreRank is the projection rank of a GaLore optimizer; 0 means
	// DefaultGaLoreRank.
	GaLoreRank int `json:"galore_rank,omitempty"`
	// Rollout, RolloutShare, RolloutSleep and RolloutSteps describe a GRPO
	// step's generation: the engine ("" is hf), a colocated vLLM's
	// gpu_memory_utilization (0: DefaultRolloutShare), whether vLLM's
	// sleep mode releases it during the training step, and TRL's
	// steps_per_generation (0 or 1: one): each device generates BatchSize ×
	// RolloutSteps sequences at once.
	Rollout      RolloutEngine `json:"rollout,omitempty"`
	RolloutShare float64       `json:"rollout_gpu_memory_utilization,omitempty"`
	RolloutSleep bool          `json:"rollout_sleep_mode,omitempty"`
	RolloutSteps int           `json:"rollout_steps_per_generation,omitempty"`
	// KLReference keeps GRPO's frozen reference model (beta != 0).
	KLReference bool `json:"kl_reference,omitempty"`
	// Generations is GRPO's completions per prompt when the per-device
	// batch counts prompts (TRL before 0.15): each step generates and
	// trains BatchSize × Generations sequences. 0: the batch counts
	// completions (TRL since 0.15).
	Generations int `json:"generations_per_prompt,omitempty"`
	// ZeRO2Legacy uses DeepSpeed's ZeRO-2 formula from before PR #5099
	// (June 2024): 4P + 16P/G instead of 2P + 18P/G.
	ZeRO2Legacy bool `json:"-"`
	// Backend decides the runtime overhead (cuda, rocm, xla, mps, cpu, ...).
	Backend backend.Backend `json:"backend"`
	// OnCPU is set by the ladder's last rung: run on the host instead.
	OnCPU bool `json:"on_cpu,omitempty"`
	// EagerModuleLoading: the CUDA runtime loads every module at start-up
	// (torch before 1.13 or CUDA before 11.7), a larger context.
	EagerModuleLoading bool `json:"-"`
	// ExpandableSegments: PyTorch's CUDA allocator maps physical pages into
	// growing segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True),
	// so freed blocks are reused whatever their size: reserved stays at the
	// peak of live tensors. Set by the flag or by a stack that sets it.
	ExpandableSegments bool `json:"expandable_segments,omitempty"`
}

// GradAccum is the number of micro-batches accumulated per step.
func (p Plan) GradAccum() int {
	mb := p.micro()
	if mb <= 0 {
		return 1
	}
	return (p.batch() + mb - 1) / mb
}

func (p Plan) batch() int {
	if p.BatchSize <= 0 {
		return 1
	}
	return p.BatchSize
}

func (p Plan) micro() int {
	if p.MicroBatch <= 0 || p.MicroBatch > p.batch() {
		return p.batch()
	}
	return p.MicroBatch
}

// VLLMShare is a GRPO step's colocated vLLM's gpu_memory_utilization:
// RolloutShare, or TRL's default.
func (p Plan) VLLMShare() float64 {
	if p.RolloutShare <= 0 {
		return DefaultRolloutShare
	}
	return p.RolloutShare
}

func (p Plan) devices() int {
	if p.Devices <= 0 {
		return 1
	}
	return p.Devices
}

// TensorDegree is the tensor-parallel degree: TensorParallel when given,
// every device for Sharding "tp" without one, else 1.
func (p Plan) TensorDegree() int {
	switch {
	case p.TensorParallel > 0:
		return min(p.TensorParallel, p.devices())
	case p.Sharding == ShardTP:
		return max(p.devices()/p.PipelineDegree(), 1)
	}
	return 1
}

// ExpertParams are a mixture of experts' routed experts: with E experts
// of which k serve a token, Params = shared + E·e and ActiveParams =
// shared + k·e, so E·e = E·(Params − ActiveParams)/(E − k). 0 for a dense
// model or one whose active count is unknown.
func (m Model) ExpertParams() float64 {
	e, k := float64(m.Experts), float64(m.ExpertsPerToken)
	if m.Experts <= 1 || m.ActiveParams <= 0 || m.ActiveParams >= m.Params || k >= e {
		return 0
	}
	return e * float64(m.Params-m.ActiveParams) / (e - k)
}

// Switch is a setting that is on, off, or left to the stack ("").
type Switch string

// The values of a Switch.
const (
	SwitchOn  Switch = "on"
	SwitchOff Switch = "off"
)

// Switches lists them, in the order help texts show them.
var Switches = []Switch{SwitchOn, SwitchOff}

// ContextDegree is the context-parallel degree, 1 without it or when the
// plan does not train.
func (p Plan) ContextDegree() int {
	if !p.Mode.Trains() {
		return 1
	}
	return min(max(p.ContextParallel, 1), p.devices())
}

// PipelineDegree is the pipeline-parallel degree, 1 without pipelining.
func (p Plan) PipelineDegree() int {
	return min(max(p.PipelineStages, 1), p.devices())
}

// Breakdown is the memory a plan needs on one device, in bytes.
type Breakdown struct {
	WeightsBytes     int64 `json:"weights_bytes"`
	GradientsBytes   int64 `json:"gradients_bytes"`
	OptimizerBytes   int64 `json:"optimizer_bytes"`
	ActivationsBytes int64 `json:"activations_bytes"`
	KVCacheBytes     int64 `json:"kv_cache_bytes"`
	OverheadBytes    int64 `json:"overhead_bytes"`
	TotalBytes       int64 `json:"total_bytes"`
	// ModelStatesBytes = weights + gradients + optimizer: the figure the
	// convention itself publishes (accelerate's table, DeepSpeed's
	// estimator), before devctl adds activations, KV cache and overhead.
	ModelStatesBytes int64 `json:"model_states_bytes"`
	// HostBytes is host (CPU) memory the plan needs for offloaded state.
	HostBytes int64 `json:"host_bytes,omitempty"`
	// HostInTotal: the plan runs on the CPU, where "offloaded to the host"
	// is the same memory, so HostBytes is part of TotalBytes.
	HostInTotal bool `json:"host_in_total,omitempty"`
	// LargestLayerBytes is accelerate's "Largest Layer" when known.
	LargestLayerBytes int64      `json:"largest_layer_bytes,omitempty"`
	Convention        Convention `json:"convention"`
	OverheadSource    string     `json:"overhead_source,omitempty"`
	Notes             []string   `json:"notes,omitempty"`

	// LogitsBytes are the loss's buffers in training (the logits, their
	// fp32 upcast and gradients) and the last position's logits when
	// generating.
	LogitsBytes int64 `json:"logits_bytes"`
	// BuffersBytes are transients: the optimizer step's temporary, FSDP's
	// gathered blocks, 4-bit dequantisation, a serving engine's CUDA
	// graphs.
	BuffersBytes int64 `json:"buffers_bytes"`
	// RolloutBytes is a GRPO step's generation: the KV cache and prefill
	// of model.generate (a phase apart from the training step), or a
	// colocated vLLM's share of the device (held through the step unless
	// it sleeps).
	RolloutBytes int64 `json:"rollout_bytes,omitempty"`
	// EvalBytes is a training run's evaluation forward between steps at
	// Plan.EvalBatch: one block's working set and the batch's logits with
	// the loss's copies, beside the weights and optimizer states (the
	// gradients are freed by then). 0 without an evaluation.
	EvalBytes int64 `json:"eval_bytes,omitempty"`
	// OverlapBytes is what the parts above do not hold at the same time
	// (zero or negative): training frees its saved activations as the
	// gradients grow, so the peak is less than their sum. The parts plus
	// OverlapBytes are PeakAllocatedBytes.
	OverlapBytes int64 `json:"overlap_bytes"`
	// PeakAllocatedBytes is torch.cuda.max_memory_allocated's figure: the
	// tensors alive at the peak.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	// AllocatorBytes is the caching allocator's slack above that
	// (rounding, fragmentation); ReservedBytes = PeakAllocatedBytes +
	// AllocatorBytes is max_memory_reserved's figure.
	AllocatorBytes int64 `json:"allocator_bytes"`
	ReservedBytes  int64 `json:"reserved_bytes"`
	// SchedulerReserveBytes is memory the stack keeps free on each device
	// when it decides what fits (Ollama sets 457 MiB aside before placing
	// layers): not allocated, but a plan within it does not run wholly on
	// the device.
	SchedulerReserveBytes int64 `json:"scheduler_reserve_bytes,omitempty"`
	// heldBytes is memory the caching allocator keeps reserved above the
	// peak of live tensors: segments a phase freed that the later phase's
	// allocations could not reuse (autocastCopies).
	heldBytes int64
	// Published is the convention's own model-state figures when one was
	// asked for (--convention): a reproduction of a published estimator,
	// shown beside devctl's estimate, never used for the verdict.
	Published *Published `json:"published,omitempty"`
}

// Published is a published estimator's figures for the plan.
type Published struct {
	Convention       Convention `json:"convention"`
	WeightsBytes     int64      `json:"weights_bytes"`
	GradientsBytes   int64      `json:"gradients_bytes"`
	OptimizerBytes   int64      `json:"optimizer_bytes"`
	ModelStatesBytes int64      `json:"model_states_bytes"`
	HostBytes        int64      `json:"host_bytes,omitempty"`
	// LargestLayerBytes is accelerate's "Largest Layer" when known.
	LargestLayerBytes int64    `json:"largest_layer_bytes,omitempty"`
	Notes             []string `json:"notes,omitempty"`
}

// Validate checks a plan's enumerations and ranges. It is pure, so the CLI
// reports bad input before anything runs.
func (p Plan) Validate() error {
	if p.Model.Params <= 0 {
		return fmt.Errorf("model %q has no parameter count", p.Model.Name)
	}
	switch p.Speculative {
	case "":
	case SpeculativeMTP:
		if p.Mode != Inference || p.Model.MTPLayers <= 0 {
			return fmt.Errorf("speculative %q: the model's multi-token-prediction layers as a draft at inference; model %q has %d of them, mode %s", p.Speculative, p.Model.Name, p.Model.MTPLayers, p.Mode)
		}
	default:
		return fmt.Errorf("speculative %q: want mtp or none", p.Speculative)
	}
	for _, err := range []error{
		check("mode", p.Mode, Modes), check("precision", p.Precision, capability.Precisions),
		check("optimizer", p.Optimizer, Optimizers), check("recompute", p.Recompute, Recomputes),
		check("attention", p.Attention, Attentions), check("convention", p.Convention, Conventions),
		check("offload", p.Offload, Offloads), check("sharding", p.Sharding, Shardings),
		check("objective", p.Objective, Objectives), check("rollout", p.Rollout, Rollouts),
	} {
		if err != nil {
			return err
		}
	}
	if p.BatchSize < 0 || p.BatchSize > 1<<20 || p.MicroBatch < 0 || p.SeqLen < 0 || p.SeqLen > 1<<24 || p.Devices < 0 || p.Devices > 1<<16 {
		return errors.New("batch size, sequence length or device count out of range")
	}
	if p.ExpertParallel < 0 || p.ExpertParallel > p.devices() {
		return fmt.Errorf("expert-parallel degree %d is outside 0..%d (the devices)", p.ExpertParallel, p.devices())
	}
	if p.TensorParallel < 0 || p.PipelineStages < 0 || p.devices()%(max(p.TensorParallel, 1)*max(p.PipelineStages, 1)) != 0 {
		return fmt.Errorf("tensor-parallel degree %d times pipeline stages %d does not divide the %d devices", p.TensorParallel, p.PipelineStages, p.devices())
	}
	switch {
	case p.GPULayers < 0 || p.GPULayers > 1<<16:
		return fmt.Errorf("GPU layers %d is outside 0..%d", p.GPULayers, 1<<16)
	case p.CPUMoELayers < 0 || p.CPUMoELayers > 1<<16:
		return fmt.Errorf("CPU MoE layers %d is outside 0..%d", p.CPUMoELayers, 1<<16)
	case (p.GPULayers > 0 || p.CPUMoELayers > 0) && (!ggmlStack(p.Stack) || p.Mode != Inference):
		return fmt.Errorf("%w: GPU layers (llama.cpp's -ngl, Ollama's num_gpu) and experts on the CPU (--n-cpu-moe) are for inference on --stack llama.cpp or ollama", ErrNotApplicable)
	case p.GPULayers > 0 && p.Offload == OffloadCPU:
		return fmt.Errorf("%w: GPU layers already say what runs from host memory: drop the CPU offload", ErrNotApplicable)
	}
	if p.EvalBatch < 0 || p.EvalBatch > 1<<20 {
		return fmt.Errorf("evaluation batch %d is outside 0..%d", p.EvalBatch, 1<<20)
	}
	if p.ContextParallel < 0 || p.devices()%(max(p.TensorParallel, 1)*max(p.PipelineStages, 1)*max(p.ContextParallel, 1)) != 0 {
		return fmt.Errorf("context-parallel degree %d times tensor-parallel degree %d times pipeline stages %d does not divide the %d devices",
			p.ContextParallel, max(p.TensorParallel, 1), max(p.PipelineStages, 1), p.devices())
	}
	if p.Generations < 0 || p.Generations > 1<<10 {
		return fmt.Errorf("generations per prompt %d is outside 0..%d", p.Generations, 1<<10)
	}
	if p.RolloutShare != p.RolloutShare || p.RolloutShare < 0 || p.RolloutShare >= 1 || p.RolloutSteps < 0 || p.RolloutSteps > 1<<12 {
		return fmt.Errorf("rollout share %g must be in [0, 1) and steps per generation %d in 0..%d", p.RolloutShare, p.RolloutSteps, 1<<12)
	}
	if p.GaLoreRank < 0 || p.GaLoreRank > 1<<16 {
		return fmt.Errorf("GaLore rank %d is outside 0..%d", p.GaLoreRank, 1<<16)
	}
	if err := p.Optimizer.CheckTrains(p.Mode); err != nil {
		return err
	}
	if p.PromptLen < 0 || (p.SeqLen > 0 && p.PromptLen > p.SeqLen) {
		return fmt.Errorf("prompt length %d is outside 0..%d (the sequence length)", p.PromptLen, p.SeqLen)
	}
	return nil
}

// sat converts a float byte count to int64, saturating instead of
// overflowing: a silly plan gets "too big", never a negative number.
func sat(f float64) int64 {
	switch {
	case f != f || f < 0:
		return 0
	case f >= math.MaxInt64/2:
		return math.MaxInt64 / 2
	}
	return int64(math.Ceil(f))
}

// add sums byte counts without overflowing.
func add(xs ...int64) int64 {
	var t int64
	for _, x := range xs {
		if x > math.MaxInt64/2-t {
			return math.MaxInt64 / 2
		}
		t += x
	}
	return t
}
