package oomsim

import (
	"errors"
	"fmt"
	"math"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/units"
)

// GiB and MiB are binary units; every figure devctl compares is in bytes.
const (
	MiB = int64(units.MiB)
	GiB = int64(units.GiB)
)

// BytesPerElement is the storage of one value in a dense dtype.
func BytesPerElement(precision capability.Precision) float64 {
	switch precision {
	case capability.FP32:
		return 4
	case capability.FP16, capability.BF16:
		return 2
	case capability.Int8:
		return 1
	case capability.Int4:
		return 0.5
	}
	return 4
}

// computeBytes is the dtype activations and the KV cache use: fp32 plans
// compute in fp32, everything else (16-bit, and 8/4-bit weights, which
// bitsandbytes dequantises to a 16-bit compute dtype) in 16 bits.
func computeBytes(precision capability.Precision) float64 {
	if precision == capability.FP32 || precision == "" {
		return 4
	}
	return 2
}

// WeightBytes is the memory of n parameters stored at a precision, with the
// quantisation constants 8-bit and 4-bit formats carry:
//   - LLM.int8 (bitsandbytes): 1 byte per weight plus one fp32 scale per
//     output row (4/in_features bytes per weight);
//   - NF4/FP4 as transformers loads it by default (load_in_4bit=True,
//     bnb_4bit_use_double_quant=False): 4 bits and an fp32 absmax per block
//     of 64 = 0.5625 B/param. Double quantisation (QLoRA §3), which devctl
//     advises, stores the absmax in 8 bits and saves 0.047 B/param; the
//     estimate keeps the default so that a plain load_in_4bit fits too.
//
// Only nn.Linear weights are quantised; the rest (embeddings, norms, the LM
// head) stays 16-bit, which is why small models compress poorly.
func WeightBytes(m Model, n int64, precision capability.Precision) int64 {
	switch precision {
	case capability.FP32:
		return sat(4 * float64(n))
	case capability.FP16, capability.BF16:
		return sat(2 * float64(n))
	case capability.Int8, capability.Int4:
	default:
		return sat(4 * float64(n))
	}
	keep := unquantized(m, n)
	q := float64(n - keep)
	var qb float64
	if precision == capability.Int8 {
		in := 4096.0
		if m.Arch != nil && m.Arch.Hidden > 0 {
			in = float64(m.Arch.Hidden)
		}
		qb = q + 4*math.Ceil(q/in)
	} else {
		qb = math.Ceil(q/2) + 4*math.Ceil(q/64)
	}
	return sat(qb + 2*float64(keep))
}

func unquantized(m Model, n int64) int64 {
	keep := m.UnquantizedParams
	if keep == 0 && m.Arch != nil {
		keep = int64(m.Arch.Vocab)*int64(m.Arch.Hidden) + m.HeadParams
	}
	if keep > n {
		keep = n
	}
	if keep < 0 {
		keep = 0
	}
	return keep
}

// LoRAParams is the trainable adapter size: rank r on the four attention
// projections of every block (PEFT's usual q,k,v,o targets), r·(in+out)
// per matrix. Without a shape it is 0.5% of the model.
func LoRAParams(m Model, rank int) int64 {
	if rank <= 0 {
		rank = 16
	}
	a := m.Arch
	if a == nil || a.Hidden == 0 {
		return m.Params / 200
	}
	h, q, kv := int64(a.Hidden), int64(a.Heads*a.HeadDim), int64(a.KVHeads*a.HeadDim)
	if q == 0 {
		q = h
	}
	if kv == 0 {
		kv = q
	}
	perLayer := (h + q) + 2*(h+kv) + (q + h)
	return int64(rank) * perLayer * int64(a.Layers)
}

// optimizerBytesPerParam is the optimizer state per trainable parameter
// (EleutherAI "Transformer Math 101"): AdamW keeps fp32 momentum and
// variance (8), bitsandbytes 8-bit AdamW 2, SGD with momentum 4, Adafactor
// factored second moments plus momentum ≈ 4 (HF perf docs: "slightly more
// than 4 bytes"), Lion and Muon one momentum (4), LOMO none. GaLore is
// counted as AdamW: the published conventions predate it. Mixed precision
// adds an fp32 master copy (4).
func optimizerBytesPerParam(opt Optimizer, mixed bool) float64 {
	var b float64
	switch opt {
	case AdamW8bit:
		b = 2
	case SGD, Adafactor, Lion, Muon:
		b = 4
	case LOMO, AdaLomo:
		b = 0
	default:
		b = 8
	}
	if mixed {
		b += 4
	}
	return b
}

// KVCache is 2 × layers × kv_heads × head_dim × tokens × batch × bytes,
// in the compute dtype.
func KVCache(a *Arch, precision capability.Precision, batch, seq int) int64 {
	return kvCache(a, Plan{Precision: precision}, float64(batch), float64(seq))
}

// Estimate computes devctl's estimate of a plan on one device (peak.go):
// every term in bytes, the three counters, and the runtime. When the plan
// names a published convention (eleutherai, accelerate, deepspeed), that
// estimator's model-state figures are added as Published, beside the
// estimate: a convention reproduces a table, it never decides whether the
// plan fits. ErrNotApplicable means the plan cannot be estimated at all
// (full training of 8-bit weights).
func Estimate(p Plan) (Breakdown, error) {
	p = withDefaults(p)
	if err := p.Validate(); err != nil {
		return Breakdown{}, err
	}
	p, mtp := withMTP(p)
	b, err := realistic(p)
	if err != nil {
		return Breakdown{}, err
	}
	if mtp != "" {
		b.Notes = append(b.Notes, mtp)
	}
	b.Convention = Devctl
	b.ModelStatesBytes = add(b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes)
	if p.Convention != Devctl {
		pub, err := published(p)
		switch {
		case err == nil:
			b.Published = &pub
		case errors.Is(err, ErrNotApplicable):
			b.Notes = append(b.Notes, fmt.Sprintf("%s: %v", p.Convention, err))
		default:
			return Breakdown{}, err
		}
	}
	if (p.Backend == backend.CPU || p.OnCPU) && b.HostBytes > 0 {
		// On the CPU, "offloaded to the host" is the same memory: it adds
		// to the total instead of being checked against a second budget.
		b.TotalBytes = add(b.TotalBytes, b.HostBytes)
		b.HostInTotal = true
		b.Notes = append(b.Notes, fmt.Sprintf("the plan runs on the CPU: the %s offloaded to host memory share the same RAM and are in the total", fmtGiB(b.HostBytes)))
	}
	return b, nil
}

// published is a convention's own model-state figures for the plan.
func published(p Plan) (Published, error) {
	var b Breakdown
	var err error
	switch p.Convention {
	case Accelerate:
		b, err = accelerate(p)
	case DeepSpeed:
		b, err = deepspeed(p)
	default:
		b, err = eleutherai(p)
	}
	if err != nil {
		return Published{}, err
	}
	return Published{Convention: p.Convention, WeightsBytes: b.WeightsBytes, GradientsBytes: b.GradientsBytes,
		OptimizerBytes: b.OptimizerBytes, ModelStatesBytes: add(b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes),
		HostBytes: b.HostBytes, LargestLayerBytes: b.LargestLayerBytes, Notes: b.Notes}, nil
}

func withDefaults(p Plan) Plan {
	if p.Mode == "" {
		p.Mode = Inference
	}
	if p.Precision == "" {
		p.Precision = capability.FP32
	}
	if p.Mode == QLoRA {
		p.Precision = capability.Int4
	}
	if p.Stack == "" {
		p.Stack = StackAuto
	}
	// The stack's defaults fill what the plan leaves open, so the plan
	// shown says what was assumed.
	prof := ProfileOf(p.Stack)
	if p.Quant == "" && (p.Precision == capability.Int8 || p.Precision == capability.Int4) {
		p.Quant = prof.QuantFormat
	}
	if p.Attention == "" || p.Attention == AttentionAuto {
		p.Attention = prof.Attention
		if transformersEager(p) || ollamaEager(p) || llamaCppEager(p) {
			p.Attention = AttentionEager
		}
	}
	if p.Mode == Inference {
		// Serving has no optimizer, adapters or backward pass: a plan
		// must not carry their defaults into the output.
		p.Optimizer, p.LoRARank, p.Recompute, p.Loss, p.LoRATargets, p.LoRALayers, p.Objective = "", 0, "", "", "", 0, ""
		p.RecomputeLayers = 0
		p.OptimizerInBackward = false
		if !inferenceAutocast(p) {
			p.Mixed = "" // only a forward under torch.autocast has a regime
		}
		if p.Prealloc <= 0 && prof.Preallocates > 0 {
			_, p.Prealloc, _ = servingDefaults(p)
		}
	} else {
		if p.Objective != ObjectiveGRPO {
			p.PromptLen = 0 // supervised training has no prompt to prefill
		}
		if p.Optimizer == "" {
			p.Optimizer = AdamW
			if fusedByDefault(p) {
				p.Optimizer = AdamWFused
			}
		}
		pinnedRecompute, pinnedLoss := p.Recompute != "", p.Loss != ""
		if p.Recompute == "" {
			p.Recompute = prof.Recompute
			// 8-bit LoRA goes through the same prepare_model_for_kbit_training.
			kbit := p.Mode == QLoRA || (p.Mode == LoRA && (p.Precision == capability.Int8 || p.Precision == capability.Int4))
			if kbit && prof.QLoRARecompute != "" {
				p.Recompute = prof.QLoRARecompute
			}
			if ShardedRecipe(p) {
				p.Recompute = RecomputeFull
			}
		}
		if p.Loss == "" {
			p.Loss = prof.Loss
		}
		p = trlRelease(p, pinnedRecompute, pinnedLoss)
		if p.Objective == ObjectiveGRPO && !pinnedLoss && p.Stack != StackUnsloth {
			// GRPOTrainer computes its own loss from the completion's
			// logits (use_liger_loss off by default), whatever the
			// stack's supervised loss; Unsloth's GRPO keeps its own
			// chunked kernel.
			p.Loss = LossFull
		}
		switch {
		case loraFP32Base(p):
			// A LoRA base loaded in fp32 under autocast: kept as asked.
		case p.Mode != Training:
			p.Mixed = ""
		case p.Mixed == "" && p.Precision == capability.FP32:
			// Decided once the precision is: fp32 training has no regime.
		case p.Mixed == "" && (prof.PureHalf && !(trainerZeRO(p) && !fsdpKeepsLoad(p)) || loadsCheckpointDtype(p) || p.Optimizer.NoMasterCopy()):
			// A PureHalf stack's 16-bit load stays 16-bit except under
			// DeepSpeed, whose optimizer keeps fp32 master partitions, and
			// accelerate's FSDP, which upcasts it (fsdpKeepsLoad).
			// LOMO and AdaLomo update the 16-bit weights in place inside
			// the backward, BAdam all but its active block: there is no
			// fp32 master copy (LOMO, Table 1: LLaMA-7B at 12.55 GB of
			// fp16 parameters and no optimizer).
			p.Mixed = MixedPure
		case p.Mixed == "":
			p.Mixed = MixedAMP
		}
		if p.Mode != Training {
			if p.LoRATargets == "" {
				p.LoRATargets = prof.LoRATargets
				if torchtuneQVOnly(p) {
					p.LoRATargets = LoRAQV
				}
				if msSwiftAttentionOnly(p) {
					p.LoRATargets = LoRAQKVO
				}
			}
			if p.LoRALayers <= 0 {
				p.LoRALayers = prof.LoRALayers
			}
		} else {
			p.LoRATargets, p.LoRALayers = "", 0
		}
	}
	if p.Sharding == "" {
		p.Sharding = ShardNone
	}
	if p.Offload == "" {
		p.Offload = "none"
	}
	if p.Convention == "" {
		p.Convention = Devctl
	}
	if p.BatchSize <= 0 {
		p.BatchSize = 1
	}
	if p.SeqLen <= 0 {
		p.SeqLen = 2048
	}
	if p.Devices <= 0 {
		p.Devices = 1
	}
	if p.LoRARank <= 0 && (p.Mode == LoRA || p.Mode == QLoRA) {
		p.LoRARank = 16
	}
	return p
}

// WithDefaults returns the plan with every empty field set to the value
// Estimate uses, so callers can show what was assumed.
func WithDefaults(p Plan) Plan { return withDefaults(p) }

func eleutherai(p Plan) (Breakdown, error) {
	m := p.Model
	var b Breakdown
	n := float64(p.devices())
	mixed := p.Precision != capability.FP32
	switch p.Mode {
	case Inference:
		b.WeightsBytes = WeightBytes(m, m.Params, p.Precision)
		if p.Sharding == ShardZeRO3 && n > 1 {
			b.WeightsBytes = sat(float64(b.WeightsBytes) / n)
		}
		if p.Offload == "cpu" {
			b.HostBytes = b.WeightsBytes
			b.WeightsBytes = largestLayerBytes(m, p.Precision)
			b.Notes = append(b.Notes, "weights offloaded to the host; one layer at a time on the device (accelerate device_map offload)")
		}
		return b, nil
	case Training:
		if p.Precision == capability.Int8 || p.Precision == capability.Int4 {
			return b, fmt.Errorf("%w: full training needs fp32, fp16 or bf16 weights; use --mode lora or qlora for 8-bit/4-bit", ErrNotApplicable)
		}
		wb := BytesPerElement(p.Precision)
		P := float64(m.Params)
		w, g, o := P*wb, P*wb, P*optimizerBytesPerParam(p.Optimizer, mixed)
		switch p.Sharding {
		case ShardZeRO1:
			o = o / n
		case ShardZeRO2:
			g, o = g/n, o/n
		case ShardZeRO3:
			w, g, o = w/n, g/n, o/n
		}
		if p.Offload == "cpu" {
			b.HostBytes = sat(o)
			o = 0
			if p.OffloadParams && p.Sharding == ShardZeRO3 {
				b.HostBytes = add(b.HostBytes, sat(w))
				w = float64(largestLayerBytes(m, p.Precision))
			}
		}
		b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes = sat(w), sat(g), sat(o)
		return b, nil
	default: // LoRA, QLoRA
		base := WeightBytes(m, m.Params, p.Precision)
		t := float64(LoRAParams(m, p.LoRARank))
		// Adapters train in fp32: weight 4 + gradient 4 + optimizer state.
		b.WeightsBytes = add(base, sat(4*t))
		b.GradientsBytes = sat(4 * t)
		b.OptimizerBytes = sat(t * optimizerBytesPerParam(p.Optimizer, false))
		if p.Sharding == ShardZeRO3 && n > 1 {
			b.WeightsBytes = sat(float64(b.WeightsBytes) / n)
		}
		if p.Offload == "cpu" {
			b.HostBytes, b.OptimizerBytes = b.OptimizerBytes, 0
		}
		b.Notes = append(b.Notes, fmt.Sprintf("%s: %d trainable adapter parameters (rank %d on q,k,v,o), fp32 with %s state", p.Mode, int64(t), p.LoRARank, p.Optimizer))
		return b, nil
	}
}

// largestLayerBytes is one block's weights, what offloading keeps resident.
func largestLayerBytes(m Model, precision capability.Precision) int64 {
	ll := m.LargestLayerParams
	if ll == 0 {
		ll = LargestLayer(m)
	}
	return sat(float64(ll) * BytesPerElement(precision))
}

// LargestLayer estimates DeepSpeed's "largest layer": the biggest single
// module by its own parameters, usually the embedding or an MLP matrix.
func LargestLayer(m Model) int64 {
	if m.LargestLayerParams > 0 {
		return m.LargestLayerParams
	}
	a := m.Arch
	if a == nil || a.Hidden == 0 {
		return m.Params / 50
	}
	h := int64(a.Hidden)
	ll := int64(a.Vocab) * h
	if x := h * int64(a.FFN); x > ll {
		ll = x
	}
	if x := h * int64(a.Heads*a.HeadDim); x > ll {
		ll = x
	}
	return ll
}

// accelerate reproduces `accelerate estimate-memory`: the base model
// (AutoModel: no untied LM head) counted in fp32 with its buffers, divided
// by 2 for float16/bfloat16, 4 for int8, 8 for int4; "Training using Adam"
// is the per-stage peak (4× fp32 size for float32, 2× for 16-bit, N/A for
// int8/int4), not a sum.
func accelerate(p Plan) (Breakdown, error) {
	m := p.Model
	var b Breakdown
	base := m.Params - m.HeadParams
	fp32 := 4*base + m.BufferBytes
	div := int64(1)
	switch p.Precision {
	case capability.FP16, capability.BF16:
		div = 2
	case capability.Int8:
		div = 4
	case capability.Int4:
		div = 8
	}
	size := fp32 / div
	if m.LargestLayerParams > 0 {
		b.LargestLayerBytes = 4 * m.LargestLayerParams / div
	}
	switch p.Mode {
	case Inference:
		b.WeightsBytes = size
		b.Notes = append(b.Notes, "accelerate counts the base model (no untied LM head) and its buffers; it adds no activations (its docs suggest up to 20% more for inference)")
	case Training:
		switch p.Precision {
		case capability.FP32:
			b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes = size, size, 2*size
		case capability.FP16, capability.BF16:
			b.WeightsBytes, b.OptimizerBytes = size, 2*fp32-size
			b.Notes = append(b.Notes, "accelerate prints the per-stage peak (2× the fp32 size for mixed precision); everything above the 16-bit weights is shown as optimizer")
		default:
			return b, fmt.Errorf("%w: accelerate prints N/A for training at %s", ErrNotApplicable, p.Precision)
		}
	default:
		return b, fmt.Errorf("%w: accelerate has no LoRA/QLoRA figure; use --convention eleutherai", ErrNotApplicable)
	}
	return b, nil
}

// deepspeed reproduces DeepSpeed's estimate_zero2_model_states_mem_needs
// and estimate_zero3_model_states_mem_needs (one node, G = devices,
// additional_buffer_factor 1.5, zero_init=1). ZeRO-2 without offload uses
// the current 2P + 18P/G (PR #5099, June 2024); ZeRO2Legacy gives the older
// 4P + 16P/G that the DeepSpeed docs example still prints.
func deepspeed(p Plan) (Breakdown, error) {
	var b Breakdown
	if p.Mode != Training {
		return b, fmt.Errorf("%w: DeepSpeed's ZeRO estimators cover full training (--mode training)", ErrNotApplicable)
	}
	P, G := float64(p.Model.Params), float64(p.devices())
	LL := float64(LargestLayer(p.Model))
	const abf = 1.5
	stage := p.ZeROStage
	if stage == 0 {
		stage = 2
		if p.Sharding == ShardZeRO3 {
			stage = 3
		}
	}
	off := p.Offload == "cpu"
	if stage == 3 {
		switch {
		case off && p.OffloadParams:
			b.WeightsBytes, b.GradientsBytes = sat(2*LL), sat(2*LL)
			b.HostBytes = sat(18 * P * abf)
		case off:
			b.WeightsBytes, b.GradientsBytes = sat(2*LL+2*P/G), sat(2*LL)
			b.HostBytes = sat(16 * P * abf)
		default:
			b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes = sat(2*LL+2*P/G), sat(2*LL+4*P/G), sat(12*P/G)
			b.HostBytes = sat(4 * LL * G * abf)
		}
		b.Notes = append(b.Notes, "DeepSpeed ZeRO-3 estimator: model states only (fp16 params and grads of the gathered largest layer, sharded fp32 states)")
	} else {
		switch {
		case off:
			b.WeightsBytes = sat(2 * P)
			b.HostBytes = sat(P * math.Max(4*G, 16) * abf)
		case p.ZeRO2Legacy:
			b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes = sat(2*P), sat(2*P+4*P/G), sat(12*P/G)
			b.HostBytes = sat(4 * P * G * abf)
		default:
			b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes = sat(2*P), sat(6*P/G), sat(12*P/G)
			b.HostBytes = sat(4 * P * G * abf)
		}
		b.Notes = append(b.Notes, "DeepSpeed ZeRO-2 estimator: GPU = 2P + 18P/G since PR #5099 (June 2024; 4P + 16P/G before, as the docs example still prints)")
	}
	if p.Optimizer != AdamW && p.Optimizer != AdamWFused {
		b.Notes = append(b.Notes, "DeepSpeed's estimators assume Adam; the optimizer choice is not reflected")
	}
	return b, nil
}

// ShardedRecipe reports whether a plan is full training sharded over
// several devices (ZeRO-3, FSDP's FULL_SHARD): how models too big for one
// device are trained, by recipes that checkpoint activations unless told
// not to:
// LLaMA-Factory (disable_gradient_checkpointing false), axolotl's and
// torchtune's distributed configs (gradient_checkpointing: true,
// enable_activation_checkpointing: True), DeepSpeed-Chat's and FastChat's
// training scripts (--gradient_checkpointing). With the recompute unstated,
// such a plan takes full checkpointing; --recompute none plans without it,
// and the band shows what it moves.
func ShardedRecipe(p Plan) bool {
	return p.Mode == Training && p.Sharding == ShardZeRO3 && p.Devices > 1
}
