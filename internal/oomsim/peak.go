package oomsim

import (
	"fmt"
	"math"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
)

// This file is devctl's own estimate: what a run on today's stacks really
// allocates on one device, term by term, in the order PyTorch allocates it.
// Each term names its source in docs/recommend.md ("The memory model"); the
// constants were set from the training split of testdata/memory (the
// holdout was never looked at to change them).
//
// Three figures come out, one per counter people read:
//
//	PeakAllocatedBytes  torch.cuda.max_memory_allocated: the tensors alive at the peak
//	ReservedBytes       max_memory_reserved: that plus the caching allocator's rounding and fragmentation
//	TotalBytes          what the device must hold (nvidia-smi): reserved plus the runtime (CUDA context,
//	                    NCCL), the figure `fits` compares with the device's usable memory

// MixedPrecision says how training holds weights and optimizer state when
// it computes in 16 bits.
type MixedPrecision string

// Mixed-precision regimes.
const (
	// MixedAMP is autocast over fp32 weights: fp32 master weights,
	// gradients and Adam states, 16-bit copies of the weights for the
	// forward (HF Trainer bf16=True, Lightning bf16-mixed, torch.amp).
	MixedAMP MixedPrecision = "amp"
	// MixedPure keeps weights, gradients and optimizer state in the 16-bit
	// type (litgpt bf16-true, torchtune dtype: bf16).
	MixedPure MixedPrecision = "pure"
)

// MixedPrecisions lists the regimes.
var MixedPrecisions = []MixedPrecision{MixedAMP, MixedPure}

// QuantFormat is how 8-bit or 4-bit weights are stored.
type QuantFormat string

// Weight formats.
const (
	QuantBnB  QuantFormat = "bnb"  // bitsandbytes LLM.int8 / NF4 (transformers load_in_8bit/4bit)
	QuantGPTQ QuantFormat = "gptq" // GPTQ/AWQ/compressed-tensors w4a16, group 128
	QuantFP8  QuantFormat = "fp8"  // fp8 weights with per-channel scales
	QuantGGUF QuantFormat = "gguf" // llama.cpp k-quants (Q4_K_M: 4.85 bits per weight)
	QuantMLX  QuantFormat = "mlx"  // mlx affine quantisation, group 64, fp16 scale and bias
)

// runtime is the memory a process holds outside the caching allocator.
type runtime struct {
	context int64 // CUDA context and the modules lazy loading brings in
	comm    int64 // NCCL communicators and buffers, once per process with peers
	source  string
}

// eagerCUDAContext is the context when every CUDA module loads at start-up
// (no lazy loading): 1,343 MB measured on a V100 (transformers' docs,
// model_memory_anatomy.md).
const (
	eagerCUDAContext = 1343 * MiB
	eagerCUDASource  = "CUDA context without lazy module loading (torch < 1.13 or CUDA < 11.7): 1,343 MB measured on a V100 (transformers docs, model_memory_anatomy.md)"
)

// runtimes are per backend. The CUDA figure is PyTorch's context with lazy
// module loading (the default since PyTorch 1.13 and CUDA 11.7): 287 MB
// measured in pytorch/pytorch#86509, a few hundred MB more once cuBLAS,
// cuDNN and the attention kernels a model uses are loaded; NCCL adds its
// communicators and channel buffers on every rank.
var runtimes = map[backend.Backend]runtime{
	backend.CUDA:   {460 * MiB, 256 * MiB, "CUDA context with lazy loading plus the cuBLAS/cuDNN/attention modules a model loads (pytorch/pytorch#86509: 287 MB for the bare context); NCCL communicators on multi-GPU runs"},
	backend.ROCm:   {460 * MiB, 256 * MiB, "taken as CUDA's: vLLM starts on 4 × MI100 (32 GiB) at gpu_memory_utilization 0.98 (btbtyler09/mi100-llm-testing, testdata/memory), and vLLM requires the free memory after the HIP context and RCCL to hold 0.98 of the total (gpu_worker.py init_device), so those take at most 0.64 GiB there; no direct ROCm measurement found (before, CUDA's eager 1,343 MB was assumed)"},
	backend.XPU:    {1 * GiB, 256 * MiB, "assumed 1 GiB (Level Zero context + PyTorch kernels); not measured"},
	backend.Neuron: {1 * GiB, 0, "assumed 1 GiB (Neuron runtime scratch); not measured"},
	backend.XLA:    {0, 0, "none added: the TPU HBM figure is what the XLA runtime reports as usable"},
	backend.MPS:    {0, 0, "none added: the budget is Metal's recommendedMaxWorkingSetSize, which already leaves room for the system"},
	backend.CPU:    {512 * MiB, 0, "Python interpreter and the framework's import (0.3-0.5 GiB RSS)"},
}

// bareCUDAContext is a CUDA process's context without PyTorch's modules
// (pytorch/pytorch#86509: 287 MB with lazy loading), what a ggml server
// (llama.cpp, Ollama's runner) holds beside its buffers: the Sergey-Kit
// benchmark's NVML peaks of Qwen3-0.6B in F16 (testdata/memory) sit 0.03
// to 0.2 GiB above the runner's own buffer breakdown.
const (
	bareCUDAContext = 287 * 1000 * 1000
	bareCUDASource  = "CUDA context of a process without PyTorch's modules (pytorch/pytorch#86509: 287 MB with lazy loading)"
)

// partialLayers moves what llama.cpp keeps in host memory out of the
// device's share: the blocks a partial -ngl (Ollama's num_gpu) leaves on
// the host, and the routed experts --n-cpu-moe (--cpu-moe) keeps there.
// The layer slots are the blocks and the output layer; the last n of them
// go to the device (llama-model.cpp: i_gpu_start = n_layer + 1 -
// n_gpu_layers, the output layer at slot n_layer), so n slots are n-1
// blocks and the output layer. A block on the host keeps its KV cache
// (and a hybrid's recurrent state) there too. --n-cpu-moe N keeps the
// expert weights of the first N blocks on the host (llama.cpp's
// common/arg.cpp: an override of their ffn_*_exps tensors to the CPU),
// their attention and KV cache on the device. The input embedding is the
// host's either way, a vision projector (mmproj) the device's; the compute
// buffer stays whole.
func partialLayers(m Model, a *Arch, p Plan, b *Breakdown) {
	if a == nil || a.Layers <= 0 || !ggmlStack(p.Stack) {
		return
	}
	L := a.Layers
	n := p.GPULayers
	if n <= 0 || n > L {
		n = L + 1 // every slot
	}
	cpuMoE := min(max(p.CPUMoELayers, 0), L)
	experts := m.ExpertParams()
	if n > L && (cpuMoE == 0 || experts <= 0) {
		return
	}
	vision := 2 * float64(m.VisionParams)
	text := max(float64(b.WeightsBytes)-vision, 0)
	params := float64(m.Params-m.VisionParams) - untiedInputEmbedding(m)
	if params <= 0 {
		return
	}
	// The shares of the stored bytes: by parameters, or by each part's
	// width where the experts are stored apart (gpt-oss's MXFP4).
	headW, expertW, total := float64(a.Vocab)*float64(a.Hidden), experts, params
	if restBits, apart := ggmlMXFP4Experts(m, p); apart {
		headW *= restBits
		expertW *= mxfp4Bits
		total = (params-experts)*restBits + expertW
	}
	head := text * min(headW/total, 1)
	ex := text * min(expertW/total, 1) / float64(L)    // one block's experts
	ne := max(text-head-ex*float64(L), 0) / float64(L) // one block's rest
	first := L + 1 - n                                 // the first block on the device
	onDevice := float64(L - first)
	expertsOnDevice := float64(L - max(first, cpuMoE)) // device blocks past the first cpuMoE
	device := head + onDevice*ne + expertsOnDevice*ex + vision
	b.HostBytes = add(b.HostBytes, sat(float64(b.WeightsBytes)-device))
	b.WeightsBytes = sat(device)
	b.KVCacheBytes = sat(float64(b.KVCacheBytes) * onDevice / float64(L))
	if n <= L {
		b.Notes = append(b.Notes, fmt.Sprintf("%d of %d layer slots on the device (%d blocks and the output layer): the other blocks and their KV cache run from host memory", n, L+1, n-1))
	}
	if cpuMoE > 0 && experts > 0 {
		b.Notes = append(b.Notes, fmt.Sprintf("the routed experts of the first %d of %d blocks in host memory (--n-cpu-moe %d)", cpuMoE, L, cpuMoE))
	}
}

// ggmlStack reports the stacks that run on ggml (llama.cpp, Ollama's
// runner), which allocate their weights, KV cache and compute buffer at
// their sizes and load no PyTorch modules.
func ggmlStack(st Stack) bool { return st == StackLlamaCpp || st == StackOllama }

// allocatorSlack is the caching allocator's share above the tensors alive
// at the peak, as a share of the tensors that come and go (activations,
// logits, the KV cache, buffers): weights, gradients and optimizer states
// are allocated once, at their exact size, and never fragment. The rest
// leaves split segments and freed blocks too small for the next request,
// more in a training step, which frees activations while gradients grow,
// than in generation. Fitted on the training split of testdata/memory
// (max_reserved against max_allocated; docs/recommend.md).
const (
	allocatorSlackTraining  = 0.20
	allocatorSlackInference = 0.10
)

// settings are a plan's choices with every default resolved.
type settings struct {
	p       Plan
	prof    Profile
	cb      float64 // bytes per activation value (compute dtype)
	streamB float64 // bytes per value the blocks keep for the backward (cb, or fp32)
	pure    bool    // training without an fp32 master copy
	trains  bool
	n       float64 // devices each block's activations (serving: the weights and KV cache too) are split over
	dp      float64 // devices the gradients and optimizer states are split over (model parallelism × ZeRO)
	wShard  float64 // devices the trained weights are split over
	// wFrac and sFrac are one device's share of the weights and of the
	// gradients and optimizer states: 1/wShard and 1/dp, unless expert
	// parallelism splits a mixture of experts' routed experts otherwise.
	// gFrac is the gradients' share: sFrac, or wFrac under ZeRO-1, which
	// shards the optimizer states only; gShard is the devices the
	// gradients are split over (dp, or wShard under ZeRO-1).
	wFrac, sFrac, gFrac float64
	gShard              float64
	replicas            float64 // data-parallel replicas: the devices over tensor × pipeline degrees
	seq                 float64 // the tokens of each sequence one device holds: SeqLen over the context-parallel degree
	attn                Attention
	sp                  bool // tensor parallelism splits the norms' and linear layers' inputs by tokens
	loss                Loss
	targets             LoRATargets
	adapterB            float64
}

func resolve(p Plan) settings {
	s := settings{p: p, prof: ProfileOf(p.Stack), trains: p.Mode.Trains(), n: 1, dp: 1}
	s.cb = computeBytes(p.Precision)
	if p.Mode == QLoRA || p.Precision == capability.Int8 || p.Precision == capability.Int4 || p.Precision == capability.FP8 {
		s.cb = 2
	}
	s.streamB = s.cb
	if kbitUpcast(p) && s.trains {
		// The embedding is fp32 after prepare_model_for_kbit_training, so
		// the residual stream is too, and bitsandbytes' Linear4bit returns
		// its output in its input's dtype: what the blocks keep for the
		// backward is fp32, whatever the compute dtype of the matmuls.
		s.streamB = 4
	}
	s.pure = p.Mixed == MixedPure && p.Precision != capability.FP32
	s.attn, s.loss, s.targets = p.Attention, p.Loss, p.LoRATargets
	// Sequence parallelism goes with tensor parallelism unless the plan
	// says otherwise: Megatron's advice whenever TP > 1, NeMo's and
	// Megatron-Bridge's recipes, torchtitan's TP plan (norms sharded by
	// SequenceParallel), nanotron's REDUCE_SCATTER mode; Megatron-LM
	// without --sequence-parallel and Megatron-DeepSpeed's older fork run
	// without it (--sequence-parallel off).
	s.sp = p.SequenceParallel != SwitchOff
	s.adapterB = s.prof.AdapterBytes
	if s.adapterB == 0 {
		s.adapterB = 4
	}
	// Model parallelism (tensor × pipeline) splits the states over mp
	// devices; the data-parallel replicas over the rest share them out
	// further by ZeRO's stage: the gradients and optimizer states at
	// ZeRO-2 (Megatron's distributed optimizer), the weights too at
	// ZeRO-3/FSDP. Tensor parallelism also splits each block's
	// activations, its KV cache and the logits (Korthikanti et al. 2022);
	// pipelining does not (below).
	d := float64(p.devices())
	t, pp := float64(p.TensorDegree()), float64(p.PipelineDegree())
	mp := t * pp // the model-parallel degree
	s.replicas = max(d/mp, 1)
	s.n, s.dp, s.wShard = t, mp, mp
	switch {
	case !s.trains && (p.Sharding == ShardZeRO3 || p.Sharding == ShardTP) && p.TensorParallel == 0 && p.PipelineStages <= 1:
		s.n = d // serving split over devices (device_map / tensor parallel)
	case !s.trains:
		s.n = mp // serving: each stage holds its blocks' weights and KV cache
	case p.Sharding == ShardZeRO3:
		s.dp, s.wShard = d, d
	case p.Sharding == ShardZeRO2, p.Sharding == ShardZeRO1:
		s.dp = d
	}
	s.wFrac, s.sFrac = 1/s.wShard, 1/s.dp
	// Context parallelism splits every sequence by tokens: each device
	// runs its share through every block (ring attention passes the keys
	// and values round; Ulysses swaps tokens for heads around attention),
	// so what the blocks keep and the logits are per local token. Its
	// devices stay data-parallel replicas for the model states above.
	s.seq = math.Ceil(float64(p.SeqLen) / float64(p.ContextDegree()))
	if X, P := p.Model.ExpertParams(), float64(p.Model.Params); p.ExpertParallel > 1 && X > 0 && s.trains {
		// Expert parallelism: each stage's routed experts over ep devices
		// (with expert tensor parallelism when ep × tp fits the stage's
		// devices, as Megatron-Core forms its expert groups), and ZeRO
		// over the expert-data-parallel replicas left; the rest of the
		// model as above.
		es := pp * min(float64(p.ExpertParallel)*t, d/pp)
		eW, eS := es, es
		switch p.Sharding {
		case ShardZeRO3:
			eW, eS = d, d
		case ShardZeRO2, ShardZeRO1:
			eS = d
		}
		s.wFrac = ((P-X)/s.wShard + X/eW) / P
		s.sFrac = ((P-X)/s.dp + X/eS) / P
	}
	s.gFrac, s.gShard = s.sFrac, s.dp
	if zeroOne(s) {
		s.gFrac, s.gShard = s.wFrac, s.wShard
	}
	return s
}

// realistic is devctl's estimate of a plan (see the top of this file).
func realistic(p Plan) (Breakdown, error) {
	s := resolve(p)
	if s.prof.Preallocates > 0 && p.Mode == Inference && p.DeviceBytes > 0 && !p.OnCPU && p.Backend != backend.CPU {
		// On the CPU vLLM sizes its KV cache by VLLM_CPU_KVCACHE_SPACE,
		// not a share of memory: it is planned as it allocates.
		return servingEngine(s)
	}
	var b Breakdown
	m, a := p.Model, p.Model.Arch
	mb, seq := float64(p.micro()), float64(p.SeqLen)
	if s.trains {
		seq = s.seq
	}
	if p.Mode.Trains() && p.Objective.Paired() {
		mb *= 2 // the chosen and the rejected completion of each example
	}
	if p.Mode.Trains() && p.Objective == ObjectiveGRPO && p.Generations > 1 {
		mb *= float64(p.Generations) // each prompt's completions (TRL before 0.15)
	}
	tokens := mb * seq
	P := float64(m.Params)

	switch p.Mode {
	case Inference:
		b.WeightsBytes = sat(float64(storedWeights(m, p)) / s.n)
		if inferenceAutocast(p) {
			b.WeightsBytes = sat(autocastWeights(m) / s.n)
			b.Notes = append(b.Notes, "weights in fp32 plus the 16-bit copy torch.autocast caches of each one a matmul reads, held until the autocast region ends")
		}
		if p.Offload == OffloadCPU {
			b.HostBytes = b.WeightsBytes
			b.WeightsBytes = largestLayerBytes(m, p.Precision)
			b.Notes = append(b.Notes, "weights offloaded to the host; one block at a time on the device (accelerate device_map offload)")
		}
		b.KVCacheBytes = sat(float64(kvCache(a, p, mb, seq)) / s.n)
		if note := stateNote(a, p); note != "" {
			b.Notes = append(b.Notes, note)
		}
		partialLayers(m, a, p, &b)
		prompt := seq
		if p.PromptLen > 0 && float64(p.PromptLen) < seq {
			prompt = float64(p.PromptLen) // the rest is generated a token at a time
		}
		prefill := prompt
		if c := prefillChunk(p); c > 0 {
			prefill = min(prompt, float64(c))
		}
		actN := s.n
		if layerSplit(s) {
			actN = 1
		}
		if ggmlStack(p.Stack) && mb > 1 {
			// llama.cpp's slots share one KV cache of every slot's cells
			// and one compute graph, reserved for a single ubatch of
			// tokens against the whole cache: slots do not multiply it.
			b.ActivationsBytes = sat(prefillWorkingSet(s, a, 1, min(mb*prompt, prefill), mb*seq) / actN)
		} else {
			b.ActivationsBytes = sat(prefillWorkingSet(s, a, mb, prefill, seq) / actN)
		}
		if scores, why := unfusedPrefillScores(s, a, mb, prefill, prompt); scores > 0 {
			b.ActivationsBytes = add(b.ActivationsBytes, sat(scores/s.n))
			b.Notes = append(b.Notes, fmt.Sprintf("mlx runs the prompt's attention unfused (%s): a %g-token chunk's scores against the whole prompt, %s",
				why, prefill, fmtGiB(sat(scores))))
		}
		b.LogitsBytes = sat(inferenceLogits(s, a, mb))
		if c := float64(prefillChunk(p)); a != nil && s.prof.ChunkLogits && c > 0 {
			last := math.Mod(prompt-1, c) + 1 // what the prefill steps leave
			b.LogitsBytes = max(b.LogitsBytes, sat(mb*last*float64(a.Vocab)*s.cb))
		}
		if a != nil && legacyGenerateLogits(p) {
			// Every prompt position's logits, 16-bit then their fp32 copy.
			b.LogitsBytes = sat(mb * prompt * float64(a.Vocab) * (s.cb + fp32CopyBytes(s.cb)))
		}
		b.BuffersBytes = dequantBuffer(s, a)
		if scratch, note := exllamaScratch(s, a); scratch > 0 {
			b.BuffersBytes = add(b.BuffersBytes, scratch)
			b.Notes = append(b.Notes, note)
		}
		if a == nil {
			b.ActivationsBytes = b.WeightsBytes / 5
			b.Notes = append(b.Notes, "no architecture: activations taken as 20% of the weights (EleutherAI Transformer Math)")
		}
		b.PeakAllocatedBytes = add(b.WeightsBytes, b.KVCacheBytes, b.ActivationsBytes, b.LogitsBytes, b.BuffersBytes)
		if !s.prof.GraphCompute {
			// Eager PyTorch frees each block's intermediates before the
			// next block runs, and the head runs after the last block: a
			// prefill's working set and its logits are never held at once.
			b.PeakAllocatedBytes -= min(b.ActivationsBytes, b.LogitsBytes)
		}
		if tupleKVCache(p) {
			// Decoding: the previous step's cache and the new one, built
			// layer by layer, are alive together at the end of a step.
			decode := add(b.WeightsBytes, b.KVCacheBytes, b.KVCacheBytes, b.BuffersBytes)
			if decode > b.PeakAllocatedBytes {
				b.PeakAllocatedBytes = decode
				b.Notes = append(b.Notes, "the KV cache is rebuilt as new tuples every step: generate() holds the previous step's cache beside the new one")
			}
		}
	case Training:
		if p.Precision == capability.Int8 || p.Precision == capability.Int4 {
			return b, fmt.Errorf("%w: full training needs fp32, fp16 or bf16 weights; use --mode lora or qlora for 8-bit/4-bit", ErrNotApplicable)
		}
		w, g, o, host, temp := fullModelStates(s, P)
		if ref := referenceModel(s, P); ref > 0 {
			w += ref
			b.Notes = append(b.Notes, fmt.Sprintf("%s keeps a frozen reference model beside the one trained: %s of the weights", p.Objective, fmtGiB(sat(ref))))
		}
		b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes, b.HostBytes = sat(w), sat(g), sat(o), sat(host)
		act, logits, recompute := trainingActivations(s, a, tokens, false)
		b.ActivationsBytes, b.LogitsBytes = sat(act), sat(logits)
		b.BuffersBytes = add(sat(temp), gatherBuffers(s, m), ddpBuckets(s, b.GradientsBytes), zeroBucket(s, m))
		b.PeakAllocatedBytes = trainingPeak(s, b, temp, autocastCopies(s, P), recompute)
		b.heldBytes = trainingPeak(s, b, temp, 0, recompute) - b.PeakAllocatedBytes
	default: // LoRA, QLoRA
		// ZeRO-3/FSDP shard every parameter, the frozen base and the
		// adapters (tensor parallelism splits them); ZeRO-2 shards only
		// gradients and optimizer states.
		wShard, stateShard := s.wShard, s.dp
		base := float64(storedWeights(m, p)) * s.wFrac
		if loraFP32Base(p) {
			base = 4 * float64(m.Params) * s.wFrac
		}
		if p.Offload == OffloadCPU && p.OffloadParams {
			// FSDP/ZeRO-3 parameter offload: the frozen base lives on the
			// host and one block at a time is brought to the device.
			b.HostBytes = sat(base)
			base = float64(largestLayerBytes(m, p.Precision))
		}
		t := float64(loraParams(m, s.targets, p.LoRARank))
		if s.targets == LoRAAllLinear && linearExperts(p) {
			t += expertLoRAParams(m, p.LoRARank)
		}
		if p.DoRA && a != nil {
			// DoRA's magnitude vector: one value per output feature of
			// every adapted Linear, trained as the adapters are.
			outs, _ := doraShapes(a, s.targets)
			t += outs * float64(a.Layers)
		}
		// Adapters: weights, gradients and two Adam states, in the
		// stack's adapter dtype (PEFT keeps them in fp32).
		b.WeightsBytes = sat(base + t*s.adapterB/wShard)
		b.GradientsBytes = sat(t * s.adapterB / s.gShard)
		b.OptimizerBytes = sat(t * adamStateBytes(p.Optimizer, s.adapterB) / stateShard)
		if p.Offload == OffloadCPU {
			b.HostBytes, b.OptimizerBytes = add(b.HostBytes, b.OptimizerBytes), 0
		}
		if p.Optimizer.Paged() {
			b.OptimizerBytes = 0
		}
		act, logits, recompute := trainingActivations(s, a, tokens, true)
		b.ActivationsBytes, b.LogitsBytes = sat(act), sat(logits)
		b.BuffersBytes = add(dequantBuffer(s, a), gatherBuffers(s, m), ddpBuckets(s, b.GradientsBytes), zeroBucket(s, m))
		b.PeakAllocatedBytes = add(b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes, b.ActivationsBytes, b.LogitsBytes, b.BuffersBytes) -
			lossThenRecompute(logits, recompute)
		b.Notes = append(b.Notes, fmt.Sprintf("%s: %d trainable adapter parameters (rank %d on %s), %g-byte adapters with %s state", p.Mode, int64(t), p.LoRARank, s.targets, s.adapterB, p.Optimizer))
	}
	if zb := zeroBucket(s, m); zb > 0 {
		b.Notes = append(b.Notes, fmt.Sprintf("DeepSpeed's gradient bucket: %s (reduce_bucket_size elements in the parameters' dtype: 5e8, DeepSpeed's default, at stages 1 and 2; hidden_size², the Trainer's \"auto\", at stage 3)", fmtGiB(zb)))
	}
	if fusedExpertsStay16(p) {
		b.Notes = append(b.Notes, fmt.Sprintf("the routed experts (%s) stay in 16 bits: under %s %s transformers stores them as fused 3-D parameters, which bitsandbytes' %s loading does not replace (bitsandbytes#1849)",
			fmtGiB(sat(2*p.Model.ExpertParams())), p.Stack, p.StackVersion, p.Precision))
	}
	if s.trains && p.Objective == ObjectiveGRPO {
		grpoRollout(s, &b)
	}
	if s.trains && p.EvalBatch > 0 && a != nil {
		// The evaluation forward runs between steps, after the optimizer
		// has stepped and the gradients are freed: the weights and states
		// stay, the activations and the step's buffers are gone.
		b.EvalBytes = sat(evaluationBytes(s, a))
		if ev := add(b.WeightsBytes, b.OptimizerBytes, b.EvalBytes); ev > b.PeakAllocatedBytes {
			b.PeakAllocatedBytes = ev
			b.Notes = append(b.Notes, fmt.Sprintf("the evaluation forward at batch %d (its logits and the loss's copies, %s) is the peak, not the training step", p.EvalBatch, fmtGiB(b.EvalBytes)))
		}
	}
	if a == nil && s.trains {
		b.Notes = append(b.Notes, "no transformer shape: activations not estimated")
	}
	if s.trains && encoderOnly(a) && a.Vocab > 0 {
		b.Notes = append(b.Notes, "an encoder: trained under a task head (classification, question answering), whose logits are a few a token; masked-LM pretraining's vocabulary logits are not planned")
	}
	finishCounters(s, &b)
	return b, nil
}

// finishCounters adds the allocator's slack and the runtime, and sets the
// total the device must hold.
func finishCounters(s settings, b *Breakdown) {
	p := s.p
	b.OverlapBytes = b.PeakAllocatedBytes - add(b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes, b.ActivationsBytes,
		b.LogitsBytes, b.KVCacheBytes, b.BuffersBytes, b.EvalBytes, b.RolloutBytes)
	slack := allocatorSlackInference
	if s.trains {
		slack = allocatorSlackTraining
	}
	ggml := ggmlStack(p.Stack)
	if ggml {
		slack = 0 // ggml allocates each buffer at its size: no caching allocator
	}
	held := max(b.heldBytes, 0)
	if (p.ExpandableSegments || s.prof.ExpandableSegments) && (p.Backend == backend.CUDA || p.Backend == "") {
		// Expandable segments reuse any freed block: no phase-held
		// segments, no split-block slack (ROCm's allocator keeps its own).
		slack, held = 0, 0
	}
	transient := max(b.PeakAllocatedBytes-add(b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes), 0)
	if p.Objective == ObjectiveGRPO && p.Rollout == RolloutVLLMColocate {
		transient = max(transient-b.RolloutBytes, 0) // vLLM's share is one block sized at start-up
	}
	b.ReservedBytes = b.PeakAllocatedBytes + held + sat(float64(transient)*slack)
	b.AllocatorBytes = b.ReservedBytes - b.PeakAllocatedBytes
	where := p.Backend
	if p.OnCPU {
		where = backend.CPU
	}
	if rt, ok := runtimes[where]; ok {
		b.OverheadBytes, b.OverheadSource = rt.context, rt.source
		if where == backend.CUDA && p.EagerModuleLoading {
			b.OverheadBytes, b.OverheadSource = eagerCUDAContext, eagerCUDASource
		}
		if where == backend.CUDA && ggml {
			b.OverheadBytes, b.OverheadSource = bareCUDAContext, bareCUDASource
		}
		if p.devices() > 1 {
			b.OverheadBytes += rt.comm
		}
	}
	b.TotalBytes = add(b.ReservedBytes, b.OverheadBytes)
	if p.Stack == StackOllama && (where == backend.CUDA || where == backend.ROCm) {
		b.SchedulerReserveBytes = ollamaMinimumMemory
		b.Notes = append(b.Notes, "Ollama keeps 457 MiB of each GPU free when it places layers (discover: cudaMinimumMemory, rocmMinimumMemory; server/sched.go sets it aside with OLLAMA_GPU_OVERHEAD): a plan within that margin runs partly on the CPU")
	}
}

// ollamaMinimumMemory is what Ollama's scheduler sets aside on each CUDA
// or ROCm GPU before it places layers (cudaMinimumMemory and
// rocmMinimumMemory, 457 MiB).
const ollamaMinimumMemory = 457 * MiB

// storedWeights is the base model's weights as stored for the plan: the
// 16-bit or fp32 tensors, or a quantised format with its constants. Only
// Linear weights are quantised; embeddings, norms and the LM head keep 16
// bits (UnquantizedParams).
func storedWeights(m Model, p Plan) int64 {
	if w, ok := exllamaWeights(m, p); ok {
		return w
	}
	if restBits, ok := ggmlMXFP4Experts(m, p); ok {
		// gpt-oss on llama.cpp or Ollama: the routed experts in MXFP4
		// whatever the file's type, the rest at the type's width;
		// token_embd in host memory, as for every GGUF file.
		n := float64(m.Params) - untiedInputEmbedding(m)
		x := m.ExpertParams()
		return sat(max(n-x, 0)*restBits/8 + x*mxfp4Bits/8)
	}
	switch p.Precision {
	case capability.FP32:
		return sat(4 * float64(m.Params))
	case capability.FP16, capability.BF16, "":
		return sat(2 * float64(m.Params))
	}
	prof := ProfileOf(p.Stack)
	bits := quantBits(p.Precision, p.Quant, m)
	if p.Mode == QLoRA && prof.DoubleQuant && (p.Quant == "" || p.Quant == QuantBnB) {
		bits = nf4DoubleQuantBits
	}
	if p.WeightBits > 0 {
		bits = p.WeightBits
	}
	switch p.Quant {
	case QuantGGUF:
		// A GGUF file quantises every matrix, the embeddings and the
		// output head included (Q4_K_M: token_embd Q4_K, output Q6_K;
		// the rates are the file's average), and llama.cpp keeps
		// token_embd in host memory: the input layer runs on the CPU
		// (llama-model.cpp: the input buffer type is the CPU's; "CPU_Mapped
		// model buffer" in its load log). A tied head is duplicated onto
		// the device as the output layer. A vision encoder is its own f16
		// file (mmproj).
		n := float64(m.Params-m.VisionParams) - untiedInputEmbedding(m)
		return sat(max(n, 0)*bits/8 + 2*float64(m.VisionParams))
	case QuantMLX:
		// mlx quantises every layer that has a quantised form, Embedding
		// as well as Linear (mlx.nn.quantize; mlx_lm convert -q); only
		// norms and biases keep 16 bits, and a vision encoder as in
		// every other quantised release.
		return sat(float64(m.Params-m.VisionParams)*bits/8 + 2*float64(m.VisionParams))
	}
	keep := unquantized(m, m.Params)
	if fusedExpertsStay16(p) {
		keep = min(keep+int64(m.ExpertParams()), m.Params)
	}
	if prof.QuantizesHead && p.Precision == capability.Int4 {
		keep = max(keep-m.HeadParams, 0)
	}
	q := float64(m.Params - keep)
	keepBytes := 2.0
	if kbitUpcast(p) {
		keepBytes = 4 // prepare_model_for_kbit_training: the rest in fp32
	}
	return sat(q*bits/8 + keepBytes*float64(keep))
}

// mxfp4Bits is MXFP4's storage: 4-bit values and an 8-bit scale per 32.
const mxfp4Bits = 4.25

// ggmlMXFP4Experts reports a gpt-oss model on llama.cpp or Ollama, whose
// GGUF files keep the routed experts in MXFP4 as OpenAI released them and
// store the other tensors at the file's type, and gives that type's
// width: llama-quantize's MXFP4_MOE type (the "MXFP4" files, ggml-org's
// gpt-oss GGUFs) puts every other tensor in Q8_0 (llama-quant.cpp: "MoE
// tensors -> MXFP4, other tensors -> Q8_0"); an F16 or BF16 file, and
// Ollama's own gpt-oss build, keep them in 16 bits; a K-quant file
// (Unsloth's Q4_K_M) quantises them at its rate. A GGUF plan that names
// no type, and IQ4_XS, whose rate is MXFP4's 4.25 bits, are read as the
// MXFP4 file, the one gpt-oss is published in. A lab's gpt-oss-20b
// MXFP4 load with the experts of 20 of 24 blocks on the host
// (testdata/memory, round 73) holds 2,860 MiB of weights on the device,
// which these widths give and one rate for every tensor put 20% lower.
func ggmlMXFP4Experts(m Model, p Plan) (restBits float64, ok bool) {
	if !ggmlStack(p.Stack) || strings.ToLower(m.Family) != "gpt_oss" || m.ExpertParams() <= 0 {
		return 0, false
	}
	switch {
	case p.Precision == capability.FP16 || p.Precision == capability.BF16:
		return 16, true
	case p.Quant != QuantGGUF:
		return 0, false
	case p.WeightBits == 0 || p.WeightBits == mxfp4Bits:
		return ggufTypeBits["q8_0"], true
	}
	return p.WeightBits, true
}

// fusedExpertsStay16 reports a mixture of experts loaded in bitsandbytes'
// 8 or 4 bits whose routed experts stay in 16 bits: bitsandbytes replaces
// nn.Linear modules only, and transformers v5 (2026-01-26) stores the
// experts as fused 3-D parameters (gate_up_proj, down_proj of
// Qwen3MoeExperts, OlmoeExperts, Gemma4TextExperts, ...), which it skips
// ("the experts silently stay 16-bit", bitsandbytes-foundation/bitsandbytes#1849);
// Llama 4 has stored them so since its release (4.51). Unsloth's
// Gemma-4-26B-A4B notebook reserves 46.4 GB after load_in_4bit on
// transformers 5.5 (testdata/memory; unslothai/unsloth#5432 measures the
// same). Unsloth quantises the fused experts itself from its June 2026
// releases (unslothai/unsloth#4032, "should be supported now", 2026-06-18).
// Planned where the stated release says so: transformers (the stacks that
// run on it under its release: the HF stack, axolotl, LLaMA-Factory) from
// 5.0 (the families of fusedInEveryRelease from any stated release),
// Unsloth from 2026.3 (its pin to
// transformers 4.57 lifted: unslothai/unsloth#4022, 2026-02-10) to 2026.6;
// another stack's or an unstated release keeps the experts quantised.
// gpt-oss ships its experts in MXFP4, a path of its own.
func fusedExpertsStay16(p Plan) bool {
	quantised := p.Precision == capability.Int8 || p.Precision == capability.Int4
	if !quantised || (p.Quant != "" && p.Quant != QuantBnB) || p.Model.ExpertParams() == 0 {
		return false
	}
	family := strings.ToLower(p.Model.Family)
	if family == "gpt_oss" {
		return false
	}
	if linearizedLlama4(p) {
		return false
	}
	if p.StackVersion == "" {
		return false
	}
	switch {
	case p.Stack == StackUnsloth:
		return !VersionBelow(p.StackVersion, 2026, 3) && VersionBelow(p.StackVersion, 2026, 6)
	case ProfileOf(p.Stack).Dist == "transformers":
		// The stacks whose release is transformers' (the HF Trainer,
		// axolotl, LLaMA-Factory): their own loaders leave the fused
		// experts as transformers does unless told otherwise (axolotl's
		// opt-in quantize_moe_experts, axolotl-ai-cloud/axolotl#3747).
		return transformersFusesExperts(p)
	}
	return false
}

// linearizedLlama4 reports Llama 4 under axolotl, whose Llama 4 recipes
// load the experts linearized: llama4_linearized_experts: true with the
// axolotl-quants/Llama-4-*-Linearized-bnb-nf4-bf16 checkpoints, one
// nn.Linear per expert, which bitsandbytes quantises and LoRA's
// target_modules can match (examples/llama-4 since its first commit,
// 9f986f5; axolotl's single-H100 Scout QLoRA fits in 64.5-68.5 GB, where
// 16-bit experts alone would take 193 GB).
func linearizedLlama4(p Plan) bool {
	return p.Stack == StackAxolotl && strings.HasPrefix(strings.ToLower(p.Model.Family), "llama4")
}

// fusedInEveryRelease lists the mixtures of experts whose routed experts
// transformers has stored as fused 3-D parameters, not nn.Linear modules,
// since the family's first release: gpt-oss, DBRX, Gemma 4, and Llama 4
// (from 4.51, its first). Every other family is fused from v5
// (2026-01-26). transformersFusesExperts and linearExperts read this one
// list.
var fusedInEveryRelease = []string{"gpt_oss", "dbrx", "gemma4", "llama4"}

// fusedFromFirstRelease reports a family of fusedInEveryRelease (by the
// prefix of its model_type: llama4_text is Llama 4).
func fusedFromFirstRelease(family string) bool {
	family = strings.ToLower(family)
	for _, prefix := range fusedInEveryRelease {
		if strings.HasPrefix(family, prefix) {
			return true
		}
	}
	return false
}

// transformersFusesExperts reports that transformers stores the plan's
// routed experts as fused 3-D parameters: always for a family fused from
// its first release, otherwise a stated release from v5. An unstated
// release is taken as before v5. fusedExpertsStay16 (what bitsandbytes
// leaves 16-bit) and linearExperts (what LoRA's target_modules adapt) read
// it.
func transformersFusesExperts(p Plan) bool {
	if fusedFromFirstRelease(p.Model.Family) {
		return true
	}
	return p.StackVersion != "" && !VersionBelow(p.StackVersion, 5, 0)
}

// kbitUpcast: LoRA over bitsandbytes 8-bit or 4-bit weights through
// peft's prepare_model_for_kbit_training (Profile.KbitUpcast), which
// casts every parameter left in 16 bits (embeddings, norms, the output
// head) to fp32 (peft/utils/other.py). Sharded QLoRA (FSDP, ZeRO-3) loads
// the base on the host and TRL's SFTTrainer skips that call for it.
func kbitUpcast(p Plan) bool {
	quantised := p.Precision == capability.Int8 || p.Precision == capability.Int4
	return (p.Mode == LoRA || p.Mode == QLoRA) && quantised && ProfileOf(p.Stack).KbitUpcast &&
		(p.Quant == "" || p.Quant == QuantBnB) && p.Sharding != ShardZeRO3
}

// nf4DoubleQuantBits is NF4 with double quantisation (QLoRA §3,
// bnb_4bit_use_double_quant=True): the absmax of each block of 64 stored
// in 8 bits, with an fp32 constant per 256 of them. A stack whose QLoRA
// loader sets it (Profile.DoubleQuant) gets it; the others keep
// load_in_4bit's default, without it.
const nf4DoubleQuantBits = 4 + 8.0/64 + 32.0/(64*256)

// quantBits is the storage of one quantised weight, constants included:
//   - bitsandbytes LLM.int8: 8 bits plus an fp32 scale per output row;
//     NF4/FP4: 4 bits plus an fp32 absmax per block of 64 (0.5625 B), as
//     transformers loads load_in_4bit by default (QLoRA §3; double
//     quantisation would save 0.047 B);
//   - GPTQ/AWQ w4a16 group 128: 4 bits plus an fp16 scale and a 4-bit zero
//     per group (0.52 B); 8-bit GPTQ likewise;
//   - fp8: 8 bits plus per-channel scales;
//   - GGUF Q4_K_M: 4.85 bits, Q8_0 8.5 bits (llama.cpp quantize.cpp);
//   - mlx: 4 bits plus an fp16 scale and bias per group of 64 (0.5625 B).
func quantBits(prec capability.Precision, f QuantFormat, m Model) float64 {
	in := 4096.0
	if m.Arch != nil && m.Arch.Hidden > 0 {
		in = float64(m.Arch.Hidden)
	}
	eight := prec == capability.Int8 || prec == capability.FP8
	switch f {
	case QuantGPTQ:
		if eight {
			return 8 + 2.5*8/128
		}
		return 4 + 2.5*8/128
	case QuantFP8:
		return 8 + 32/in
	case QuantGGUF:
		if eight {
			return 8.5
		}
		return 4.85
	case QuantMLX:
		if eight {
			return 8 + 32.0/64
		}
		return 4 + 32.0/64
	}
	if eight {
		return 8 + 32/in
	}
	return 4 + 32.0/64
}

// fullModelStates are full training's weights, gradients and optimizer
// state on one device, and the optimizer step's temporary.
//
//   - AMP (autocast over fp32 weights): 4 B weights, 4 B gradients, Adam
//     8 B; the 16-bit copies autocast makes of each weight live from the
//     forward to the backward (2 B), counted with the weights.
//   - Pure 16-bit: 2 + 2 and Adam's two states in the parameters' dtype
//     (torch.optim.AdamW creates them like the parameter): 4 B.
//   - DeepSpeed ZeRO: 16-bit parameters and gradients, fp32 master and
//     Adam states in the optimizer partitions (12 B), sharded by stage.
//   - FSDP (ZeRO-3 shape): everything sharded over the devices.
//   - Tensor and pipeline parallelism split everything over their
//     degrees, and ZeRO's stage shares it out over the data-parallel
//     replicas (settings.wShard, settings.dp).
//
// The step: PyTorch's default foreach AdamW holds one state-sized
// temporary; fused AdamW and DeepSpeed's fused Adam none.
func fullModelStates(s settings, P float64) (w, g, o, host, temp float64) {
	p := s.p
	stateB := 4.0 // bytes per Adam state value
	switch {
	case deepSpeedStates(s):
		w, g = 2*P, 2*P
		o = 4*P + optimizerStates(p, P, 4)
	case s.pure:
		stateB = 2
		w, g = 2*P, 2*P
		o = optimizerStates(p, P, 2)
	case p.Precision == capability.FP32:
		w, g = 4*P, 4*P
		o = optimizerStates(p, P, 4)
	default: // AMP
		w, g = 4*P+2*P, 4*P
		o = optimizerStates(p, P, 4)
	}
	w, g, o = w*s.wFrac, g*s.gFrac, o*s.sFrac
	if p.Offload == OffloadCPU {
		// ZeRO-Offload: the fp32 master and Adam states live on the host
		// and the step runs there (DeepSpeed's CPU Adam). Under DeepSpeed
		// the gradients follow them, reduced bucket by bucket into the
		// host's fp32 partitions (Ren et al. 2021, "ZeRO-Offload"): its own
		// estimate_zero2/zero3_model_states_mem_needs count none on the
		// device, where a block's gradients, and the next, wait for their
		// copy. (FSDP's and ColossalAI's offload corpus rows do not show
		// it, so theirs stay.)
		host, o = o, 0
		if deepSpeedOffload(s) && !zeroOne(s) {
			// (Stage 1 does not partition the gradients: they
			// accumulate whole on the device and go to the host at
			// the step.)
			g = min(g, 2*float64(largestLayerBytes(p.Model, p.Precision)))
		}
		if p.OffloadParams && p.Sharding == ShardZeRO3 {
			host += w
			w = float64(largestLayerBytes(p.Model, p.Precision))
		}
		return w, g, o, host, 0
	}
	if p.Optimizer.Paged() {
		o = 0
	}
	if p.OptimizerInBackward || p.Optimizer.InBackward() || p.Optimizer == BAdam {
		// Each gradient is applied and freed as the backward produces
		// it (BAdam: only the active block has gradients): about one
		// block's gradients are alive at a time.
		if a := p.Model.Arch; a != nil && a.Layers > 0 {
			g /= float64(a.Layers)
		}
		return w, g, o, 0, 0
	}
	if !s.prof.FusedOptimizer && p.Optimizer == AdamW {
		temp = P * s.sFrac * stateB
	}
	if deepSpeedStates(s) && p.Sharding != ShardNone && p.Sharding != ShardTP && p.Precision != capability.FP32 {
		// The ZeRO optimizer steps a group at a time: the fp32 copy of
		// its gradients, and a foreach AdamW's temporary over it.
		group, partition := zeroStepGroup(s, P), P*s.sFrac
		if temp > 0 {
			temp *= group / partition
		}
		temp += 4 * group
	}
	return w, g, o, 0, temp
}

// deepSpeedStates reports the plans whose model states are DeepSpeed's:
// the deepspeed stack, and ZeRO through a Trainer stack in mixed 16-bit
// precision (16-bit parameters and gradients, fp32 master and states).
func deepSpeedStates(s settings) bool {
	return s.prof.DeepSpeed || deepSpeedZeRO(s) && !s.pure && s.p.Precision != capability.FP32
}

// zeroStepGroup is the parameters of a rank's partition DeepSpeed's ZeRO
// optimizer steps at once: stages 1 and 2 a parameter group's (about the
// whole partition: the Trainer's groups are the decayed weights and the
// rest), stage 3 a sub-group's of at most sub_group_size (1e9) elements.
// For that group the step makes an fp32 copy of its 16-bit gradients for
// the optimizer to read beside the fp32 master weights
// (stage_1_and_2.py's step; stage3.py's _prepare_fp32_grad_for_sub_group),
// freed once the group is stepped.
func zeroStepGroup(s settings, P float64) float64 {
	n := P * s.sFrac
	if s.p.Sharding == ShardZeRO3 {
		n = min(n, 1e9)
	}
	return n
}

// adamStateBytes is the optimizer state per trainable parameter when the
// states are kept in stateBytes-wide values: AdamW two states, 8-bit AdamW
// two 1-byte states (bitsandbytes), SGD with momentum, Lion and Muon one
// (LoRA's adapters are all matrices, which Muon steps), Adafactor its
// factored second moments (about one byte per value for matrices).
func adamStateBytes(opt Optimizer, stateBytes float64) float64 {
	switch opt {
	case AdamW8bit, PagedAdamW8bit:
		return 2
	case SGD, Lion, Muon:
		return stateBytes
	case Adafactor:
		return 1
	}
	return 2 * stateBytes
}

// DefaultGaLoreRank is GaLore's projection rank when none is given: the HF
// Trainer's galore_adamw default (optim_args rank) and galore-torch's
// README examples.
const DefaultGaLoreRank = 128

// optimizerStates is full training's optimizer state for P trainable
// parameters, each state value stateB bytes wide (before sharding).
//
//   - Muon: one momentum buffer per hidden matrix; the embeddings and the
//     untied head (adamWParams) get AdamW's two states.
//   - GaLore: per attention/MLP matrix of m×n, a projector of
//     rank×min(m,n) in the gradient's dtype and two Adam states of the
//     projected gradient, rank×max(m,n) (galore_projector.py projects the
//     shorter side); 8-bit GaLore keeps those states in one byte. The
//     embeddings and head get plain AdamW (GaLore targets attn and mlp).
//   - LOMO none; AdaLomo a row and a column vector per matrix.
//   - BAdam: the active block's fp32 copy and Adam states, 12 B a
//     parameter of one layer.
//   - The rest: adamStateBytes per parameter.
func optimizerStates(p Plan, P, stateB float64) float64 {
	side := math.Min(float64(adamWParams(p.Model)), P)
	switch {
	case p.Optimizer == Muon:
		return (P-side)*stateB + side*2*stateB
	case p.Optimizer.GaLore():
		rank := p.GaLoreRank
		if rank <= 0 {
			rank = DefaultGaLoreRank
		}
		proj, state := galoreValues(p.Model.Arch, rank)
		stB := stateB
		if p.Optimizer == GaLore8bit || p.Optimizer == GaLore8bitLayerwise {
			stB = 1
		}
		return side*2*stateB + (P-side)*(proj*stateB+2*state*stB)
	case p.Optimizer == LOMO:
		return 0
	case p.Optimizer == BAdam && p.Model.Arch != nil && p.Model.Arch.Layers > 0:
		// The active block (one layer, LLaMA-Factory's badam_mode
		// "layer"): its fp32 copy and Adam's two fp32 states.
		return 12 * P / float64(p.Model.Arch.Layers)
	case p.Optimizer == AdaLomo:
		return P * factoredValues(p.Model.Arch) * stateB
	}
	return P * adamStateBytes(p.Optimizer, stateB)
}

// adamWParams are the parameters every Muon and GaLore recipe leaves to
// AdamW: the input embeddings and the untied output head.
func adamWParams(m Model) int64 {
	if m.Arch == nil {
		return 0
	}
	return int64(m.Arch.Vocab)*int64(m.Arch.Hidden) + m.HeadParams
}

// galoreValues are GaLore's projector values and values of one projected
// state per projected parameter, from one block's attention and MLP
// matrices (the experts of a mixture have the MLP's shape ratios). A
// model without a transformer shape keeps full Adam states (0, 1).
func galoreValues(a *Arch, rank int) (proj, state float64) {
	if a == nil || a.Hidden <= 0 {
		return 0, 1
	}
	var params, p, st float64
	for _, mn := range blockMatrices(a) {
		m, n := float64(mn[0]), float64(mn[1])
		r := math.Min(float64(rank), math.Min(m, n))
		params += m * n
		p += r * math.Min(m, n)
		st += r * math.Max(m, n)
	}
	return p / params, st / params
}

// factoredValues are the values of a factored second moment (a row and a
// column vector per matrix, as AdaLomo keeps) per parameter.
func factoredValues(a *Arch) float64 {
	if a == nil || a.Hidden <= 0 {
		return 0
	}
	var params, rc float64
	for _, mn := range blockMatrices(a) {
		params += float64(mn[0]) * float64(mn[1])
		rc += float64(mn[0] + mn[1])
	}
	return rc / params
}

// blockMatrices are one block's weight matrices (rows, columns): the
// query, key, value and output projections and the two or three MLP ones.
func blockMatrices(a *Arch) [][2]int {
	h, hd := a.Hidden, a.HeadDim
	if hd <= 0 && a.Heads > 0 {
		hd = h / a.Heads
	}
	q, kv := a.Heads*hd, a.KVHeads*hd
	if q <= 0 {
		q = h
	}
	if kv <= 0 {
		kv = q
	}
	ffn := a.FFN
	if ffn <= 0 {
		ffn = 4 * h
	}
	ms := [][2]int{{h, q}, {h, kv}, {h, kv}, {q, h}, {h, ffn}, {ffn, h}}
	if a.Gated {
		ms = append(ms, [2]int{h, ffn})
	}
	return ms
}

// trainingPeak is when full training's memory peaks. Gradients are freed
// after each step (zero_grad(set_to_none=True), the default since PyTorch
// 2.0) and grow during the backward as the saved activations are freed,
// so the two are not held at once: the peak is at the start of the backward
// (activations and the loss's buffers) or during the optimizer step
// (gradients and its temporary), whichever is larger. Under activation
// checkpointing the backward's last block is recomputed when nearly every
// gradient has been made: that block's working set (recompute) stands
// beside the gradients as the step's temporary does. With gradient
// accumulation the gradients outlive the micro-batches and add up.
// Megatron never frees them: its DistributedDataParallel allocates one
// contiguous gradient buffer (main_grad) when it wraps the model and zeroes
// it in place each step (zero_grad_buffer), so the buffer is held through
// the forward too.
func trainingPeak(s settings, b Breakdown, temp, copies, recompute float64) int64 {
	gather := gatherBuffers(s, s.p.Model)
	states := add(b.WeightsBytes-sat(copies), b.OptimizerBytes, gather, ddpBuckets(s, b.GradientsBytes), zeroBucket(s, s.p.Model))
	fwd := add(b.ActivationsBytes, b.LogitsBytes, sat(copies)) - lossThenRecompute(float64(b.LogitsBytes), recompute)
	step := add(b.GradientsBytes, sat(max(temp, recompute)))
	if s.p.GradAccum() > 1 || s.prof.Stack == StackMegatron {
		return add(states, b.GradientsBytes, fwd)
	}
	return add(states, max(fwd, step))
}

// autocastCopies is the part of AMP's weights that is autocast's 16-bit
// copy of each fp32 weight (fullModelStates): made in the forward and kept
// for the backward by the matmuls that read them, they are freed as the
// backward passes each block, so they are gone by the optimizer's step and
// belong with the activations, not with the states the step holds. The
// CS336 writeups (testdata/memory, rounds 9 to 11) measure the same step
// peak under bf16 autocast as in fp32 for models whose activations are
// small.
func autocastCopies(s settings, P float64) float64 {
	p := s.p
	switch {
	case p.Mode != Training, s.pure, p.Precision == capability.FP32,
		s.prof.DeepSpeed, deepSpeedZeRO(s) && !s.pure && p.Precision != capability.FP32:
		return 0
	case p.Offload == OffloadCPU && p.OffloadParams && p.Sharding == ShardZeRO3:
		return 0 // one block at a time on the device
	}
	return 2 * P * s.wFrac
}

// deepSpeedZeRO reports ZeRO through a transformers-based stack, which is
// DeepSpeed (the Trainer's --deepspeed; ColossalAI's low-level ZeRO keeps
// the same states): the 16-bit parameters and gradients on the device, the
// fp32 master copy and the Adam states in the optimizer's partitions.
func deepSpeedZeRO(s settings) bool {
	return trainerZeRO(s.p)
}

// trainerZeRO reports ZeRO sharding under a Trainer stack over several
// devices, which devctl plans as DeepSpeed's (deepSpeedZeRO); a plan that
// says FSDP (Plan.FSDP) differs from it only in the precision regime
// withDefaults picks.
func trainerZeRO(p Plan) bool {
	return (p.Sharding == ShardZeRO1 || p.Sharding == ShardZeRO2 || p.Sharding == ShardZeRO3) && ProfileOf(p.Stack).Trainer && p.devices() > 1
}

// fsdpKeepsLoad reports a Trainer stack's FSDP sharding (Plan.FSDP) that
// keeps the 16-bit weights the stack loads: axolotl's, whose FSDP2 runs
// (halo's Gemma 4 26B-A4B on 2 B300s, 137.6 GiB, testdata/memory) hold
// less than fp32 states alone would. The other Trainer stacks shard
// through accelerate, which upcasts trainable low-precision parameters to
// fp32 when FSDP runs in mixed precision: DeepSpeed's 16 bytes a parameter.
func fsdpKeepsLoad(p Plan) bool {
	return p.FSDP && p.Stack == StackAxolotl
}

// zeroOne reports ZeRO-1 as the plan means it: the optimizer states
// sharded, the gradients whole on every device (DeepSpeed's stage 1,
// PyTorch's ZeroRedundancyOptimizer). Megatron's distributed optimizer is
// stage 1 in shape too (the whole fp32 gradient buffer on every replica,
// the fp32 main parameters and Adam states sharded), but devctl counts
// Megatron's fp32 main parameters with its weights, so its totals are
// ZeRO-2's (2 + 4 + 12/d bytes a parameter either way): it is planned as
// ZeRO-2.
func zeroOne(s settings) bool {
	return s.p.Sharding == ShardZeRO1 && s.prof.Stack != StackMegatron
}

// deepSpeedOffload reports CPU offload run by DeepSpeed: its own stack,
// or ZeRO through a transformers-based trainer (deepSpeedZeRO, and ZeRO-3
// on one device, which only DeepSpeed runs there).
func deepSpeedOffload(s settings) bool {
	p := s.p
	return s.prof.DeepSpeed || deepSpeedZeRO(s) || p.Sharding == ShardZeRO3 && p.devices() == 1 && s.prof.Trainer
}

// referenceModel is the frozen copy DPO and KTO score against in full
// training (LoRA's reference is its own base with the adapters disabled):
// TRL's create_reference_model deep-copies the model as loaded, fp32 under
// autocast and 16-bit in pure 16-bit training; under DeepSpeed the
// reference is a 16-bit inference engine, sharded only at ZeRO-3.
func referenceModel(s settings, P float64) float64 {
	p := s.p
	if !(p.Objective.Reference() || p.Objective == ObjectiveGRPO && p.KLReference) || p.Mode != Training {
		return 0
	}
	d := float64(p.devices())
	switch {
	case s.prof.DeepSpeed || deepSpeedZeRO(s):
		if p.Sharding == ShardZeRO3 {
			return 2 * P / d
		}
		return 2 * P
	case s.wShard > 1:
		return computeBytes(p.Precision) * P * s.wFrac
	case s.pure || p.Precision == capability.FP32:
		return computeBytes(p.Precision) * P
	}
	return 4 * P // autocast over fp32 weights: the copy is fp32 too
}

// loraParams is the adapter size: rank r on each adapted Linear of every
// block, r·(in + out) per matrix. Without a shape it is 0.5% of the model.
func loraParams(m Model, targets LoRATargets, rank int) int64 {
	if rank <= 0 {
		rank = 16
	}
	a := m.Arch
	if a == nil || a.Hidden == 0 {
		return m.Params / 200
	}
	var per int64
	for _, l := range adaptedLinears(a, targets) {
		per += l.in + l.out
	}
	return int64(rank) * per * int64(a.Layers)
}

// linearExperts reports a mixture of experts whose routed experts are
// nn.Linear modules that PEFT's target_modules match by name, so LoRA on
// every Linear adapts each expert's projections too: transformers before
// v5 (Mixtral's w1, w2, w3, and the gate_proj, up_proj and down_proj of
// Qwen2-MoE, Qwen3-MoE, OLMoE, DeepSeek-V2/V3, GLM-4.5 in nn.ModuleLists),
// under the stacks whose adapters are PEFT's on transformers' modules.
// transformers v5 stores them as fused 3-D parameters, which
// target_modules never match (transformersFusesExperts), and gpt-oss,
// Llama 4, DBRX and Gemma 4 have stored them so from their first release
// (fusedInEveryRelease).
// prime-rl's benchmarks adapt every expert the same way
// (testdata/memory/README.primerl-audit.md).
func linearExperts(p Plan) bool {
	m := p.Model
	if m.Arch == nil || m.Arch.ExpertFFN <= 0 || m.ExpertParams() <= 0 {
		return false
	}
	if linearizedLlama4(p) {
		return true
	}
	if fusedFromFirstRelease(m.Family) {
		return false
	}
	switch ProfileOf(p.Stack).Dist {
	case "transformers":
		return !transformersFusesExperts(p)
	case "trl":
		return true
	}
	return false
}

// expertLoRAParams is the adapters LoRA puts on every routed expert's
// projections: r·(hidden + expert width) for each of their matrices, which
// number the routed experts' parameters over hidden × expert width.
func expertLoRAParams(m Model, rank int) float64 {
	if rank <= 0 {
		rank = 16
	}
	h, fe := float64(m.Arch.Hidden), float64(m.Arch.ExpertFFN)
	if h <= 0 || fe <= 0 {
		return 0
	}
	matrices := m.ExpertParams() / (h * fe)
	return float64(rank) * (h + fe) * matrices
}

// linear is one Linear's input and output features.
type linear struct{ in, out int64 }

// adaptedLinears are the Linears of one block the targets adapt: q and v
// (PEFT's default for Llama-like models), q, k, v and o, or every Linear
// (the MLP's up and down, and its gate when it has one).
func adaptedLinears(a *Arch, targets LoRATargets) []linear {
	h, q, kv, f := int64(a.Hidden), int64(a.Heads*a.HeadDim), int64(a.KVHeads*a.HeadDim), int64(a.FFN)
	if q == 0 {
		q = h
	}
	if kv == 0 {
		kv = q
	}
	switch targets {
	case LoRAQKVO:
		return []linear{{h, q}, {h, kv}, {h, kv}, {q, h}}
	case LoRAAllLinear:
		ls := []linear{{h, q}, {h, kv}, {h, kv}, {q, h}, {h, f}, {f, h}}
		if a.Gated {
			ls = append(ls, linear{h, f})
		}
		return ls
	}
	return []linear{{h, q}, {h, kv}}
}

// doraShapes is what DoRA (peft's DoraLinearLayer) adds to one block: outs,
// the output features of its adapted Linears (each has a trainable
// magnitude per feature, and keeps for the backward its base output,
// which the magnitude scales, and the adapter's output, one value each per
// token), and weights, the values of those Linears' weights: with
// lora_dropout on, peft recomputes the base product from the dequantised
// weight in the compute dtype, which the product keeps for the backward.
func doraShapes(a *Arch, targets LoRATargets) (outs, weights float64) {
	for _, l := range adaptedLinears(a, targets) {
		outs += float64(l.out)
		weights += float64(l.in) * float64(l.out)
	}
	return outs, weights
}

// layerSaved is what one decoder block saves for the backward per token, in
// activation values (× the compute dtype's bytes), as PyTorch autograd
// keeps it for a Llama-shaped block in transformers:
//
//   - each RMSNorm upcasts its input to fp32 and saves it (2 values' worth)
//     and its normalised output when a trainable Linear reads it (1);
//   - scaled-dot-product attention saves q, k, v (k and v expanded to the
//     query heads by repeat_kv unless the kernel takes grouped heads, as
//     flash-attention does) and its output; the o_proj input is a
//     contiguous copy of that output;
//   - eager attention also keeps, per score (heads × s per token), what
//     eagerScoreBytes counts: the softmax's output (fp32 in transformers'
//     eager path, which calls softmax(dtype=float32)), its cast to the
//     compute dtype for the product with v, and with attention dropout the
//     dropout's mask and output instead of the cast;
//   - a gated MLP saves gate, silu(gate), up and their product (4·ffn), a
//     two-matrix MLP fc1's output and the activation (2·ffn).
//
// Frozen Linears (the base model under LoRA) save nothing for their own
// backward: only the inputs of adapted ones are kept.
func layerSaved(s settings, a *Arch, lora bool, seq float64) float64 {
	h, f := float64(a.Hidden), float64(a.FFN)
	heads := float64(a.Heads)
	if heads == 0 {
		heads = h / 64
	}
	q := float64(a.Heads * a.HeadDim)
	if q == 0 {
		q = h
	}
	kv := float64(a.KVHeads * a.HeadDim)
	if kv == 0 || s.attn == AttentionEager || (s.attn != AttentionFlash && s.prof.RepeatKV) {
		// transformers' sdpa and eager paths expand k and v with repeat_kv.
		kv = q
	}
	// What the block's two norms keep, in hidden-sized tensors of the
	// compute dtype: transformers' LlamaRMSNorm upcasts its input to fp32
	// (kept by pow and by the multiply by rsqrt: two units each).
	norms := 2 * 2.0
	if !lora {
		// A trainable norm weight also keeps the normalised 16-bit
		// tensor it scales (LlamaRMSNorm's weight * hidden_states,
		// torchtune's x_normed * scale) for its own gradient.
		norms += 2
	}
	if s.p.Compiled || s.p.FusedKernels || s.prof.FusedNorms {
		norms = 2 // one fused kernel per norm: its 16-bit input and the rstd
	}
	attn := q + 2*kv + q
	mlp := 2 * f
	if a.Gated {
		mlp = 4 * f
		if s.p.Compiled || s.p.FusedKernels {
			mlp = 3 * f // silu(gate)·up fused: gate, up and the product
		}
	}
	// tile is the share of the sequence whose MLP intermediates are alive
	// at once: one tile of about hidden tokens with a tiled MLP.
	tile := 1.0
	if s.p.TiledMLP && seq > h {
		tile = h / seq
	}
	mlp *= tile
	if s.p.Recompute == RecomputeSelective && !lora {
		if s.prof.Stack.ShardsLikeFSDP() {
			return opSACSaved(a, h, q, kv, f)
		}
		// Megatron's selective recompute (also NeMo's) recomputes only the
		// attention core, its s×s scores: fused attention keeps none, so
		// it saves nothing more there; eager attention's scores go.
		if s.attn == AttentionEager {
			return norms*h + attn + mlp + h + q + h
		}
	}
	if lora && s.prof.FusedLoRAKernels && a.Gated {
		// Unsloth: each norm's 16-bit input; q, k, v (in place after
		// RoPE) and the attention output, which o_proj reads as its input;
		// the normalised inputs of the qkv and MLP kernels; the MLP's gate
		// and up outputs.
		per := 2 + attn + h + h + 2*f*tile
		if s.attn == AttentionEager {
			per += heads * seq * eagerScoreBytes(s, a) / s.cb
		}
		return per
	}
	var linIn float64
	if !lora {
		linIn = h + q + h // normed inputs of qkv and of the MLP, o_proj's input
	} else {
		linIn = adapterInputs(s, a, h, q, f)
		if s.targets != LoRAAllLinear {
			mlp -= f // the down projection's input is not kept for a frozen Linear
			if !a.Gated {
				mlp = f
			}
		} else if s.prof.LoRADropout {
			// The down projection's adapter keeps its dropout's output
			// (counted in adapterInputs), not the product itself.
			mlp -= f
		}
	}
	per := norms*h + attn + mlp + linIn
	if lora && s.p.DoRA {
		outs, _ := doraShapes(a, s.targets)
		per += 2 * outs // each adapted Linear's base output and adapter output
	}
	if s.attn == AttentionEager {
		per += heads * seq * eagerScoreBytes(s, a) / s.cb
	}
	return per
}

// eagerScoreBytes is what eager attention keeps per score for the backward
// (torch autograd): softmax saves its output, in fp32 where the stack's
// code asks softmax for float32 (transformers' eager_attention_forward and
// the older per-model paths under autocast), else in the compute dtype (a
// plain PyTorch loop); the product with v saves its input, a cast copy
// when that differs from the softmax's dtype; attention dropout in
// training saves a one-byte mask and its output, which the product then
// keeps instead of the cast (the cast is freed). Dropout with p = 0 returns
// its input (ATen's dropout shortcut): today's LLMs keep no mask.
func eagerScoreBytes(s settings, a *Arch) float64 {
	softmax := 4.0
	if s.prof.Stack == StackPyTorch {
		softmax = s.cb
	}
	if s.trains && a.AttnDropout > 0 {
		return softmax + 1 + s.cb
	}
	if softmax > s.cb {
		return softmax + s.cb
	}
	return softmax
}

// adapterInputs is what the adapters of one block keep of their inputs for
// the backward, per token, in activation values. A frozen Linear keeps
// nothing; an adapter's A matrix keeps its input. Without dropout every
// adapter reading the same tensor shares it (q, k and v read the one
// normalised input). With dropout (peft's LoraLayer keeps one nn.Dropout
// per adapted Linear) each adapter keeps its own dropped-out copy and the
// one-byte mask of torch's native_dropout, so q and v cost two copies of
// the input where the shared tensor cost one. litgpt's fused qkv adapter
// has one dropout for the three.
func adapterInputs(s settings, a *Arch, h, q, f float64) float64 {
	attnReaders, oReaders, mlpReaders, downReaders := 2.0, 0.0, 0.0, 0.0
	switch s.targets {
	case LoRAQKVO:
		attnReaders, oReaders = 3, 1
	case LoRAAllLinear:
		attnReaders, oReaders, mlpReaders, downReaders = 3, 1, 1, 1
		if a.Gated {
			mlpReaders = 2
		}
	}
	if s.prof.FusedQKVAdapter {
		attnReaders = 1
	}
	if !s.prof.LoRADropout {
		return h + min(oReaders, 1)*q + min(mlpReaders, 1)*h + downReaders*f
	}
	copyAndMask := 1 + 1/s.cb // the dropped-out copy and its bool mask
	return copyAndMask * (attnReaders*h + oReaders*q + mlpReaders*h + downReaders*f)
}

// opSACSaved is torchtitan's per-op selective activation checkpointing
// (activation_checkpoint.mode selective, selective_ac_option op): each
// block keeps its input, the attention kernel's output and the output of
// every second matmul (wq, wv, w1, w2 of a Llama block: the policy saves the
// odd-numbered mm calls and recomputes the rest), per token.
func opSACSaved(a *Arch, h, q, kv, f float64) float64 {
	mms := []float64{q, kv, kv, h, f} // wq, wk, wv, wo, w1 (fc1)
	if a.Gated {
		mms = append(mms, f) // w3
	}
	mms = append(mms, h) // w2 (fc2)
	saved := h + q       // the block input and the attention output
	for i := 0; i < len(mms); i += 2 {
		saved += mms[i]
	}
	return saved
}

// trainingActivations is what the forward keeps for the backward, and the
// loss's buffers, on one device (tensor parallelism included).
//
// Checkpointing as the stacks do it (transformers gradient_checkpointing,
// torchtune, litgpt): each block keeps only its input, and the backward
// recomputes one block at a time, holding that block's saved tensors and
// their gradients. Selective recomputation (Megatron, torchtitan's per-op
// policy) drops what fused attention already drops, so it saves nothing
// more there. Unsloth offloads the checkpoints to the host.
func trainingActivations(s settings, a *Arch, tokens float64, lora bool) (act, logits, recompute float64) {
	if a == nil || a.Hidden == 0 || a.Layers == 0 {
		return 0, 0, 0
	}
	p := s.p
	seq := s.seq
	L, h := float64(a.Layers), float64(a.Hidden)
	if lora && p.LoRALayers > 0 && p.LoRALayers < a.Layers {
		// Gradients reach back only to the first adapted block: the
		// blocks before it run as inference and keep nothing.
		L = float64(p.LoRALayers)
	}
	per := layerSaved(s, a, lora, seq) * tokens
	ckpt := h * tokens // a checkpointed block's input
	whole := 1.0       // what the last norm and the head's input are split over
	if s.n > 1 {
		// Tensor parallelism splits the heads and the MLP's columns, and
		// with sequence parallelism (Megatron-Core's --sequence-parallel,
		// NeMo's recipes' default) the norms and block inputs by tokens:
		// everything a block saves is split n ways (Korthikanti et al.
		// 2022, sbh·34/t). Without it the two norms' inputs and the
		// attention's and MLP's first inputs, four values of width h a
		// token, are whole on every device (sbh(10 + 24/t), the 10 being
		// those and the dropout masks today's models do not keep), and
		// so is a checkpointed block's input.
		if s.sp {
			per /= s.n
			ckpt /= s.n
			whole = s.n
		} else {
			rep := min(4*h*tokens, per)
			per = (per-rep)/s.n + rep
		}
	}
	rc := p.Recompute
	if rc == "" {
		rc = s.prof.Recompute
	}
	// The backward of the block being recomputed holds what its forward
	// saved and, at its widest, the MLP's input gradients (gate and up in
	// a gated MLP, fc1's otherwise): the saved values are freed as their
	// gradients are made, so the block does not hold twice its saves. The
	// ALST runs (ArcticTraining's Llama-3.1-8B recipes on one H200,
	// 200k-650k tokens, testdata/memory) grow by about one block's saves
	// per token beyond the checkpoints.
	wide := float64(a.FFN) * tokens / s.n
	if a.Gated {
		wide *= 2
	}
	if lora && p.DoRA && s.prof.LoRADropout {
		// DoRA with lora_dropout: each block's adapted weights,
		// dequantised to the compute dtype, kept by the recomputed base
		// product until its backward (split as the block's matrices are).
		_, w := doraShapes(a, s.targets)
		per += w / s.n
	}
	switch {
	case rc == RecomputeOffload:
		act, recompute = per+wide, per+wide // the checkpoints live on the host
	case rc == RecomputeFull:
		// A checkpoint spanning g blocks: one input per group, and the
		// backward recomputes the group's g blocks before it frees them.
		g := min(float64(max(p.RecomputeLayers, 1)), L)
		act, recompute = math.Ceil(L/g)*ckpt+g*per+wide, g*per+wide
	default: // none, or selective (layerSaved keeps less)
		act = L * per
	}
	// The final norm and the LM head's input.
	act += 3 * h * tokens / whole
	if s.prof.UnfusedAttentionBackward && s.attn != AttentionEager {
		// The backward of one block's attention, recomputed unfused:
		// the probabilities, their gradient and the scores' gradient,
		// b·heads·s² each.
		heads := float64(a.Heads)
		if heads == 0 {
			heads = h / 64
		}
		act += 3 * heads * seq * tokens / s.n
	}
	act *= s.streamB
	// The LM head is column-parallel too: each device has its share of
	// the vocabulary's logits (Megatron's vocab-parallel cross-entropy).
	lossTokens := tokens
	if p.Objective == ObjectiveGRPO && p.PromptLen > 0 && float64(p.PromptLen) < seq {
		// TRL computes logits for the completion's positions only
		// (logits_to_keep).
		lossTokens = tokens * (seq - float64(p.PromptLen)) / seq
	}
	logits = lossBuffers(s, a, lossTokens) / s.n
	if pp := float64(p.PipelineDegree()); pp > 1 {
		// 1F1B: the first stage holds pp micro-batches in flight through
		// its L/pp blocks, as many activations as one micro-batch through
		// every block, and computes no loss; the last holds one
		// micro-batch through its blocks and the loss (Narayanan et al.
		// 2021; Korthikanti et al. 2022 §4.2.3). The larger of the two.
		if last := act/pp + logits; last > act {
			act = act / pp
		} else {
			logits = 0
		}
	}
	return act, logits, recompute * s.streamB
}

// grpoRollout adds a GRPO step's generation (TRL's GRPOTrainer, which
// Unsloth's GRPO runs too) to a training breakdown:
//   - model.generate (use_vllm=False, TRL's default): a KV cache of the
//     generation batch (per_device_train_batch_size × steps_per_generation
//     sequences of prompt + completion), the prefill of their prompts and
//     the last position's logits. It runs between training steps, with the
//     weights and optimizer states but neither activations nor gradients
//     (set to None after each step); weights sharded by ZeRO-3 or FSDP are
//     gathered whole for it (TRL's ds3_gather_for_generation, True by
//     default; FSDP's summon_full_params).
//   - a colocated vLLM (vllm_mode="colocate", Unsloth's fast_inference):
//     its gpu_memory_utilization share of the device, taken at start-up and
//     held through the training step, unless its sleep mode releases it
//     (then it is a phase like generate's). Unsloth's share holds the
//     weights it trains, which are then counted once.
//   - a vLLM server on other devices: nothing here.
func grpoRollout(s settings, b *Breakdown) {
	p, a := s.p, s.p.Model.Arch
	states := add(b.WeightsBytes, b.OptimizerBytes)
	phase := func(what string) {
		if gen := add(states, b.RolloutBytes); gen > b.PeakAllocatedBytes {
			b.PeakAllocatedBytes = gen
			b.Notes = append(b.Notes, fmt.Sprintf("the rollout (%s, %s) is the peak, not the training step", what, fmtGiB(b.RolloutBytes)))
		}
	}
	switch p.Rollout {
	case RolloutVLLMServer:
		b.Notes = append(b.Notes, "grpo: completions come from a separate vLLM server (vllm_mode server): nothing of the rollout on these devices")
	case RolloutVLLMColocate:
		share := p.VLLMShare()
		if p.DeviceBytes <= 0 {
			b.Notes = append(b.Notes, "grpo: no device size, so the colocated vLLM's share is not counted")
			return
		}
		b.RolloutBytes = sat(share * float64(p.DeviceBytes))
		if p.Stack == StackUnsloth {
			// Unsloth's fast_inference loads the model through vLLM and
			// trains the same weights: its share holds them, so they are
			// not counted twice.
			b.RolloutBytes = max(b.RolloutBytes-b.WeightsBytes, 0)
			b.Notes = append(b.Notes, "grpo: Unsloth trains the weights its colocated vLLM holds, so its share counts them once")
		}
		if p.RolloutSleep {
			phase("colocated vLLM, released by its sleep mode during the training step")
			return
		}
		b.PeakAllocatedBytes = add(b.PeakAllocatedBytes, b.RolloutBytes)
		b.Notes = append(b.Notes, fmt.Sprintf("grpo: a colocated vLLM holds %.0f%% of the device (vllm_gpu_memory_utilization) beside the training step", 100*share))
	default:
		if a == nil {
			return
		}
		n := float64(max(p.BatchSize, 1) * max(p.RolloutSteps, 1) * max(p.Generations, 1))
		seq, prompt := float64(p.SeqLen), float64(p.PromptLen)
		if prompt <= 0 || prompt > seq {
			prompt = seq
		}
		gen := float64(kvCache(a, p, n, seq))/s.n + prefillWorkingSet(s, a, n, prompt, prompt)/s.n + inferenceLogits(s, a, n)
		if s.wShard > 1 {
			gen += float64(storedWeights(p.Model, p)) * (1 - s.wFrac) // the shards gathered whole
		}
		b.RolloutBytes = sat(gen)
		phase(fmt.Sprintf("model.generate of %d sequences of %d tokens", int(n), int(seq)))
	}
}

// lossThenRecompute is what a checkpointed run never holds at once: the
// loss's buffers are freed by the loss's backward, before the backward
// recomputes the first block (the Trainer drops the model's outputs in
// compute_loss, torchtune deletes its logits before backward), so the
// forward's peak is the checkpoints plus the larger of the two, not both.
func lossThenRecompute(logits, recompute float64) int64 {
	return sat(min(logits, recompute))
}

// lossBuffers is the loss's memory at its peak, during the loss's backward
// at the start of the backward pass, per token of vocabulary:
//   - full: the 16-bit logits the model returns (2 B), their fp32 upcast's
//     log-softmax (4 B), and in the backward the fp32 gradient in and out
//     (8 B): 14 B per logit;
//   - chunked: the 16-bit logits and each chunk's log-softmax, 16-bit
//     (litgpt: 4 B per logit) or fp32 (torchtune upcasts each chunk: 6 B);
//     compiled, the chunk's upcast and cross-entropy fuse into one kernel
//     that keeps only the 16-bit logits (2 B);
//   - vocab-parallel (Megatron-Core's): the 16-bit logits and one fp32
//     copy that becomes the softmax and then the gradient in place: 6 B;
//   - fused: never materialised: a few rows of hidden states; Unsloth's
//     unsloth_fused_ce_loss (unsloth_zoo loss_utils) computes fp32 logits
//     and their gradient a chunk at a time within target_gb, 1 GB in the
//     forwards its compiler writes (unsloth_compiled_module_*.py).
func lossBuffers(s settings, a *Arch, tokens float64) float64 {
	const unslothLossBudget = 1e9 // target_gb = 1
	V := float64(a.Vocab)
	if V == 0 || encoderOnly(a) {
		return 0
	}
	if s.p.Objective == ObjectiveGRPO && s.loss != LossFused {
		// TRL's GRPO loss (its own, whatever SFT's default): the logits in
		// the compute dtype, each row's selective_log_softmax kept for the
		// backward (16-bit rows; an fp32 model's logsumexp keeps its
		// input), and their gradient.
		return 3 * s.cb * V * tokens
	}
	switch s.loss {
	case LossFused:
		if unslothMaterialisedLogits(s.p) {
			return 2 * V * tokens // the 16-bit logits, their gradient written in place
		}
		rows := 2 * float64(a.Hidden) * tokens * s.cb
		if s.p.Stack == StackUnsloth {
			rows += min(8*V*tokens, unslothLossBudget)
		} else if s.p.FusedKernels && s.p.Mode == Training {
			rows += ligerHeadGradient(s, a)
		}
		return rows
	case LossChunked:
		if s.p.Compiled {
			return 2 * V * tokens
		}
		per := s.prof.ChunkedLossBytes
		if per == 0 {
			per = 4
		}
		return per * V * tokens
	}
	if s.p.Compiled && s.cb < 4 {
		// torch.compile fuses the fp32 upcast, log-softmax and NLL into
		// one kernel: the 16-bit logits and, in the backward, their
		// 16-bit gradient (torchtitan compiles its loss).
		return 4 * V * tokens
	}
	if s.loss == LossVocabParallel {
		// The logits in the compute dtype and their fp32 copy, which
		// becomes the softmax and then the gradient in place.
		return (min(s.cb, 2) + 4) * V * tokens
	}
	if s.cb == 4 {
		return 12 * V * tokens
	}
	return 14 * V * tokens
}

// ligerHeadGradient is the LM head's weight gradient that Liger's fused
// linear cross-entropy computes in the forward, chunk by chunk, and keeps
// until the backward hands it to autograd (liger_kernel ops
// fused_linear_cross_entropy: grad_weight = torch.zeros_like(weight)): the
// whole vocabulary × hidden matrix in the weight's dtype as the forward
// sees it, gathered whole under ZeRO-3/FSDP, fp32 under autocast over fp32
// weights, 16-bit where DeepSpeed keeps 16-bit parameters. A frozen head
// (LoRA) has none.
func ligerHeadGradient(s settings, a *Arch) float64 {
	wb := s.cb
	if !s.pure && s.wShard <= 1 && !deepSpeedStates(s) && s.p.Precision != capability.FP32 {
		wb = 4
	}
	return float64(a.Vocab) * float64(a.Hidden) * wb
}

// evaluationBytes is an evaluation forward's working set at the plan's
// EvalBatch (both completions of a pair for a preference objective): one
// block's intermediates, as a forward without gradients holds them, the
// KV cache a transformers model builds when it evaluates, and the logits
// with what the loss adds: transformers' loss keeps the
// compute-dtype logits, their fp32 upcast and its log-softmax (Liger's
// fused loss materialises the logits when not training); Unsloth's kernel
// works on its 16-bit logits in place; Megatron's adds one fp32 copy. An
// encoder's task head adds nothing.
func evaluationBytes(s settings, a *Arch) float64 {
	mb := float64(s.p.EvalBatch)
	if s.p.Objective.Paired() {
		mb *= 2
	}
	ws := prefillWorkingSet(s, a, mb, s.seq, s.seq) / s.n
	if encoderOnly(a) || a.Vocab == 0 {
		return ws
	}
	if s.prof.Dist == "transformers" || s.prof.Dist == "trl" {
		// The Trainer's evaluation calls the model with the config's
		// use_cache (True for decoders): gradient checkpointing turns it
		// off only while training, so the forward fills a KV cache of
		// every layer for the batch and holds it until the outputs are
		// dropped. The llama-recipes quickstart runs (Llama-2-7B, 8-bit
		// LoRA, eval batch 8 at 2,048 tokens, testdata/memory) and the
		// QLoRA notebooks that evaluate each epoch sit that much higher.
		kv := float64(kvCache(a, s.p, mb, s.seq))
		if s.streamB > s.cb {
			// After prepare_model_for_kbit_training the stream is fp32
			// and Linear4bit/Linear8bitLt return their input's dtype:
			// the keys and values the cache stores are fp32 too.
			kv *= s.streamB / s.cb
		}
		ws += kv / s.n
	}
	per := s.cb + fp32CopyBytes(s.cb) + 4 // the logits, their upcast, the log-softmax
	switch {
	case s.prof.Stack == StackUnsloth:
		per = s.cb
	case s.loss == LossVocabParallel:
		per = min(s.cb, 2) + 4
	}
	return ws + mb*s.seq*float64(a.Vocab)*per/s.n
}

// fp32CopyBytes is what logits.float() adds a logit: an fp32 copy of
// 16-bit logits, nothing for logits already in fp32 (the same tensor).
func fp32CopyBytes(cb float64) float64 {
	if cb >= 4 {
		return 0
	}
	return 4
}

// encoderOnly reports an encoder without a decoder (BERT, DistilBERT,
// ViT): trained, it is fine-tuned under a task head (sequence or token
// classification, question-answering spans) whose logits are a few per
// token, not the vocabulary's; masked-LM pretraining's are not planned.
func encoderOnly(a *Arch) bool { return a != nil && a.KVLayers == 0 }

// prefillWorkingSet is the largest transient of a forward without
// gradients, beyond the KV cache it fills.
//
// A stack that plans a block's whole compute graph ahead (llama.cpp's
// ggml-alloc, mlx's lazy graphs: Profile.GraphCompute) holds the block's
// input, fp32 norm, q, k, v, the attention output and the MLP's
// intermediates for every token of a chunk at once. Eager PyTorch frees
// each intermediate as soon as Python drops it, so its peak is the MLP's:
// three tokens × ffn tensors in a gated MLP (the activation of the gate,
// the up projection and their product), two in a plain one. The Qwen2.5
// speed benchmark (transformers 4.46, FlashAttention-2, testdata/memory)
// grows with the prompt by the KV cache and about those three; the same
// repository's Qwen3 table (4.51) by the KV cache alone, which the
// training split's other sources do not bear out (round 50's README).
// Eager attention adds its b·heads·s² score
// matrix (and the softmax's fp32 copy); a graph-planning stack without
// flash attention (llama.cpp -fa off) reserves a chunk's f32 scores and
// softmax against the whole context, kvLen.
func prefillWorkingSet(s settings, a *Arch, batch, seq, kvLen float64) float64 {
	if a == nil || a.Hidden == 0 {
		return 0
	}
	h, f := float64(a.Hidden), float64(a.FFN)
	if f == 0 {
		f = 4 * h
	}
	// Eager PyTorch: a gated MLP holds act(gate(x)), up(x) and their
	// product at once (down_proj(act_fn(gate_proj(x)) * up_proj(x)): the
	// gate's own output is freed when act_fn returns); a plain one fc1's
	// output and its activation.
	per := 2 * f * s.cb
	if a.Gated {
		per = 3 * f * s.cb
	}
	if s.prof.GraphCompute {
		q := float64(a.Heads * a.HeadDim)
		if q == 0 {
			q = h
		}
		kv := float64(a.KVHeads * a.HeadDim)
		if kv == 0 {
			kv = q
		}
		mlp := 2 * f
		if a.Gated {
			mlp = 3 * f
		}
		per = (3*h + q + 2*kv + q + mlp) * s.cb
	}
	ws := batch * seq * per
	if s.attn == AttentionEager {
		heads := float64(a.Heads)
		if heads == 0 {
			heads = h / 64
		}
		if s.prof.GraphCompute {
			// ggml reserves the graph for a chunk against the whole
			// context: the f32 scores and their softmax, n_ubatch × n_ctx
			// per head (llama.cpp without flash attention).
			ws += batch * heads * seq * kvLen * 2 * 4
		} else {
			ws += batch * heads * seq * seq * (s.cb + 4)
		}
	}
	return ws
}

// prefillChunk is the prompt tokens one forward evaluates: the plan's
// --prefill-chunk where the stack takes one (Profile.ChunkFlag), else the
// stack's own (0: the whole prompt at once).
func prefillChunk(p Plan) int {
	prof := ProfileOf(p.Stack)
	if p.PrefillChunk > 0 && prof.ChunkFlag != "" {
		return p.PrefillChunk
	}
	return prof.PrefillChunk
}

// mlxFusedHeadDims are the head sizes mlx's fused full-attention Metal
// kernel takes for a prompt chunk (more than 8 queries):
// mlx/backend/metal/scaled_dot_product_attention.cpp, use_fallback's
// sdpa_full_supported_head_dim (64, 80 and 128 from 0.24.0; 72 and 96
// from 0.32.1). Any other size, Gemma 2/3/4's and Qwen3-Next's and
// Qwen3.5's 256 among them, takes the unfused fallback; so do the latent
// attention's unequal query and value sizes (DeepSeek's 192 and 128).
var mlxFusedHeadDims = map[int]bool{64: true, 72: true, 80: true, 96: true, 128: true}

// mlxPromptFallback says why a model's prompt attention misses mlx's
// fused kernel ("" when it takes it).
func mlxPromptFallback(a *Arch) string {
	switch {
	case a.LatentKV > 0:
		return "latent attention's query and value head sizes differ, which mlx's fused prompt kernel does not take"
	case !mlxFusedHeadDims[a.HeadDim]:
		return fmt.Sprintf("mlx's fused prompt kernel takes head sizes 64, 72, 80, 96 and 128, not %d", a.HeadDim)
	case a.FullHeadDim > 0 && !mlxFusedHeadDims[a.FullHeadDim]:
		return fmt.Sprintf("mlx's fused prompt kernel takes head sizes 64, 72, 80, 96 and 128, not the full-attention layers' %d", a.FullHeadDim)
	}
	return ""
}

// mlxUnfusedWhy says why a plan's prompt attention runs unfused; "" when
// it does not. mlx-lm before 0.24.1 passed every prompt chunk an additive
// mask array, which mlx's fused kernel took only from mlx 0.24.0 (its
// "Support fused masking in Attention"), so that prompt attention was
// unfused whatever the head size (mlx-lm's "Updates for causal mask", #40:
// 12.26 GB before and 9.1 GB after for a 33,898-token prompt of a 4-bit
// Mistral 7B, testdata/memory).
func mlxUnfusedWhy(p Plan) string {
	if p.Stack != StackMLX || p.Mode != Inference || p.Model.Arch == nil {
		return ""
	}
	if releaseBelow(p.StackVersion, "0.24.1") {
		return "mlx-lm " + p.StackVersion + " masks the prompt with an array mlx's fused kernel then refused"
	}
	return mlxPromptFallback(p.Model.Arch)
}

// unfusedPrefillScores is the score matrix mlx's unfused attention holds
// while it evaluates a prompt chunk: batch × query heads × chunk × the
// prompt's keys, in the compute dtype, softmaxed in place (mlx-lm #1480:
// a Qwen3.6-35B-A3B prompt on an M5 Max grows 11.9 GiB past the weights,
// cache and MLP at 192k tokens, where 2048 × 192,000 × 16 heads in 16
// bits is 11.7 GiB), and why the kernel is unfused; 0 and "" when it
// is fused.
func unfusedPrefillScores(s settings, a *Arch, batch, chunk, prompt float64) (bytes float64, why string) {
	if a == nil || chunk <= 1 {
		return 0, ""
	}
	if why = mlxUnfusedWhy(s.p); why == "" {
		return 0, ""
	}
	heads := float64(a.Heads)
	if heads == 0 {
		heads = float64(a.Hidden) / 64
	}
	return batch * heads * chunk * prompt * s.cb, why
}

// vllmProfilePeak is the activation peak vLLM's start-up profile
// measures ("X GiB for peak activation" in its log): the larger of its
// dummy forward and its dummy sampler run.
//
// The forward of the token budget holds, in one block, the fused
// gate_up_proj output (2 × ffn, split by tensor parallelism) beside
// SiluAndMul's output (ffn; an ungated MLP holds fc1's output and the
// activation's, 2 × ffn), and about four hidden-sized tensors (the
// residual, the block input, the normed input and the hidden states kept
// for the sampler). The sampler run draws logits for max_num_seqs
// sequences, gathered whole on every rank: 16 bytes per sequence and
// vocabulary entry (the fp32 logits, their probabilities, and top-k/top-p's
// sorted values and int64 indices). Both were read from the llm-d-planner
// logs (vLLM 0.19, H100, 24 models, tensor parallel 1 to 4: the peak does
// not fall with tensor parallelism, and is 15 to 16.5 bytes per logit
// where the vocabulary dominates; a first pipeline stage, which samples
// nothing, shows the forward alone).
func vllmProfilePeak(s settings, a *Arch, tokens, seqs float64) float64 {
	if a == nil || a.Hidden == 0 {
		return 0
	}
	h, f := float64(a.Hidden), float64(a.FFN)
	if f == 0 {
		f = 4 * h
	}
	mlp := 2 * f
	if a.Gated {
		mlp = 3 * f
	}
	forward := tokens * (mlp/s.n + 4*h) * s.cb
	return max(forward, vllmSamplerRun(a, seqs), vllmImageProfile(s, a, seqs))
}

// vllmImageProfile is the vision encoder's part of vLLM's start-up
// profile for an encoder–decoder vision model (Llama 3.2 Vision): every
// one of max_num_seqs dummy sequences carries an image at the largest
// tiling, and the encoder runs over all of them in one batch. It is whole
// on every rank: the attention mask and the hidden states the encoder
// keeps are not split by tensor parallelism. 0 for other models, whose
// profile is not planned per image.
func vllmImageProfile(s settings, a *Arch, seqs float64) float64 {
	if a == nil {
		return 0
	}
	return seqs * float64(a.ImageProfileBytes) * s.cb / 2
}

// capturesGraphs reports a preallocating engine that captures CUDA graphs
// beside its KV cache at start-up: all but those whose profile says it
// captures none (lmdeploy's TurboMind), and TGI before v2.0.0
// (2024-04-12), where graphs were an opt-in (CUDA_GRAPHS, #1428) until
// #1703 made "1,2,4,8,16,32,64,96,128" the launcher's default.
func capturesGraphs(p Plan, prof Profile) bool {
	if prof.NoGraphBuffers {
		return false
	}
	return p.Stack != StackTGI || !VersionBelow(p.StackVersion, 2, 0)
}

// vllmSamplerRun is vLLM's dummy sampler run over seqs sequences: 16 bytes
// a vocabulary entry (fp32 logits, probabilities, the top-k/top-p sort's
// values and int64 indices), gathered whole on every rank.
func vllmSamplerRun(a *Arch, seqs float64) float64 { return 16 * seqs * float64(a.Vocab) }

// inferenceLogits: generate() computes the last position's logits and
// upcasts them to fp32 (transformers >= 4.45, logits_to_keep).
func inferenceLogits(s settings, a *Arch, batch float64) float64 {
	if a == nil {
		return 0
	}
	return batch * float64(a.Vocab) * 4
}

// samplerWarmup is what vLLM's V1 engine allocates beyond its
// gpu_memory_utilization share when it warms the sampler up after sizing
// the KV cache (gpu_model_runner.py _dummy_sampler_run in
// compile_or_warm_up_model): the profile's dummy sampler run again, now
// beside the allocated cache. V0 ran its sampler inside the profile only.
func samplerWarmup(s settings, a *Arch, seqs float64) float64 {
	if s.p.Stack != StackVLLM || vllmV0(s.p) || a == nil {
		return 0
	}
	return vllmSamplerRun(a, seqs)
}

// kvCache is 2 × layers × kv_heads × head_dim × tokens × batch, in the
// compute dtype (or the cache's own: KVBits), and a hybrid's recurrent
// state for each of the batch's sequences (recurrentState).
func kvCache(a *Arch, p Plan, batch, seq float64) int64 {
	if a == nil {
		return 0
	}
	return add(attentionCache(a, p, batch, seq), sat(recurrentState(a, p)*batch))
}

// recurrentState is what a hybrid's linear-attention or Mamba layers keep
// per sequence (Arch.StateValues), in the engine's state dtype: fp32 in
// llama.cpp and Ollama (their recurrent-state buffer, "RS buffer size":
// 149.62 MiB for Qwen3.6-27B's 48 Gated DeltaNet layers, the log in
// testdata/memory), the model's dtype in vLLM (mamba_ssm_cache_dtype
// "auto") and elsewhere, where kernels may keep it wider.
func recurrentState(a *Arch, p Plan) float64 {
	if a.StateValues == 0 {
		return 0
	}
	bytes := computeBytes(p.Precision) // quantised weights compute, and keep state, in 16 bits
	if ggmlStack(p.Stack) {
		bytes = 4
	}
	return float64(a.StateValues) * bytes
}

// stateNote says what the KV cache holds for a hybrid's recurrent layers,
// "" for a model without them.
func stateNote(a *Arch, p Plan) string {
	if a == nil || a.StateValues == 0 {
		return ""
	}
	return fmt.Sprintf("the KV cache includes the recurrent layers' state, %s a sequence whatever its length", fmtGiB(sat(recurrentState(a, p))))
}

// attentionCache is kvCache's attention part.
func attentionCache(a *Arch, p Plan, batch, seq float64) int64 {
	if a.KVLayers == 0 {
		return 0
	}
	kv, hd := a.KVHeads, a.HeadDim
	if kv == 0 {
		kv = a.Heads
	}
	if hd == 0 && a.Heads > 0 {
		hd = a.Hidden / a.Heads
	}
	bytes := computeBytes(p.Precision) // 16 bits for quantised weights too
	if p.KVBits > 0 {
		bytes = float64(p.KVBits) / 8
	}
	if per, ok := latentCache(p, a); ok {
		return sat(float64(a.KVLayers) * seq * batch * float64(per) * bytes)
	}
	// Values per token, summed over the layers: the sliding layers' held
	// to their window where the engine does so, the others' for every
	// token, at their own head count and size where they differ.
	full, sliding := float64(a.KVLayers)*seq, 0.0
	if sl, w := a.SlidingLayers, a.SlidingWindow; sl > 0 && w > 0 && sl <= a.KVLayers {
		held := seq
		if extra, ok := slidingCache(p); ok {
			held = min(seq, float64(w+extra))
		}
		full, sliding = float64(a.KVLayers-sl)*seq, float64(sl)*held
	}
	fullWidth := float64(kv * hd)
	if a.FullKVHeads > 0 && a.FullHeadDim > 0 {
		fullWidth = float64(a.FullKVHeads * a.FullHeadDim)
	}
	return sat(2 * (fullWidth*full + float64(kv*hd)*sliding) * batch * bytes)
}

// slidingCache reports whether the plan's engine holds a sliding-window
// layer's KV cache to its window, and how many tokens beyond the window it
// keeps there:
//
//   - transformers (HybridCache for Gemma 2 and 3 and Cohere2,
//     DynamicSlidingWindowLayer for gpt-oss, each from the family's first
//     release) and mlx-lm (RotatingKVCache): the window;
//   - vLLM from 0.10 (the V1 hybrid KV cache manager, #11382; release not
//     tag-verified): the window plus the prefill budget it schedules;
//   - llama.cpp from build b5450 (the SWA cache of #13194, merged
//     2025-05-20; the build number is approximate) and Ollama from 0.6
//     (its engine's SWA cache): the window plus one ubatch (512 tokens unless --prefill-chunk);
//   - SGLang, TGI, lmdeploy and TensorRT-LLM, and older releases: every
//     layer holds the whole sequence.
func slidingCache(p Plan) (extra int, ok bool) {
	switch p.Stack {
	case StackVLLM:
		if VersionBelow(p.StackVersion, 0, 10) {
			return 0, false
		}
		tokens, _ := vllmBatchDefaults(p)
		return tokens, true
	case StackLlamaCpp:
		if llamaCppBuildBelow(p, 5450) {
			return 0, false
		}
		return prefillChunk(p), true
	case StackOllama:
		if releaseBelow(p.StackVersion, "0.6.0") {
			return 0, false
		}
		return prefillChunk(p), true
	case StackMLX:
		return 0, true
	}
	if ProfileOf(p.Stack).Dist == "transformers" {
		return 0, true
	}
	return 0, false
}

// CountsKVTokens reports whether the stack's KV cache can be sized by a
// count of tokens (Plan.KVCacheTokens).
func CountsKVTokens(st Stack) bool {
	return st == StackVLLM || st == StackSGLang || st == StackLMDeploy || st == StackTRTLLM
}

// inferenceAutocast reports whether an inference plan runs fp32 weights
// under torch.autocast (--precision bf16 or fp16 with --mixed-precision
// amp, on a stack that runs eager PyTorch): the forward computes in 16
// bits, and autocast keeps the 16-bit copy it makes of every fp32 weight
// that requires grad, which a model's parameters do under torch.no_grad()
// too, until the autocast region ends (aten/src/ATen/autocast_mode.cpp
// cached_cast: can_try_cache checks arg.requires_grad() and is_leaf(),
// not the grad mode).
func inferenceAutocast(p Plan) bool {
	prof := ProfileOf(p.Stack)
	return p.Mode == Inference && p.Mixed == MixedAMP && (p.Precision == capability.BF16 || p.Precision == capability.FP16) &&
		prof.Preallocates == 0 && !prof.GraphCompute
}

// autocastWeights is a model held in fp32 with the 16-bit copies autocast
// caches: every weight a matmul reads, which is all of them but the input
// embedding (an embedding lookup is not cast); a head tied to the
// embedding is read by the output matmul and copied.
func autocastWeights(m Model) float64 {
	return 4*float64(m.Params) + 2*max(float64(m.Params)-untiedInputEmbedding(m), 0)
}

// untiedInputEmbedding is the input embedding of a model whose output head
// is its own matrix, which only the lookup reads (llama.cpp keeps it on the
// host; autocast does not cast it). A tied embedding is also the head, read
// by the output matmul: 0.
func untiedInputEmbedding(m Model) float64 {
	if a := m.Arch; a != nil && m.HeadParams > 0 {
		return float64(a.Vocab) * float64(a.Hidden)
	}
	return 0
}

// latentCache reports whether the plan's engine caches multi-head latent
// attention's compressed latent rather than every head's keys and values,
// and how many values per token and layer it keeps:
//
//   - vLLM from 0.7 (MLA kernels, v0.7.1's release notes), SGLang (its
//     DeepSeek support came with MLA) and TensorRT-LLM (NVIDIA/TensorRT-LLM
//     #2738: "the compressed Latent vectors C_kv is stored in KV cache"):
//     kv_lora_rank + qk_rope_head_dim;
//   - llama.cpp from its MLA implementation (#12801, April 2025; build
//     b5145, approximate) the latent as K and kv_lora_rank again as V, and
//     from its V-less cache (#19067, January 2026; b7600, approximate) the
//     K part only; Ollama, which runs DeepSeek on llama.cpp, from 0.9 with
//     the K and V of the first form.
//
// transformers and the other stacks cache each head's keys and values.
func latentCache(p Plan, a *Arch) (int, bool) {
	if a.LatentKV <= 0 {
		return 0, false
	}
	switch p.Stack {
	case StackVLLM:
		return a.LatentKV, !VersionBelow(p.StackVersion, 0, 7)
	case StackSGLang, StackTRTLLM:
		return a.LatentKV, true
	case StackLlamaCpp:
		switch {
		case llamaCppBuildBelow(p, 5145):
			return 0, false
		case llamaCppBuildBelow(p, 7600):
			return a.LatentKV + a.LatentRank, true
		}
		return a.LatentKV, true
	case StackOllama:
		return a.LatentKV + a.LatentRank, !releaseBelow(p.StackVersion, "0.9.0")
	}
	return 0, false
}

// dequantBuffer: bitsandbytes dequantises one 4-bit weight to 16 bits for
// each matmul of a prefill or a training step (the largest, an MLP matrix,
// bounds it).
func dequantBuffer(s settings, a *Arch) int64 {
	if a == nil || s.p.Precision != capability.Int4 || (s.p.Quant != "" && s.p.Quant != QuantBnB) {
		return 0
	}
	widest := max(a.FFN, a.Hidden)
	if s.prof.QuantizesHead && s.p.Model.HeadParams > 0 {
		widest = max(widest, a.Vocab)
	}
	return sat(2 * float64(a.Hidden) * float64(widest))
}

// ddpBuckets is DistributedDataParallel's communication buckets: replicated
// training (several devices, nothing sharded) through torch DDP, which the
// Trainer, accelerate and Lightning construct with gradient_as_bucket_view
// False, holds a flat copy of every gradient beside the gradients ("the
// saved memory size will be equal to the total gradients size", torch's
// DistributedDataParallel docs on gradient_as_bucket_view). The stacks
// that train through DeepSpeed's engine, those that shard with FSDP
// (ShardsLikeFSDP), and Megatron, torchtune, litgpt, mlx and Unsloth do
// not build DDP buckets.
func ddpBuckets(s settings, grads int64) int64 {
	if !s.trains || s.replicas <= 1 || s.p.Sharding != ShardNone && s.p.Sharding != ShardTP {
		return 0
	}
	if s.prof.DeepSpeed || s.prof.Stack.ShardsLikeFSDP() {
		return 0
	}
	switch s.prof.Stack {
	case StackMegatron, StackTorchtune, StackLitGPT, StackMLX, StackUnsloth:
		return 0
	}
	return grads
}

// loraFP32Base reports LoRA over a base loaded in fp32 and run under
// 16-bit autocast (--mixed-precision amp with --mode lora): transformers
// before v5 loads a checkpoint in fp32 unless torch_dtype says otherwise,
// and a script that then trains with bf16=True keeps the frozen base in
// fp32 (4 B a parameter) while the activations are 16-bit. Autocast
// caches no 16-bit copy of a weight that does not require grad.
func loraFP32Base(p Plan) bool {
	return p.Mode == LoRA && p.Mixed == MixedAMP && (p.Precision == capability.BF16 || p.Precision == capability.FP16)
}

// layerSplit reports serving over several devices split by layers:
// transformers' device_map="auto" (accelerate's big-model inference) and
// llama.cpp's default --split-mode layer (Ollama's too) put a share of the
// blocks, with their weights and KV cache, on each device, and each device
// runs its blocks over the whole batch in turn. A block's working set is
// then not divided by the devices as tensor parallelism divides it (the
// serving engines' split): the Qwen2.5-72B speed benchmark's transformers
// rows over several GPUs (testdata/memory, round 50) sat up to 14% under
// at their longest prompts with it divided.
func layerSplit(s settings) bool {
	p := s.p
	if s.trains || s.n <= 1 || p.TensorParallel != 0 {
		return false
	}
	return ProfileOf(p.Stack).Dist == "transformers" || ggmlStack(p.Stack)
}

// zeroBucket is DeepSpeed ZeRO's gradient bucket: with contiguous_gradients
// (DeepSpeed's default) the ZeRO optimizer copies each gradient into a
// flat buffer of reduce_bucket_size elements in the parameters' dtype
// before it reduces them, and allocates that buffer whole, whatever the
// model's size (stage_1_and_2.py's setup_buckets at every backward,
// stage3.py's IPG buffer at start-up). Stages 1 and 2 take DeepSpeed's
// default of 5e8 elements, which the configs users start from also write
// (the transformers docs' ZeRO-2 example, LLaMA-Factory's ds_z2_config),
// and one buffer (overlap_comm, which doubles it, is off by default below
// stage 3). Stage 3's configs say "auto", which the Trainer and accelerate
// fill with hidden_size² (integrations/deepspeed.py). Stacks that run
// ZeRO without DeepSpeed (Megatron's distributed optimizer, FSDP) have no
// such bucket.
func zeroBucket(s settings, m Model) int64 {
	p := s.p
	if !s.trains || !(s.prof.DeepSpeed || deepSpeedZeRO(s)) {
		return 0
	}
	elements := 5e8
	switch {
	case p.Sharding == ShardZeRO3:
		a := m.Arch
		if a == nil || a.Hidden == 0 {
			return 0
		}
		elements = float64(a.Hidden) * float64(a.Hidden)
	case p.Sharding != ShardZeRO1 && p.Sharding != ShardZeRO2, p.devices() <= 1:
		return 0
	}
	width := 2.0
	if p.Precision == capability.FP32 {
		width = 4
	}
	return sat(elements * width)
}

// gatherBuffers: FSDP/ZeRO-3 all-gathers one wrapped block's parameters at
// a time in 16 bits and prefetches the next: two blocks' worth. FSDP also
// keeps its root unit, which holds what no block wraps (the embeddings and
// the output head), gathered from the forward to the backward: FSDP1's
// root and FSDP2's fully_shard root do not reshard after forward "since
// its parameters would be immediately all-gathered for backward" (torch
// fully_shard docs). DeepSpeed ZeRO-3 releases every parameter after use.
func gatherBuffers(s settings, m Model) int64 {
	if s.p.Sharding != ShardZeRO3 || s.p.devices() <= 1 || !s.trains {
		return 0
	}
	a := m.Arch
	if a == nil || a.Layers == 0 {
		return sat(2 * 2 * float64(LargestLayer(m)))
	}
	outside := float64(a.Vocab) * float64(a.Hidden)
	if m.HeadParams > 0 {
		outside += float64(m.HeadParams)
	}
	block := (float64(m.Params) - outside) / float64(a.Layers) / float64(s.p.TensorDegree())
	gathered := 2 * 2 * block
	if s.prof.Stack.ShardsLikeFSDP() || s.prof.Stack == StackTorchtune {
		gathered += 2 * outside * (1 - 1/s.dp)
	}
	return sat(gathered)
}

// shortensHow is how the engines that start with a shorter context than
// the model's maximum, when that is their default and their KV cache holds
// less, say so.
var shortensHow = map[Stack]string{
	StackLMDeploy: "TurboMind: \"No enough blocks for `session_len` (131072), `session_len` truncated to 111360\", InternLM/lmdeploy#3950",
	StackSGLang:   "its scheduler's max_req_len = min(context_len, max_total_num_tokens) − 1",
}

// shortensContext reports an engine that starts with the context its KV
// cache holds when no length was asked for.
func shortensContext(st Stack) bool {
	_, ok := shortensHow[st]
	return ok
}

// poolTokens is how many tokens a KV pool of the given bytes holds for each
// of seqs sequences on one device; 0 for a model without a KV cache.
func poolTokens(s settings, a *Arch, pool, seqs float64) int64 {
	perToken := float64(kvCache(a, s.p, seqs, 1)) / s.n
	if perToken <= 0 {
		return 0
	}
	return int64(pool / perToken)
}

// servingEngine is a preallocating engine (vLLM, SGLang, TGI, lmdeploy,
// TensorRT-LLM): it takes its share at start-up, whatever the batch, and
// gives the KV cache what its rule leaves (PreallocRule). The plan fits
// when that KV cache holds the requested tokens and everything held fits
// the device.
func servingEngine(s settings) (Breakdown, error) {
	p := s.p
	var b Breakdown
	m, a := p.Model, p.Model.Arch
	rule, frac, tokens := servingDefaults(p)
	defaultShare := frac
	if p.Prealloc > 0 {
		frac = p.Prealloc
	}
	device := float64(p.DeviceBytes)
	b.WeightsBytes = sat(float64(storedWeights(m, p)) / s.n)
	// The engine profiles a forward of its prefill budget (vLLM's
	// max_num_batched_tokens, SGLang's chunked_prefill_size, TGI's
	// max_batch_prefill_tokens) with the sampler's logits for
	// max_num_seqs (256).
	profiled := float64(tokens)
	seqs := float64(servingSeqs(p))
	b.ActivationsBytes = sat(prefillWorkingSet(s, a, 1, profiled, profiled) + inferenceLogits(s, a, seqs))
	if p.Stack == StackVLLM {
		b.ActivationsBytes = sat(vllmProfilePeak(s, a, profiled, seqs))
		if img := vllmImageProfile(s, a, seqs); img > 0 && sat(img) == b.ActivationsBytes {
			b.Notes = append(b.Notes, fmt.Sprintf("vllm profiles an encoder–decoder vision model with one image at the largest tiling for each of max_num_seqs (%d) sequences, through the vision encoder at once: %s (lower --max-num-seqs, as vLLM advises for Llama 3.2 Vision)", int(seqs), fmtGiB(sat(img))))
		}
	}
	if capturesGraphs(p, s.prof) {
		b.BuffersBytes = 1 * GiB // CUDA graphs and non-torch allocations (vLLM's startup log)
	}
	// The CUDA context the engine's process holds (the runtime's).
	var ctxBytes int64
	var ctxSource string
	if rt, ok := runtimes[p.Backend]; ok {
		ctxBytes, ctxSource = rt.context, rt.source
	}
	need := sat(float64(kvCache(a, p, float64(p.micro()), float64(p.SeqLen))) / s.n)
	w, act, buf := float64(b.WeightsBytes), float64(b.ActivationsBytes), float64(b.BuffersBytes)
	// pool is what the KV cache gets; held what the engine then holds;
	// required the device whose share would hold the requested tokens.
	var pool, held, required float64
	var what string
	switch rule {
	case ShareForStatic:
		pool = frac*device - w
		held = frac*device + act + buf
		// The device whose share holds the weights and the requested KV
		// cache: SGLang's default share leaves a fixed reserve (memory −
		// reserved), a share the user gives scales with the device.
		required = w + float64(need) + max(act+buf, (1-frac)*device)
		if frac > 0 && frac != defaultShare {
			required = max(required, (w+float64(need))/frac)
		}
		what = fmt.Sprintf("%.0f%% of the memory free at start-up for the weights and the KV pool; activations and CUDA graphs on top", frac*100)
	case ShareOfFree:
		// Engines that profile first (TensorRT-LLM, TGI) leave the
		// activations out of what is free; lmdeploy measures after the
		// weights alone and takes its prefill buffers from the rest. All
		// of them read free memory from the driver (cudaMemGetInfo,
		// torch.cuda.mem_get_info), once the CUDA context exists: what is
		// free is the device less the context too, or a plan that ran
		// fills the device past its size (training split: 6 more
		// outcomes agree).
		profiledFirst := p.Stack != StackLMDeploy
		free := device - w - float64(ctxBytes)
		if profiledFirst {
			free -= act
		}
		pool = frac * free
		held = w + pool + act + buf
		// The device whose share of what is free holds the requested KV
		// cache, and which then also holds what the engine keeps beside it.
		required = w + float64(need)/frac
		if profiledFirst {
			required += act
		}
		required = max(required, w+float64(need)+act+buf)
		what = fmt.Sprintf("the KV cache takes %.0f%% of what the weights leave free", frac*100)
	case KVPerSequence:
		pool = float64(need)
		held = w + pool + act + buf
		required = held
		what = "the KV cache of each sequence, session_len tokens, allocated as the sequence arrives (TurboMind 1.0)"
	case KVShareOfDevice:
		pool = frac * device
		held = w + pool + act + buf
		required = max(float64(need)/frac, w+float64(need)+act+buf)
		what = fmt.Sprintf("the KV cache takes %.0f%% of the device", frac*100)
	default: // ShareOfDevice
		pool = frac*device - w - act - buf
		held = frac * device
		required = (w + act + buf + float64(need)) / frac
		what = fmt.Sprintf("%.0f%% of the device; the KV cache gets what weights, activations and CUDA graphs leave", frac*100)
		if warm := samplerWarmup(s, a, seqs); warm > 0 {
			// vLLM V1 warms the sampler up after the KV cache is
			// allocated: a transient beyond the share that the device
			// must have free at start-up, gone once it serves.
			b.SchedulerReserveBytes = sat(warm)
			b.Notes = append(b.Notes, fmt.Sprintf("vllm warms its sampler up with %d dummy requests after allocating the KV cache: %s must be free beyond its share at start-up (\"CUDA out of memory occurred when warming up sampler\" otherwise)", int(seqs), fmtGiB(sat(warm))))
		}
	}
	counted := false
	if p.KVCacheTokens > 0 {
		// A pool sized by tokens: exactly that many (vLLM's block
		// override, lmdeploy's block count), or at most that many where
		// the count caps the share (SGLang, TensorRT-LLM). No device holds
		// more tokens than the count: a plan that asks for more does not
		// fit whatever the memory.
		c := float64(kvCache(a, p, 1, float64(p.KVCacheTokens))) / s.n
		exact := p.Stack == StackVLLM || p.Stack == StackLMDeploy
		if exact || c < pool {
			held += c - max(pool, 0)
			pool = c
			required = max(w+act+buf+max(float64(need), c), device+float64(need)-c)
			what = fmt.Sprintf("a KV cache of %d tokens (--kv-cache-tokens)", p.KVCacheTokens)
			counted = true
		}
	}
	verb := "preallocates at start-up"
	if rule == KVPerSequence {
		verb = "holds"
	}
	b.Notes = append(b.Notes, fmt.Sprintf("%s %s: %s (%s)", p.Stack, verb, what, fmtGiB(max(sat(pool), 0))))
	if note := stateNote(a, p); note != "" {
		b.Notes = append(b.Notes, note)
	}
	b.OverheadBytes, b.OverheadSource = ctxBytes, ctxSource
	if pool < float64(need) && pool > 0 && p.SeqFromModel && shortensContext(p.Stack) {
		// No length was asked for: the engine starts with the context its
		// pool holds instead of the model's maximum.
		if n := poolTokens(s, a, pool, float64(p.micro())); n > 0 {
			b.Notes = append(b.Notes, fmt.Sprintf("%s shortens its context to what the KV cache holds, about %d of the model's %d tokens, and starts (%s): --seq-len plans for a length", p.Stack, n, p.SeqLen, shortensHow[p.Stack]))
		}
		need = sat(math.Floor(pool))
	}
	if pool >= float64(need) {
		// It starts, and the KV cache takes all its rule gives it.
		b.KVCacheBytes = sat(pool)
		b.PeakAllocatedBytes = sat(held)
		b.ReservedBytes = b.PeakAllocatedBytes
		b.TotalBytes = add(b.ReservedBytes, b.OverheadBytes)
		return b, nil
	}
	// The KV cache for the requested tokens does not fit what the rule
	// leaves: the engine refuses to start ("larger than the maximum number
	// of tokens that can be stored in KV cache"). What the device must hold
	// is then the device whose share would hold it.
	b.KVCacheBytes = need
	b.PeakAllocatedBytes = add(b.WeightsBytes, b.ActivationsBytes, b.BuffersBytes, b.KVCacheBytes)
	b.ReservedBytes = b.PeakAllocatedBytes
	b.TotalBytes = add(sat(max(required, float64(b.PeakAllocatedBytes))), b.OverheadBytes)
	room := fmtGiB(max(sat(pool), 0)) + " left"
	if counted {
		room = fmt.Sprintf("%d tokens of --kv-cache-tokens hold (%s)", p.KVCacheTokens, fmtGiB(max(sat(pool), 0)))
	}
	b.Notes = append(b.Notes, fmt.Sprintf("the KV cache for %d × %d tokens needs %s, more than the %s", p.micro(), p.SeqLen, fmtGiB(b.KVCacheBytes), room))
	if p.Stack == StackSGLang && pool > 0 {
		// SGLang starts whatever its pool holds and caps each request
		// there (scheduler: max_req_len = min(context_len, max_total_num_tokens) − 1).
		if n := poolTokens(s, a, pool, 1); n > 0 {
			b.Notes = append(b.Notes, fmt.Sprintf("sglang still starts with a pool of about %d tokens and rejects longer requests (max_req_len = min(context_len, max_total_num_tokens) − 1): the plan does not fit requests of %d tokens", n, p.SeqLen))
		}
	}
	return b, nil
}

func fmtGiB(n int64) string { return fmt.Sprintf("%.2f GiB", float64(n)/float64(GiB)) }
