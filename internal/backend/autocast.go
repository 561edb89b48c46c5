package backend

// AutocastDeviceType is the device_type torch.autocast takes for the
// backend: the type attribute of the torch.device the framework uses
// (pytorch/pytorch torch/amp/autocast_mode.py: "The type is the same as the
// `type` attribute of a torch.device"). PyTorch's ROCm build keeps the
// "cuda" device type; PyTorch/XLA devices (TPU, and Neuron through
// torch-neuronx) are "xla" (docs.pytorch.org/xla perf/amp: torch.autocast('xla')).
func (b Backend) AutocastDeviceType() string {
	switch b {
	case CUDA, ROCm:
		return "cuda"
	case XLA, Neuron:
		return "xla"
	case MPS, XPU, CPU:
		return string(b)
	}
	return ""
}

// AutocastDtype is the dtype to give torch.autocast where a source states
// it, "" where it does not (the call then leaves dtype to the device's
// default): CUDA float16 and CPU bfloat16 are torch.autocast's defaults
// (torch/amp/autocast_mode.py); MPS float16 (bfloat16 autocast needs macOS
// 14, the same file); TPU bfloat16 (PyTorch/XLA AMP: "AMP on TPUs ...
// bfloat16").
func (b Backend) AutocastDtype() string {
	switch b {
	case CUDA, ROCm, MPS:
		return "torch.float16"
	case CPU, XLA:
		return "torch.bfloat16"
	}
	return ""
}

// AutocastCall is the torch.autocast(...) call for the backend, or a
// device-neutral one (device_type from the tensor itself) when the backend
// is not known.
func (b Backend) AutocastCall() string {
	dt := b.AutocastDeviceType()
	if dt == "" {
		return "torch.autocast(device_type=x.device.type)"
	}
	call := `torch.autocast(device_type="` + dt + `"`
	if d := b.AutocastDtype(); d != "" {
		call += ", dtype=" + d
	}
	return call + ")"
}
