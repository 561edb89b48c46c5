package recommend

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/oomsim"
)

// Env lists the environment variables for a target, in a stable order.
// Sources: shared/research/devices.md §5 (JAX GPU memory docs, PyTorch
// allocator and MPS docs, PyTorch/XLA).
func Env(t Target, strategy oomsim.Strategy, frac float64, p oomsim.Plan, devices int) []envvar.Var {
	var out []envvar.Var
	set := func(name, value, why string) { out = append(out, envvar.Var{Name: name, Value: value, Why: why}) }
	vis := visible(t, devices)
	fracStr := strconv.FormatFloat(math.Round(frac*100)/100, 'f', 2, 64)
	jax := func() {
		set("XLA_PYTHON_CLIENT_MEM_FRACTION", fracStr, fmt.Sprintf("JAX preallocates this share of GPU memory (%s strategy; JAX's default is 0.75)", strategy))
		if t.Shared {
			set("XLA_PYTHON_CLIENT_PREALLOCATE", "false", "the device is shared: allocate on demand instead of grabbing memory up front")
		}
	}
	if p.OnCPU {
		// The plan runs on the host: nothing to say to an accelerator's
		// runtime, and JAX must not grab the device.
		set("JAX_PLATFORMS", "cpu", "the plan runs on the CPU")
		return out
	}
	switch t.Backend {
	case "cuda":
		set("CUDA_DEVICE_ORDER", "PCI_BUS_ID", "number GPUs as nvidia-smi does")
		set("CUDA_VISIBLE_DEVICES", vis, "the GPU(s) this plan uses")
		set("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", "less fragmentation in PyTorch's caching allocator")
		jax()
	case "rocm":
		set("HIP_VISIBLE_DEVICES", vis, "the GPU(s) this plan uses")
		jax()
	case "xla":
		set("PJRT_DEVICE", "TPU", "PyTorch/XLA runtime selection")
		if !t.Catalogue && t.Count > 1 && devices <= 1 {
			set("TPU_VISIBLE_CHIPS", vis, "the chip this plan uses")
		}
	case "mps":
		set("PYTORCH_ENABLE_MPS_FALLBACK", "1", "run operators MPS lacks on the CPU instead of failing")
		high := math.Round(frac*100) / 100
		low := math.Round(frac*1.4/1.7*100) / 100 // PyTorch's default low/high ratio, 1.4/1.7
		set("PYTORCH_MPS_HIGH_WATERMARK_RATIO", strconv.FormatFloat(high, 'f', 2, 64), fmt.Sprintf("cap MPS allocations at %s of recommendedMaxWorkingSetSize (%s strategy)", fracStr, strategy))
		set("PYTORCH_MPS_LOW_WATERMARK_RATIO", strconv.FormatFloat(low, 'f', 2, 64), "must not exceed the high watermark, so both are set together")
	case "xpu":
		set("ONEAPI_DEVICE_SELECTOR", "level_zero:"+vis, "the Intel GPU(s) this plan uses")
	case "neuron":
		set("NEURON_RT_VISIBLE_CORES", vis, "the NeuronCore(s) this plan uses")
	case "cpu":
		set("JAX_PLATFORMS", "cpu", "run JAX on the CPU")
	}
	if p.GPULayers > 0 && p.Stack == oomsim.StackLlamaCpp {
		// llama-server reads each flag from an LLAMA_ARG_ variable when
		// the flag is not given (its README's "env:" column).
		set("LLAMA_ARG_N_GPU_LAYERS", strconv.Itoa(p.GPULayers), "llama-server's --n-gpu-layers: the layers that fit on the device, the rest on the host")
	}
	if p.CPUMoELayers > 0 && p.Stack == oomsim.StackLlamaCpp {
		set("LLAMA_ARG_N_CPU_MOE", strconv.Itoa(p.CPUMoELayers), "llama-server's --n-cpu-moe: the blocks whose routed experts stay in host memory")
	}
	if p.PrefillChunk > 0 && p.Stack == oomsim.StackLlamaCpp {
		set("LLAMA_ARG_UBATCH", strconv.Itoa(p.PrefillChunk), "llama-server's --ubatch-size: the prompt tokens one forward evaluates (--prefill-chunk)")
		if p.PrefillChunk > 2048 {
			// The ubatch is clamped to the logical batch, 2048 by default.
			set("LLAMA_ARG_BATCH", strconv.Itoa(p.PrefillChunk), "llama-server's --batch-size: at least the ubatch, which it clamps to it")
		}
	}
	return out
}

func visible(t Target, devices int) string {
	n := devices
	if n < 1 {
		n = 1
	}
	first := 0
	if !t.Catalogue {
		first = t.Index
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(first + i)
	}
	return strings.Join(ids, ",")
}
