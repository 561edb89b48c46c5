package oomsim

import (
	"fmt"
	"slices"
	"strings"
)

// The words of a plan. Each is a string type with its constants, the list
// help texts and validation messages show, and one parser (Parse), so a
// flag, a config value and a corpus row are read the same way.

// Mode is how a model is used.
type Mode string

// Modes of use.
const (
	Inference Mode = "inference"
	Training  Mode = "training"
	LoRA      Mode = "lora"
	QLoRA     Mode = "qlora"
)

// Trains reports whether the mode runs a backward pass.
func (m Mode) Trains() bool { return m == Training || m == LoRA || m == QLoRA }

// Optimizer is the training optimizer, which decides the state kept per
// trainable parameter.
type Optimizer string

// Optimizers.
const (
	AdamW Optimizer = "adamw"
	// AdamWFused is AdamW without PyTorch's foreach step temporaries:
	// torch.optim.AdamW(fused=True), or a per-parameter loop, which holds
	// at most one parameter's temporary. Its states are AdamW's.
	AdamWFused Optimizer = "adamw-fused"
	AdamW8bit  Optimizer = "adamw-8bit"
	// The paged variants (bitsandbytes PagedAdamW, PagedAdamW8bit) keep
	// their states in CUDA unified memory, which the driver pages to the
	// host under pressure: they are not in the caching allocator's
	// counters and do not make a run go out of memory.
	PagedAdamW     Optimizer = "paged-adamw"
	PagedAdamW8bit Optimizer = "paged-adamw-8bit"
	SGD            Optimizer = "sgd"
	Adafactor      Optimizer = "adafactor"
	// Lion (Chen et al. 2023, "Symbolic Discovery of Optimization
	// Algorithms"; lion-pytorch) keeps one momentum state per parameter.
	Lion Optimizer = "lion"
	// Muon (Keller Jordan 2024; torch.optim.Muon since PyTorch 2.9) keeps
	// one momentum buffer per hidden weight matrix; every Muon recipe
	// (modded-nanogpt, Moonlight, nanochat) steps the embeddings, the
	// output head and the 1-D parameters with AdamW.
	Muon Optimizer = "muon"
	// GaLore (Zhao et al. 2024; galore-torch, the HF Trainer's
	// galore_adamw*) runs AdamW on rank-r projections of the attention and
	// MLP weights' gradients: a projector and two states of the projected
	// size per matrix; the other parameters get plain AdamW. The 8-bit
	// variant keeps bitsandbytes 8-bit states; the layerwise variants step
	// each weight inside the backward, so its gradient is freed at once.
	GaLore              Optimizer = "galore"
	GaLore8bit          Optimizer = "galore-8bit"
	GaLoreLayerwise     Optimizer = "galore-layerwise"
	GaLore8bitLayerwise Optimizer = "galore-8bit-layerwise"
	// LOMO (Lv et al. 2023, "Full Parameter Fine-tuning for Large Language
	// Models with Limited Resources") fuses the update into the backward:
	// no optimizer state and one parameter's gradient at a time. AdaLomo
	// (Lv et al. 2024) adds Adafactor-style factored second moments (a row
	// and a column vector per matrix).
	LOMO    Optimizer = "lomo"
	AdaLomo Optimizer = "adalomo"
	// BAdam (Luo et al. 2024, block coordinate descent; LLaMA-Factory's
	// use_badam) trains one block of layers at a time over 16-bit weights:
	// only the active block has gradients, and its fp32 copy and Adam
	// states (the paper's Table 2: Llama 2-7B at 13.4 GB of weights,
	// 0.39 GB of gradients and 2.35 GB of optimizer state).
	BAdam Optimizer = "badam"
)

// Paged reports whether the optimizer's states live in paged unified memory.
func (o Optimizer) Paged() bool { return o == PagedAdamW || o == PagedAdamW8bit }

// GaLore reports whether the optimizer projects gradients to low rank.
func (o Optimizer) GaLore() bool {
	return o == GaLore || o == GaLore8bit || o == GaLoreLayerwise || o == GaLore8bitLayerwise
}

// InBackward reports whether the optimizer steps each parameter inside the
// backward pass (LOMO, AdaLomo, layerwise GaLore), freeing its gradient
// there: the run never holds the whole model's gradients.
func (o Optimizer) InBackward() bool {
	return o == LOMO || o == AdaLomo || o == GaLoreLayerwise || o == GaLore8bitLayerwise
}

// FullParameterOnly reports whether the optimizer is built for full
// training (GaLore projects full weight gradients; LOMO and AdaLomo fuse
// the update of every weight): with LoRA it is a contradiction.
func (o Optimizer) FullParameterOnly() bool {
	return o.GaLore() || o == LOMO || o == AdaLomo || o == BAdam
}

// CheckTrains says why the optimizer cannot train in mode (nil when it
// can): one built for full training cannot step LoRA adapters. The
// message names the optimizers that can.
func (o Optimizer) CheckTrains(m Mode) error {
	if (m != LoRA && m != QLoRA) || !o.FullParameterOnly() {
		return nil
	}
	var ok []string
	for _, c := range Optimizers {
		if !c.FullParameterOnly() {
			ok = append(ok, string(c))
		}
	}
	return fmt.Errorf("optimizer %s trains every weight (mode training); with mode %s use %s", o, m, strings.Join(ok, ", "))
}

// NoMasterCopy reports whether the optimizer updates 16-bit weights with
// no fp32 master copy of the whole model (LOMO, AdaLomo, BAdam's frozen
// blocks): training under it is pure 16-bit unless asked otherwise.
func (o Optimizer) NoMasterCopy() bool { return o == LOMO || o == AdaLomo || o == BAdam }

// Recompute is the activation recomputation (checkpointing) level.
type Recompute string

// Recomputation levels, from none to full.
const (
	RecomputeNone      Recompute = "none"
	RecomputeSelective Recompute = "selective"
	RecomputeFull      Recompute = "full"
	// RecomputeOffload is full checkpointing with the checkpoints (each
	// block's input) moved to host memory as the forward makes them
	// (torchtune enable_activation_offloading, Unsloth's "unsloth").
	RecomputeOffload Recompute = "offload"
)

// Attention is the attention implementation: what decides whether s×s
// scores are kept.
type Attention string

// Attention implementations. AttentionAuto lets the planner choose.
const (
	AttentionAuto  Attention = "auto"
	AttentionEager Attention = "eager"
	AttentionSDPA  Attention = "sdpa" // fused: no s×s scores in memory; the stack decides whether grouped k/v are expanded first
	// AttentionFlash is flash-attention's kernel (transformers'
	// flash_attention_2/3): fused, and it takes grouped k and v as they are.
	AttentionFlash Attention = "flash"
)

// Sharding is how model states are split over data-parallel devices.
type Sharding string

// Shardings.
const (
	ShardNone Sharding = "none"
	// ShardZeRO1 shards the optimizer states only (DeepSpeed's stage 1,
	// PyTorch's ZeroRedundancyOptimizer): every device keeps whole
	// gradients until the step.
	ShardZeRO1 Sharding = "zero1"
	ShardZeRO2 Sharding = "zero2" // gradients and optimizer states sharded
	ShardZeRO3 Sharding = "zero3" // parameters too (FSDP FULL_SHARD)
	// ShardTP is tensor parallelism with sequence parallelism (Megatron,
	// torchtitan): every matrix and the activations split over the devices.
	ShardTP Sharding = "tp"
)

// Offload says what moves to host memory.
type Offload string

// Offloads.
const (
	OffloadNone Offload = "none"
	OffloadCPU  Offload = "cpu"
)

// Convention names the accounting a Breakdown follows.
type Convention string

// Conventions. Devctl is devctl's own estimate, the default; the others
// reproduce a published estimator beside it.
const (
	Devctl     Convention = "devctl"
	EleutherAI Convention = "eleutherai"
	Accelerate Convention = "accelerate"
	DeepSpeed  Convention = "deepspeed"
)

// Objective is what training optimises; preference objectives change
// memory: paired ones run the chosen and the rejected completion of every
// example in one forward (TRL's concatenated_forward), and DPO and KTO hold
// a frozen reference model beside the one trained (TRL's
// create_reference_model copies it unless the model is a PEFT model, whose
// reference is the base with its adapters disabled).
type Objective string

// Objectives.
const (
	ObjectiveSFT   Objective = "sft"
	ObjectiveDPO   Objective = "dpo"
	ObjectiveKTO   Objective = "kto"
	ObjectiveORPO  Objective = "orpo"
	ObjectiveSimPO Objective = "simpo"
	// ObjectiveCPO is contrastive preference optimisation (TRL's
	// CPOTrainer, which also runs SimPO with loss_type simpo): chosen and
	// rejected in one forward, no reference model.
	ObjectiveCPO Objective = "cpo"
	// ObjectiveGRPO is online RL as TRL's GRPOTrainer runs it (Unsloth's
	// GRPO is that trainer): each step generates completions with the
	// policy (Rollout), then trains on prompt + completion with the loss
	// on the completion's tokens only (logits_to_keep), keeping a
	// reference model when the KL coefficient beta is not 0.
	ObjectiveGRPO Objective = "grpo"
)

// RolloutEngine is what generates a GRPO step's completions.
type RolloutEngine string

// Rollout engines.
const (
	// RolloutHF is the policy's own model.generate (TRL's use_vllm=False,
	// the default): a KV cache for the generation batch, while the
	// training step's activations are not alive.
	RolloutHF RolloutEngine = "hf"
	// RolloutVLLMColocate is vLLM in the training process
	// (vllm_mode="colocate", Unsloth's fast_inference): it takes its
	// gpu_memory_utilization share of the device at start-up and keeps
	// it through the training step unless sleep mode releases it.
	RolloutVLLMColocate RolloutEngine = "vllm-colocate"
	// RolloutVLLMServer is a separate vLLM server (trl vllm-serve) on
	// other devices: nothing on the training devices.
	RolloutVLLMServer RolloutEngine = "vllm-server"
)

// DefaultRolloutShare is TRL's vllm_gpu_memory_utilization default for a
// colocated vLLM.
const DefaultRolloutShare = 0.3

// Paired reports an objective that scores a chosen and a rejected
// completion per example: twice the sequences per step.
func (o Objective) Paired() bool {
	return o == ObjectiveDPO || o == ObjectiveORPO || o == ObjectiveSimPO || o == ObjectiveCPO
}

// Reference reports an objective that always needs a frozen reference
// model (GRPO needs one only with a KL term: Plan.KLReference).
func (o Objective) Reference() bool { return o == ObjectiveDPO || o == ObjectiveKTO }

// Accepted values, in the order help texts show them.
var (
	Modes       = []Mode{Inference, Training, LoRA, QLoRA}
	Optimizers  = []Optimizer{AdamW, AdamWFused, AdamW8bit, PagedAdamW, PagedAdamW8bit, SGD, Adafactor, Lion, Muon, GaLore, GaLore8bit, GaLoreLayerwise, GaLore8bitLayerwise, LOMO, AdaLomo, BAdam}
	Recomputes  = []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull, RecomputeOffload}
	Attentions  = []Attention{AttentionAuto, AttentionEager, AttentionSDPA, AttentionFlash}
	Shardings   = []Sharding{ShardNone, ShardZeRO1, ShardZeRO2, ShardZeRO3, ShardTP}
	Offloads    = []Offload{OffloadNone, OffloadCPU}
	Conventions = []Convention{Devctl, EleutherAI, Accelerate, DeepSpeed}
	Objectives  = []Objective{ObjectiveSFT, ObjectiveDPO, ObjectiveKTO, ObjectiveORPO, ObjectiveSimPO, ObjectiveCPO, ObjectiveGRPO}
	Rollouts    = []RolloutEngine{RolloutHF, RolloutVLLMColocate, RolloutVLLMServer}
)

// attentionAliases are the names frameworks give the kernels
// (attn_implementation values, flag spellings).
var attentionAliases = map[string]Attention{
	"flash2": AttentionFlash, "flash3": AttentionFlash, "fa2": AttentionFlash, "fa3": AttentionFlash,
	"flash_attention_2": AttentionFlash, "flash_attention_3": AttentionFlash, "flash-attn": AttentionFlash,
	"flash_attn": AttentionFlash, "flash-attention": AttentionFlash,
	"mem_efficient": AttentionSDPA, "efficient": AttentionSDPA, "xformers": AttentionSDPA, "flex": AttentionSDPA,
	"flex_attention": AttentionSDPA, "fused": AttentionSDPA,
}

// ParseAttention reads an attention implementation or one of the names
// frameworks give it (flash_attention_2, fa2, xformers, flex, ...).
func ParseAttention(s string) (Attention, bool) {
	if a, ok := Parse(s, Attentions); ok {
		return a, true
	}
	a, ok := attentionAliases[strings.ToLower(strings.TrimSpace(s))]
	return a, ok
}

// Parse reads one of the accepted values, ignoring case and surrounding
// space; ok is false for anything else.
func Parse[T ~string](s string, accepted []T) (v T, ok bool) {
	v = T(strings.ToLower(strings.TrimSpace(s)))
	return v, slices.Contains(accepted, v)
}

// List spells the accepted values for a message: "a, b, c".
func List[T ~string](accepted []T) string {
	parts := make([]string, len(accepted))
	for i, a := range accepted {
		parts[i] = string(a)
	}
	return strings.Join(parts, ", ")
}

// check is Validate's test of one field: empty means "the default".
func check[T ~string](name string, v T, accepted []T) error {
	if v == "" || slices.Contains(accepted, v) {
		return nil
	}
	return fmt.Errorf("%s %q: want one of %s", name, v, List(accepted))
}
