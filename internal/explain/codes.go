package explain

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Error codes mapped to meaning. Frameworks print the same failure as a
// symbolic name in one version and a number in another ("CUDA error 2",
// "cuda runtime error (2)", "code=2(cudaErrorMemoryAllocation)",
// "hipError_t(1002)", "UR backend returns:40"); reading the code is what
// lets a log phrased in an unseen way land in the right category. The CUDA,
// HIP, cuDNN, NCCL... enums themselves are the catalogues (catalog.go);
// this file holds the readings that need more than a table.

// outcome is a category, a device and a message id.
type outcome struct {
	cat Category
	dev Device
	msg string
}

// refineUR reads Intel's Unified Runtime / Level Zero results
// ("UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)"): device
// memory exhaustion is out_of_memory, the rest an XPU device error.
func refineUR(line string, _ []string) (Category, Device, string) {
	low := strings.ToLower(line)
	switch {
	case strings.Contains(low, "out_of_device_memory"), strings.Contains(low, "out_of_host_memory"),
		strings.Contains(low, "xpu out of memory"):
		return CategoryOutOfMemory, DeviceXPU, "out_of_memory.xpu"
	}
	return CategoryOther, DeviceXPU, "other.xpu"
}

// xidMessage names what an NVIDIA Xid number means (NVIDIA's Xid catalog):
// which part to suspect decides the advice.
func xidMessage(n int) string {
	switch {
	case n == 79 || n == 119 || n == 120 || n == 154:
		return "other.gpu_lost"
	case n == 48 || n == 63 || n == 64 || n == 92 || n == 94 || n == 95:
		return "other.xid_ecc"
	case n == 74 || (n >= 144 && n <= 150):
		return "other.xid_nvlink"
	case n == 13 || n == 31 || n == 32 || n == 43 || n == 45 || n == 69 || n == 109:
		return "other.xid_app"
	}
	return "other.xid"
}

// refineXid reads "NVRM: Xid (PCI:0000:01:00): 31, ...".
func refineXid(line string, sub []string) (Category, Device, string) {
	if len(sub) > 1 {
		if n, err := strconv.Atoi(sub[1]); err == nil {
			return CategoryOther, DeviceCUDA, xidMessage(n)
		}
	}
	return CategoryOther, DeviceCUDA, "other.xid"
}

// refineInvalidDeviceFunction tells a CUDA "invalid device function" (a
// binary without code for this GPU) from HIP's: the phrase is the same,
// the runtime named on the line is not.
func refineInvalidDeviceFunction(line string, _ []string) (Category, Device, string) {
	low := strings.ToLower(line)
	if strings.Contains(low, "hip") || strings.Contains(low, "rocm") || strings.Contains(low, "amdgpu") {
		return CategoryROCmHIPError, DeviceROCm, "rocm_hip_error.no_binary"
	}
	return CategoryOther, DeviceCUDA, "other.no_kernel_image"
}

// refineOOMWord decides which memory ran out when a line says "out of
// memory" or "OOM" without a framework's exact phrase: the device named on
// the line, the host when the kernel's OOM killer speaks.
func refineOOMWord(line string, _ []string) (Category, Device, string) {
	low := strings.ToLower(line)
	switch {
	case containsAny(low, "killed process", "oom-killer", "oom killer", "cgroup out of memory", "oom_score"):
		return CategoryOutOfMemory, DeviceCPU, "out_of_memory.cpu"
	case containsAny(low, "opencl", "vulkan", "metal", "sycl0"):
		return CategoryOutOfMemory, DeviceAny, "out_of_memory" // a GPU API devctl has no family for
	case containsAny(low, "hip", "rocm"):
		return CategoryOutOfMemory, DeviceROCm, "out_of_memory.rocm"
	case containsAny(low, "xpu", "level_zero", "sycl"):
		return CategoryOutOfMemory, DeviceXPU, "out_of_memory.xpu"
	case containsAny(low, "mps"):
		return CategoryOutOfMemory, DeviceMPS, "out_of_memory.mps"
	case containsAny(low, "tpu", "hbm", "xla"):
		return CategoryXLAResourceExhausted, DeviceXLA, ""
	case containsAny(low, "cuda", "gpu", "cudamalloc", "vram", "cublas"):
		return CategoryOutOfMemory, DeviceCUDA, "out_of_memory"
	}
	return CategoryOutOfMemory, DeviceAny, "out_of_memory"
}

// refineShortfall reads a memory check that refused to start ("model
// requires more system memory (5.3 GiB) than is available (3.3 GiB)"):
// system memory or RAM is the host's, anything else as refineOOMWord.
func refineShortfall(line string, sub []string) (Category, Device, string) {
	low := strings.ToLower(line)
	if containsAny(low, "system memory", " ram", "host memory", "physical memory", "system resources") {
		return CategoryOutOfMemory, DeviceCPU, "out_of_memory.cpu"
	}
	return refineOOMWord(line, sub)
}

// refineNeuron tells a Neuron memory failure ("nrt_tensor_allocate
// status=4 message=\"Allocation Failure\"", "Failed to alloc DEVICE memory")
// from the compiler's and runtime's other failures.
func refineNeuron(line string, _ []string) (Category, Device, string) {
	low := strings.ToLower(line)
	if containsAny(low, "determine neuron driver version", "could not be initialized", "no neuron device", "neuron driver is not",
		"neuron device not found", "failed to open neuron device") {
		return CategoryNoGPUFound, DeviceNeuron, "" // no usable Neuron device or driver
	}
	if strings.Contains(low, "nerr_resource_nc") {
		return CategoryOther, DeviceNeuron, "other.neuron" // too few NeuronCores, not memory
	}
	// Runtime status 4 (NRT_RESOURCE / NERR_RESOURCE) is a failed allocation.
	if containsAny(low, "allocation failure", "alloc device memory", "failed to alloc", "out of memory", "could not satisfy request",
		"no free space", "status=4", "nerr_resource", "nrt_resource",
		// the driver layer's allocators: "[TDRV:dma_mp_alloc] Failed to create MLA buffer".
		"tdrv:dma_mp_alloc", "mla buffer") {
		return CategoryOutOfMemory, DeviceNeuron, "out_of_memory"
	}
	return CategoryOther, DeviceNeuron, "other.neuron"
}

// acceleratorToken names the accelerator a "no device" line is about.
// "GPUAccelerator" and "TPUAccelerator" (Lightning class names) count.
var acceleratorToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(xpu|cuda|gpu|mps|hip|rocm|tpu|npu|mlx|metal)(s|accelerator)?\b`)
}) // compiled on first use, not at every start

// refineNoDevice reads "No XPU devices are available", "Is XPU available:
// False", "PyTorch is not linked with support for xpu devices": the
// accelerator named decides the device; a line naming none decides nothing.
func refineNoDevice(line string, _ []string) (Category, Device, string) {
	m := acceleratorToken().FindString(line)
	if m == "" {
		return "", "", ""
	}
	switch f := family(acceleratorName(m)); f {
	case DeviceAny:
		return CategoryNoGPUFound, DeviceCUDA, ""
	default:
		if f == DeviceMPS {
			return CategoryNoGPUFound, DeviceMPS, "no_gpu_found.mps"
		}
		return CategoryNoGPUFound, f, ""
	}
}

// acceleratorName strips the plural and the "Accelerator" class suffix.
func acceleratorName(m string) string {
	m = strings.ToLower(m)
	m = strings.TrimSuffix(m, "accelerator")
	return strings.TrimSuffix(m, "s")
}

// refineMissingKernel reads "DispatchStub: missing kernel for xpu": an
// operator the device's backend lacks; on MPS that is mps_unsupported_op.
func refineMissingKernel(line string, _ []string) (Category, Device, string) {
	m := acceleratorToken().FindString(line)
	if m == "" {
		return "", "", ""
	}
	f := family(acceleratorName(m))
	if f == DeviceMPS {
		return CategoryMPSUnsupportedOp, DeviceMPS, ""
	}
	if f == DeviceAny {
		f = DeviceCUDA
	}
	return CategoryOther, f, ""
}
