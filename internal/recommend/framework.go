package recommend

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/oomsim"
)

// Framework tells PyTorch and JAX how to use the device: device names,
// dtype, inference context, autocast, and the framework settings the
// device-manager designs give (JAX's x64/JIT/XLA_FLAGS, Whisper decoding).
type Framework struct {
	PyTorchDevice         string `json:"pytorch_device"`
	JAXPlatform           string `json:"jax_platform"`
	InferenceContext      string `json:"inference_context,omitempty"`
	TorchDtype            string `json:"torch_dtype"`
	Quantization          string `json:"quantization,omitempty"`
	GradientCheckpointing bool   `json:"gradient_checkpointing,omitempty"`
	// AutocastDeviceType is torch.autocast's device_type here ("cuda" on
	// ROCm too, "xla" on TPU and Neuron, "mps", "xpu", "cpu"), and
	// AutocastDtype the dtype to give it ("" leaves the device's default).
	AutocastDeviceType string `json:"autocast_device_type"`
	AutocastDtype      string `json:"autocast_dtype,omitempty"`
	// JAX is the guidance for JAX users, on devices JAX has a platform for.
	JAX *JAXSettings `json:"jax,omitempty"`
	// Whisper is the decoding settings for a Whisper model on this device.
	Whisper *WhisperSettings `json:"whisper,omitempty"`
}

// JAXSettings are seed 002's JAX configuration (DeviceConfiguration's
// enable_x64 and enable_jit, XLA_FLAGS), decided for this device. The
// memory variables (XLA_PYTHON_CLIENT_MEM_FRACTION, _PREALLOCATE) are in
// the plan's env.
type JAXSettings struct {
	// EnableX64 is jax_enable_x64 (JAX_ENABLE_X64): off.
	EnableX64 bool `json:"enable_x64"`
	// EnableJIT: jit the step function; JAX_DISABLE_JIT=1 only to debug.
	EnableJIT bool `json:"enable_jit"`
	// XLAFlags are the XLA_FLAGS devctl suggests here ("" for none); the
	// plan's env exports them.
	XLAFlags string `json:"xla_flags,omitempty"`
	// Notes say why, with sources.
	Notes []string `json:"notes"`
}

// WhisperSettings are the decoding arguments of whisper's transcribe()
// for this device, and where they come from.
type WhisperSettings struct {
	FP16                    bool   `json:"fp16"`
	BeamSize                int    `json:"beam_size"`
	ConditionOnPreviousText bool   `json:"condition_on_previous_text"`
	Source                  string `json:"source"`
}

// latencyHidingFlag lets XLA overlap collectives with compute: the JAX GPU
// performance tips (https://docs.jax.dev/en/latest/gpu_performance_tips.html,
// "XLA performance flags", as of jaxlib 0.4.18) list it among the flags that
// improve performance, for computations on several devices; NVIDIA's
// JAX-Toolbox image sets it; jaxlib 0.10.2's flag list still has it,
// default false (Findus23/guides jax-xla-options @364d95a6).
const latencyHidingFlag = "--xla_gpu_enable_latency_hiding_scheduler=true"

// FrameworkFor tells PyTorch and JAX how to address the device and which
// dtype, inference context, autocast and framework settings to use.
func FrameworkFor(t Target, p oomsim.Plan) Framework {
	f := Framework{InferenceContext: "torch.inference_mode"}
	b := t.Backend
	if p.OnCPU {
		b = backend.CPU
	}
	switch b {
	case backend.CUDA:
		f.PyTorchDevice, f.JAXPlatform = "cuda", "cuda"
		if !t.Catalogue {
			f.PyTorchDevice = fmt.Sprintf("cuda:%d", t.Index)
		}
	case backend.ROCm:
		f.PyTorchDevice, f.JAXPlatform = "cuda", "rocm" // PyTorch's ROCm build keeps the "cuda" name
	case backend.XLA:
		f.PyTorchDevice, f.JAXPlatform = "xla", "tpu"
		f.InferenceContext = "torch.no_grad" // inference_mode tensors break XLA's graph tracing
	case backend.Neuron:
		f.PyTorchDevice, f.JAXPlatform = "xla", "" // no JAX platform name is verified for Neuron
		f.InferenceContext = "torch.no_grad"
	case backend.MPS:
		f.PyTorchDevice, f.JAXPlatform = "mps", "metal"
	case backend.XPU:
		f.PyTorchDevice, f.JAXPlatform = "xpu", ""
	default:
		b = backend.CPU
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
		f.Quantization = quantizationPath(b, p.Precision, compute)
		switch {
		case p.Stack == oomsim.StackLlamaCpp || p.Stack == oomsim.StackOllama || p.Quant == oomsim.QuantGGUF:
			// llama.cpp and Ollama run their own files, not a PyTorch config.
			f.Quantization = "a GGUF file (llama.cpp's own quantisation; --quant names its type, e.g. Q4_K_M)"
		case p.Stack.ExLlama():
			f.Quantization = "an EXL2/EXL3 file (ExLlama's own quantisation: --weight-bits is its bits per weight, e.g. 4.0bpw)"
		case p.Stack == oomsim.StackMLX || p.Quant == oomsim.QuantMLX:
			f.Quantization = "an mlx quantised model (mlx_lm.convert -q, mlx-community's -4bit/-8bit uploads)"
		}
	default:
		f.TorchDtype = "torch.bfloat16"
	}
	if p.Mode != oomsim.Inference {
		f.InferenceContext = "" // training: gradients on, no inference context
	}
	f.GradientCheckpointing = p.Mode != oomsim.Inference && (p.Recompute == oomsim.RecomputeFull || p.Recompute == oomsim.RecomputeOffload)
	f.AutocastDeviceType = b.AutocastDeviceType()
	f.AutocastDtype = compute
	if b == backend.CPU {
		f.AutocastDtype = b.AutocastDtype() // CPU autocast: bfloat16, torch's default
	}
	f.JAX = jaxSettings(b, f.JAXPlatform, p.Devices)
	f.Whisper = whisperSettings(b, p.Model)
	return f
}

// jaxSettings decides seed 002's JAX configuration for a device with a JAX
// platform.
func jaxSettings(b backend.Backend, platform string, devices int) *JAXSettings {
	if platform == "" {
		return nil
	}
	s := &JAXSettings{EnableX64: false, EnableJIT: true, Notes: []string{
		"jax_enable_x64 off, JAX's default: 32-bit floats and bf16/fp16 compute; set JAX_ENABLE_X64=1 only for float64 numerics " +
			"(seed 002: enable_x64=False for mixed precision)",
		"JIT on: jax.jit the step function and warm it up with one dummy batch, since the first call compiles; " +
			"JAX_DISABLE_JIT=1 only to debug (seed 002: enable JIT in production, disable it for debugging)",
	}}
	switch {
	case b == backend.CUDA && devices > 1:
		s.XLAFlags = latencyHidingFlag
		s.Notes = append(s.Notes, "XLA_FLAGS="+latencyHidingFlag+": overlaps collectives with compute on several GPUs "+
			"(JAX GPU performance tips; NVIDIA JAX-Toolbox sets it)")
	case b == backend.CUDA:
		s.Notes = append(s.Notes, "no XLA_FLAGS: the JAX GPU performance tips' other flag, --xla_gpu_triton_gemm_any, is on by default "+
			"in jaxlib 0.10.2; seed 002's --xla_gpu_enable_triton_softmax_fusion no longer exists there, and XLA refuses unknown flags")
	}
	return s
}

// FrameworkEnv are the framework variables the plan adds to the memory
// and visibility ones: XLA_FLAGS for JAX on several GPUs.
func FrameworkEnv(t Target, p oomsim.Plan) []envvar.Var {
	if p.OnCPU {
		return nil
	}
	if s := jaxSettings(t.Backend, FrameworkFor(t, p).JAXPlatform, p.Devices); s != nil && s.XLAFlags != "" {
		return []envvar.Var{{Name: "XLA_FLAGS", Value: s.XLAFlags, Why: "JAX on " + strconv.Itoa(p.Devices) + " GPUs: overlap collectives with compute (JAX GPU performance tips)"}}
	}
	return nil
}

// whisperSettings are the decoding settings for a Whisper model: seed 003
// (ADR-003, MPSOptimizer.get_optimal_whisper_settings) gives MPS and the
// CPU; for CUDA and ROCm it states none, so devctl gives openai/whisper's
// own transcribe defaults (whisper/transcribe.py @0003627d, the cli()
// arguments --fp16 True, --beam_size 5, --condition_on_previous_text True)
// and says so. Other backends get none: not stated.
func whisperSettings(b backend.Backend, m oomsim.Model) *WhisperSettings {
	if !isWhisper(m) {
		return nil
	}
	switch b {
	case backend.MPS:
		return &WhisperSettings{FP16: true, BeamSize: 1, ConditionOnPreviousText: false,
			Source: "seed 003 (ADR-003) for MPS: fp16 for speed, beam 1 for faster decoding, no conditioning on previous text to save memory"}
	case backend.CPU:
		return &WhisperSettings{FP16: false, BeamSize: 5, ConditionOnPreviousText: true,
			Source: "seed 003 (ADR-003) for the CPU: fp32 (no fp16 benefit on the CPU), beam 5 for quality, conditioning on previous text for context"}
	case backend.CUDA, backend.ROCm:
		return &WhisperSettings{FP16: true, BeamSize: 5, ConditionOnPreviousText: true,
			Source: "not stated by seed 003 for " + string(b) + ": openai/whisper's transcribe defaults (whisper/transcribe.py: --fp16 True, --beam_size 5, --condition_on_previous_text True)"}
	}
	return nil
}

// isWhisper reports a Whisper model: its family (config.json model_type
// whisper) or its catalogue name.
func isWhisper(m oomsim.Model) bool {
	name := strings.ToLower(m.Name)
	return m.Family == "whisper" || strings.HasPrefix(name, "whisper") || strings.Contains(name, "/whisper")
}

// Lines are the framework settings as the table shows them beside the
// device line: autocast, JAX, Whisper.
func (f Framework) Lines() [][2]string {
	var out [][2]string
	if f.AutocastDeviceType != "" {
		call := `torch.autocast(device_type="` + f.AutocastDeviceType + `"`
		if f.AutocastDtype != "" {
			call += ", dtype=" + f.AutocastDtype
		}
		out = append(out, [2]string{"Autocast:", call + ")"})
	}
	if j := f.JAX; j != nil {
		v := "jax_enable_x64 off, jit on"
		if j.XLAFlags != "" {
			v += ", XLA_FLAGS=" + j.XLAFlags
		}
		out = append(out, [2]string{"JAX:", v})
	}
	if w := f.Whisper; w != nil {
		out = append(out, [2]string{"Whisper:", w.Call() + "  (" + w.Source + ")"})
	}
	return out
}

// Call is the settings as transcribe() keyword arguments.
func (w WhisperSettings) Call() string {
	return fmt.Sprintf("transcribe(..., fp16=%s, beam_size=%d, condition_on_previous_text=%s)", pyBool(w.FP16), w.BeamSize, pyBool(w.ConditionOnPreviousText))
}

// EnvComments are shell comments -o env adds after the exports: settings
// that are arguments, not variables (Whisper's decoding), so that an
// eval'd output still shows them.
func (f Framework) EnvComments() []string {
	if f.Whisper == nil {
		return nil
	}
	return []string{"# whisper: " + f.Whisper.Call() + "  # " + f.Whisper.Source}
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
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
