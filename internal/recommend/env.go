package recommend

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
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

// FrameworkFor tells PyTorch and JAX how to address the device and which
// dtype and inference context to use.
func FrameworkFor(t Target, p oomsim.Plan) Framework {
	f := Framework{InferenceContext: "torch.inference_mode"}
	backend := t.Backend
	if p.OnCPU {
		backend = "cpu"
	}
	switch backend {
	case "cuda":
		f.PyTorchDevice, f.JAXPlatform = "cuda", "cuda"
		if !t.Catalogue {
			f.PyTorchDevice = fmt.Sprintf("cuda:%d", t.Index)
		}
	case "rocm":
		f.PyTorchDevice, f.JAXPlatform = "cuda", "rocm" // PyTorch's ROCm build keeps the "cuda" name
	case "xla":
		f.PyTorchDevice, f.JAXPlatform = "xla", "tpu"
		f.InferenceContext = "torch.no_grad" // inference_mode tensors break XLA's graph tracing
	case "neuron":
		f.PyTorchDevice, f.JAXPlatform = "xla", "" // no JAX platform name is verified for Neuron
		f.InferenceContext = "torch.no_grad"
	case "mps":
		f.PyTorchDevice, f.JAXPlatform = "mps", "metal"
	case "xpu":
		f.PyTorchDevice, f.JAXPlatform = "xpu", ""
	default:
		f.PyTorchDevice, f.JAXPlatform = "cpu", "cpu"
	}
	compute := "torch.bfloat16"
	if oomsim.Half(t.Support) == capability.FP16 {
		compute = "torch.float16"
	}
	switch p.Precision {
	case capability.FP32:
		f.TorchDtype = "torch.float32"
	case capability.FP16:
		f.TorchDtype = "torch.float16"
	case capability.Int8, capability.Int4:
		f.TorchDtype = compute
		f.Quantization = quantizationPath(backend, p.Precision, compute)
	default:
		f.TorchDtype = "torch.bfloat16"
	}
	if p.Mode != oomsim.Inference {
		f.InferenceContext = "" // training: gradients on, no inference context
	}
	f.GradientCheckpointing = p.Mode != oomsim.Inference && p.Recompute == oomsim.RecomputeFull
	return f
}

// quantizationPath is how a backend loads 8-bit or 4-bit weights.
// bitsandbytes is a CUDA library, so it is offered on CUDA only; other
// backends get their own path, or none when devctl knows of no verified one.
func quantizationPath(b backend.Backend, precision capability.Precision, compute string) string {
	switch b {
	case backend.CUDA:
		if precision == capability.Int8 {
			return "BitsAndBytesConfig(load_in_8bit=True)"
		}
		return fmt.Sprintf("BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\", bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=%s)", compute)
	case backend.ROCm:
		return "a GPTQ or AWQ checkpoint (AutoGPTQ/AutoAWQ and vLLM ship ROCm kernels); bitsandbytes targets CUDA"
	case backend.XPU:
		return "Intel Extension for PyTorch weight-only quantisation (ipex.llm.optimize with a weight-only qconfig)"
	case backend.CPU:
		if precision == capability.Int8 {
			return "torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)"
		}
		return "none for PyTorch on the CPU; a GGUF model in llama.cpp runs 4-bit"
	}
	return "none: no " + string(b) + " path for quantised weights is known to devctl; use 16-bit"
}
