package explain

import (
	"regexp"
	"strings"
	"sync"
)

// rule is one row of the classification table. A line matches when it
// contains one of needles, one of also (if any), none of not, and re (if
// any). Needles are case-sensitive literals taken from the frameworks'
// messages, which is what makes the whole-log search cheap.
type rule struct {
	id     string
	cat    Category
	dev    Device // "" infers the device from the line
	msg    string // message id; "" means the category
	weight int    // 100 a primary error, 60-90 secondary, 30-40 catch-all
	needles,
	also,
	not []string
	re string
	// derived marks a message that usually follows another failure (a
	// collective watchdog timing out because one rank died, NCCL reporting
	// an "unhandled cuda error"): it wins only when no primary device error
	// is in the log.
	derived bool
	// near, when set, must appear within nearWindow bytes of the hit: the
	// context a line leaves implicit ("failed to connect to all addresses"
	// is a TPU start-up failure when the job is talking to a TPU).
	near []string
	// generic marks a rule that recognises a concept in anyone's words
	// ("ran out of memory on your GPU"): its category stands, but the
	// device comes from a framework's own message for the same category
	// when the log has one.
	generic bool
	// refine may change the outcome from the line and re's submatches
	// (e.g. "Input type ... and weight type ..." is a device or a dtype
	// mismatch depending on the two types).
	refine func(line string, sub []string) (Category, Device, string)
	// origin says where the rule comes from: written by hand ("" is
	// DecidedByRule) or read from an error catalogue.
	origin DecidedBy
}

// Weights: a specific primary error is 100; a message that usually
// accompanies a primary error elsewhere, or a warning-level symptom, is
// lower; the catch-alls that make a device error "other" are lowest.
const (
	wPrimary   = 100
	wStrong    = 90
	wSecondary = 70
	wWeak      = 50
	wCatchAll  = 35
)

// rules is the classification table. Order breaks ties between rules of
// equal score on the same line (earlier wins).
var rules = []rule{
	// --- out of memory -------------------------------------------------
	{id: "oom.torch.cuda", cat: CategoryOutOfMemory, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"CUDA out of memory"}},
	{id: "oom.torch.hip", cat: CategoryOutOfMemory, dev: DeviceROCm, msg: "out_of_memory.rocm", weight: wPrimary,
		needles: []string{"HIP out of memory", "hipErrorOutOfMemory", "HIP_ERROR_OutOfMemory"}},
	{id: "oom.torch.mps", cat: CategoryOutOfMemory, dev: DeviceMPS, msg: "out_of_memory.mps", weight: wPrimary,
		needles: []string{"MPS backend out of memory"}},
	{id: "oom.tensorflow", cat: CategoryOutOfMemory, msg: "out_of_memory.tensorflow", weight: wPrimary,
		needles: []string{"OOM when allocating tensor"}},
	{id: "oom.paddle", cat: CategoryOutOfMemory, weight: wStrong,
		// PaddlePaddle's allocator check: "enforce allocating <= available failed".
		needles: []string{"allocating <= available failed"}},
	{id: "oom.cpu", cat: CategoryOutOfMemory, dev: DeviceCPU, msg: "out_of_memory.cpu", weight: wPrimary,
		needles: []string{"DefaultCPUAllocator: can't allocate memory", "DefaultCPUAllocator: not enough memory"}},
	{id: "oom.cuda.error", cat: CategoryOutOfMemory, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"CUDA error: out of memory", "CUDA_ERROR_OUT_OF_MEMORY", "cudaErrorMemoryAllocation"}},
	{id: "oom.cuda.runtime2", cat: CategoryOutOfMemory, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"cuda runtime error (2)"}},
	{id: "oom.vllm.kv", cat: CategoryOutOfMemory, dev: DeviceCUDA, msg: "out_of_memory.kv_cache", weight: wPrimary,
		needles: []string{"No available memory for the cache blocks", "larger than the maximum number of tokens that can be stored in KV cache"}},
	// vLLM at start-up: "Free memory on device (3.22/4.0 GiB) on startup is
	// less than desired GPU memory utilization (0.9, 3.6 GiB)".
	{id: "oom.vllm.startup", cat: CategoryOutOfMemory, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"less than desired GPU memory utilization"}},
	// transformers/accelerate placing a quantised model: "Some modules are
	// dispatched on the CPU or the disk. Make sure you have enough GPU RAM".
	{id: "oom.dispatch", cat: CategoryOutOfMemory, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"enough GPU RAM to fit", "Some modules are dispatched on the CPU or the disk"}},

	// --- XLA RESOURCE_EXHAUSTED -----------------------------------------
	{id: "xla.oom", cat: CategoryXLAResourceExhausted, dev: DeviceXLA, weight: wPrimary,
		needles: []string{"Out of memory while trying to allocate", "Ran out of memory in memory space", "Exceeded hbm capacity"}},
	{id: "xla.reserve", cat: CategoryXLAResourceExhausted, dev: DeviceXLA, weight: wPrimary,
		needles: []string{"Attempting to reserve"}, also: []string{"memory"}},
	{id: "xla.resource-exhausted", cat: CategoryXLAResourceExhausted, dev: DeviceXLA, weight: wWeak,
		needles: []string{"RESOURCE_EXHAUSTED", "Resource exhausted"}},

	// --- device / dtype mismatch -----------------------------------------
	{id: "mismatch.same-device", cat: CategoryDeviceMismatch, weight: wPrimary,
		needles: []string{"Expected all tensors to be on the same device", "to have the same device as tensor",
			"Expected object of device type", "indices should be either on cpu or on the same device",
			"is on CPU, but expected it to be on GPU", "must be on the same device", "should be on the same device", "should be on same device",
			"be on the same device", "on the same device as"},
		refine: refineDevices},
	{id: "mismatch.input-weight", cat: CategoryDTypeMismatch, weight: wPrimary,
		needles: []string{"and weight type"},
		re:      `Input type \(([^)]+)\) and weight type \(([^)]+)\) should be the same`,
		refine:  refineTypes},
	{id: "mismatch.type-not-equal", cat: CategoryDTypeMismatch, weight: wPrimary,
		needles: []string{"does not equal"},
		re:      `type (\S+) does not equal (\S+?)[ (]`,
		refine:  refineTypes},
	{id: "mismatch.scalar-type", cat: CategoryDTypeMismatch, weight: wPrimary,
		needles: []string{"expected scalar type", "Expected object of scalar type", "must have the same dtype",
			"to have the same dtype", "Expected query, key, and value to have the same dtype",
			"can't be cast to the desired output type"}},
	{id: "mps.placeholder", cat: CategoryMPSPlaceholderStorage, dev: DeviceMPS, weight: wPrimary,
		needles: []string{"Placeholder storage has not been allocated on MPS device"}},

	// --- unsupported dtype -------------------------------------------------
	{id: "dtype.mps.bf16", cat: CategoryUnsupportedDType, dev: DeviceMPS, msg: "unsupported_dtype.mps_bf16", weight: wPrimary,
		needles: []string{"BFloat16 is not supported on MPS"}},
	{id: "dtype.mps.convert", cat: CategoryUnsupportedDType, dev: DeviceMPS, weight: wPrimary,
		needles: []string{"to the MPS backend but it does not have support for that dtype"},
		re:      `convert (\w+) to the MPS backend`, refine: refineMPSDType},
	{id: "dtype.mps.float64", cat: CategoryUnsupportedDType, dev: DeviceMPS, msg: "unsupported_dtype.mps_float64", weight: wPrimary,
		needles: []string{"MPS framework doesn't support float64", "Cannot convert a MPS Tensor to float64"}},
	{id: "dtype.not-implemented", cat: CategoryUnsupportedDType, weight: wPrimary,
		needles: []string{"not implemented for '"},
		re:      `"?(\w+)"? not implemented for '(\w+)'?`, refine: refineNotImplemented},
	{id: "dtype.bf16.cc", cat: CategoryUnsupportedDType, dev: DeviceCUDA, msg: "unsupported_dtype.bf16_cc", weight: wPrimary,
		needles: []string{"Bfloat16 is only supported on GPUs with compute capability", "bf16 is only supported on"}},
	{id: "dtype.fp16.requires-gpu", cat: CategoryUnsupportedDType, weight: wStrong,
		needles: []string{"mixed precision requires a GPU"}},

	// --- MPS ops -------------------------------------------------------------
	{id: "mps.op", cat: CategoryMPSUnsupportedOp, dev: DeviceMPS, weight: wPrimary,
		needles: []string{"implemented for the MPS device"}},
	{id: "mps.sparse", cat: CategoryMPSUnsupportedOp, dev: DeviceMPS, msg: "mps_unsupported_op.sparse", weight: wPrimary,
		needles: []string{"'SparseMPS' backend"}},
	{id: "mps.framework-assert", cat: CategoryOther, dev: DeviceMPS, msg: "other.mps_assert", weight: wPrimary,
		needles: []string{"failed assertion `[MPS", "MetalPerformanceShaders/MPSCore", "MPSNDArray"}},
	// MPSGraph rejecting an op it cannot build ('loc("mps_subtract"("(mpsFileLoc): ...MPSGraphUtilities.mm"'):
	// an op the MPS backend does not support in that form.
	{id: "mps.graph", cat: CategoryMPSUnsupportedOp, dev: DeviceMPS, weight: wWeak,
		needles: []string{"(mpsFileLoc)", "MPSGraphUtilities.mm"}},
	{id: "mps.not-supported", cat: CategoryMPSUnsupportedOp, dev: DeviceMPS, weight: wStrong,
		needles: []string{"is not supported on MPS", "not supported on the MPS backend", "is not supported by the MPS backend"}},

	// --- driver / runtime -----------------------------------------------------
	{id: "driver.too-old", cat: CategoryCUDADriverMismatch, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"NVIDIA driver on your system is too old", "driver version is insufficient for CUDA runtime version",
			"cudaErrorInsufficientDriver", "CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
			"forward compatibility was attempted on non supported HW"}},
	{id: "driver.nvml-mismatch", cat: CategoryCUDADriverMismatch, dev: DeviceCUDA, msg: "cuda_driver_mismatch.nvml", weight: wPrimary,
		needles: []string{"Driver/library version mismatch"}},

	// --- no GPU ----------------------------------------------------------------
	{id: "nogpu.nvidia-driver", cat: CategoryNoGPUFound, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"Found no NVIDIA driver on your system", "no CUDA-capable device is detected",
			"No CUDA GPUs are available", "CUDA driver initialization failed", "CUDA_ERROR_NO_DEVICE"}},
	{id: "nogpu.cpu-build", cat: CategoryNoGPUFound, dev: DeviceCUDA, msg: "no_gpu_found.cpu_build", weight: wPrimary,
		needles: []string{"Torch not compiled with CUDA enabled"}},
	{id: "nogpu.cuda-unknown", cat: CategoryNoGPUFound, dev: DeviceCUDA, msg: "no_gpu_found.cuda_unknown", weight: wPrimary,
		needles: []string{"CUDA unknown error", "CUDA_ERROR_UNKNOWN", "cudaErrorUnknown"}},
	{id: "nogpu.deserialize", cat: CategoryNoGPUFound, dev: DeviceCUDA, msg: "no_gpu_found.deserialize", weight: wPrimary,
		needles: []string{"Attempting to deserialize object on a CUDA device"}},
	{id: "nogpu.hip", cat: CategoryNoGPUFound, dev: DeviceROCm, weight: wPrimary,
		needles: []string{"No HIP GPUs are available"}},
	{id: "nogpu.mps", cat: CategoryNoGPUFound, dev: DeviceMPS, msg: "no_gpu_found.mps", weight: wPrimary,
		needles: []string{"The MPS backend is supported on MacOS", "MPS backend is not available", "PyTorch is not linked with support for mps devices"}},
	// TensorFlow found the GPU but could not load its CUDA libraries, so it
	// runs on the CPU: the device is unusable, which is what no_gpu_found
	// tells the user.
	{id: "nogpu.tf-dlopen", cat: CategoryNoGPUFound, dev: DeviceCUDA, msg: "no_gpu_found.tf_libraries", weight: wStrong,
		needles: []string{"Cannot dlopen some GPU libraries", "Skipping registering GPU devices"}},
	{id: "nogpu.jax", cat: CategoryNoGPUFound, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"a CUDA-enabled jaxlib is not installed"}},
	// JAX's summary of a failed CUDA backend: the cuInit line before it,
	// when there is one, names the cause (SYSTEM_NOT_READY is the fabric
	// manager, not a missing GPU).
	{id: "nogpu.jax-backend", cat: CategoryNoGPUFound, dev: DeviceCUDA, weight: wStrong, derived: true,
		needles: []string{"Unable to initialize backend 'cuda'", "CUDA backend failed to initialize", "No visible GPU devices"}},
	{id: "nogpu.fallback", cat: CategoryNoGPUFound, dev: DeviceAny, weight: wWeak,
		needles: []string{"No GPU/TPU found, falling back to CPU"}},

	// --- kernel launch -----------------------------------------------------------
	{id: "launch.assert", cat: CategoryCUDALaunchFailure, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"device-side assert triggered", "cudaErrorAssert"}},
	{id: "launch.illegal-access", cat: CategoryCUDALaunchFailure, dev: DeviceCUDA, msg: "cuda_launch_failure.illegal_access", weight: wPrimary,
		needles: []string{"an illegal memory access was encountered", "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS"}},
	{id: "launch.failure", cat: CategoryCUDALaunchFailure, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"unspecified launch failure", "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED",
			"misaligned address", "an illegal instruction was encountered", "the launch timed out and was terminated",
			"too many resources requested for launch"}},
	{id: "launch.kernel-assert", cat: CategoryCUDALaunchFailure, dev: DeviceCUDA, weight: wSecondary,
		needles: []string{"Assertion `"}, also: []string{".cu:"}},
	// PyTorch's device-side index checks, named even where the ".cu" file is
	// not (a title, a cut line): "Assertion `srcIndex < srcSelectDimSize` failed".
	{id: "launch.index-assert", cat: CategoryCUDALaunchFailure, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"srcIndex < srcSelectDimSize", "index >= -sizes[i] && index < sizes[i]", "t >= 0 && t < n_classes",
			"idx_dim >= 0 && idx_dim < index_size", "cur_target >= 0 && cur_target < n_classes"}},
	// TensorFlow's GPU event manager when a CUDA event fails, i.e. a kernel
	// did: "Unexpected Event status: 1".
	{id: "launch.tf-event", cat: CategoryCUDALaunchFailure, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"Unexpected Event status"}},

	// --- cuDNN -----------------------------------------------------------------------
	{id: "cudnn.status", cat: CategoryCUDNNError, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"CUDNN_STATUS_", "cuDNN error", "Error in CuDNN", "cuDNN failed with status"}},
	{id: "cudnn.load", cat: CategoryCUDNNError, dev: DeviceCUDA, msg: "cudnn_error.load", weight: wPrimary,
		needles: []string{"Could not load library libcudnn", "Could not load library cudnn", "Unable to load any of {libcudnn",
			"Could not load dynamic library 'libcudnn"}},
	{id: "cudnn.version", cat: CategoryCUDNNError, dev: DeviceCUDA, msg: "cudnn_error.version", weight: wPrimary,
		needles: []string{"Loaded runtime CuDNN library", "but JAX was built against"}, also: []string{"cuDNN", "CuDNN"}},
	// Paddle: "The installed Paddle is compiled with CUDNN 8.2, but CUDNN
	// version in your machine is 8.0".
	{id: "cudnn.compiled-with", cat: CategoryCUDNNError, dev: DeviceCUDA, msg: "cudnn_error.version", weight: wStrong,
		needles: []string{"compiled with CUDNN", "compiled with cuDNN"}},

	// --- NCCL --------------------------------------------------------------------------
	{id: "nccl.timeout", cat: CategoryNCCLError, dev: DeviceCUDA, msg: "nccl_error.timeout", weight: wPrimary, derived: true,
		needles: []string{"Watchdog caught collective operation timeout", "NCCL communicator was aborted", "collective operation timeout"}},
	{id: "nccl.unhandled-cuda", cat: CategoryNCCLError, dev: DeviceCUDA, weight: wPrimary, derived: true,
		needles: []string{"unhandled cuda error", "ncclUnhandledCudaError"}},
	{id: "nccl.error", cat: CategoryNCCLError, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"NCCL error", "NCCL Error", "ncclSystemError", "ncclInternalError", "ncclInvalidUsage",
			"ncclRemoteError", "ncclInvalidArgument", "Test NCCL failure", "DistBackendError", "unhandled system error",
			// transport and topology failures NCCL reports in its own words
			"Got completion from peer", "Duplicate GPU detected",
			// TORCH_DISTRIBUTED_DEBUG: ranks called different collectives.
			"Detected mismatch between collectives", "mismatch between collectives"}},
	// NCCL's debug output and nothing else recognised: a run that hung in
	// a collective (the README's convention). Lowest of all weights, so
	// any error line wins over it.
	{id: "nccl.debug-only", cat: CategoryNCCLError, dev: DeviceCUDA, weight: wCatchAll - 5, generic: true,
		needles: []string{"NCCL INFO"}},
	{id: "nccl.words", cat: CategoryNCCLError, dev: DeviceCUDA, weight: wWeak, generic: true,
		needles: []string{"NCCL", "nccl"},
		re:      `(?i)\b(error|errors|fail|failed|failure|abort|aborted|timeout|timed out)\b`},
	{id: "nccl.warn", cat: CategoryNCCLError, dev: DeviceCUDA, weight: wWeak,
		needles: []string{"NCCL WARN"}},

	// --- TPU / XLA init ------------------------------------------------------------------
	{id: "tpu.busy", cat: CategoryXLATPUInit, dev: DeviceXLA, msg: "xla_tpu_init.busy", weight: wPrimary,
		needles: []string{"The TPU is already in use", "libtpu.so already in use", "libtpu.so already in used",
			"Couldn't open iommu group /dev/vfio"}},
	{id: "tpu.init", cat: CategoryXLATPUInit, dev: DeviceXLA, weight: wPrimary,
		needles: []string{"TPU initialization failed", "Failed to get global TPU topology", "TPU system has not been initialized",
			"Unable to initialize backend 'tpu'", "worker addresses, got"}},
	{id: "tpu.slow-init", cat: CategoryXLATPUInit, dev: DeviceXLA, msg: "xla_tpu_init.multihost", weight: wStrong,
		needles: []string{"TPU backend initialization is taking more than"}},
	{id: "ptxla.runtime-init", cat: CategoryXLATPUInit, dev: DeviceXLA, weight: wSecondary,
		needles: []string{"ComputationClient already initialized"}},

	// --- ROCm / HIP -------------------------------------------------------------------------
	{id: "rocm.no-binary", cat: CategoryROCmHIPError, dev: DeviceROCm, msg: "rocm_hip_error.no_binary", weight: wPrimary,
		needles: []string{"hipErrorNoBinaryForGpu", "Coudn't find binary for current devices", "Unable to find code object for all current devices"}},
	{id: "invalid-device-function", cat: CategoryOther, dev: DeviceCUDA, msg: "other.no_kernel_image", weight: wPrimary,
		needles: []string{"invalid device function"}, refine: refineInvalidDeviceFunction},
	{id: "rocm.kfd", cat: CategoryROCmHIPError, dev: DeviceROCm, msg: "rocm_hip_error.kfd", weight: wPrimary,
		needles: []string{"Unable to open /dev/kfd", "/dev/kfd: Permission denied"}},
	{id: "rocm.hip-error", cat: CategoryROCmHIPError, dev: DeviceROCm, weight: wStrong,
		needles: []string{"HIP error:", "HSA_STATUS_ERROR", "rocBLAS error", "MIOpen Error", "miopenStatus",
			// rocBLAS without kernels for this GPU: "Cannot read .../TensileLibrary.dat",
			// "Could not initialize Tensile host".
			"TensileLibrary", "Tensile host"}},

	// --- generalising rules: concepts, exception shapes and error codes ---------
	// These read what a message means rather than one framework's exact
	// wording, so a phrasing seen for the first time still lands.
	{id: "code.ur", cat: CategoryOther, dev: DeviceXPU, msg: "other.xpu", weight: wPrimary,
		needles: []string{"UR_RESULT_ERROR_", "UR backend failed", "level_zero backend failed", "PI_ERROR_", "XPU out of memory", "ZE_RESULT_ERROR_",
			// SYCL/OpenCL runtimes under IPEX: "Native API failed. Native API returns: -5 (CL_OUT_OF_RESOURCES)".
			"Native API failed", "Native API returns", "Unknown PI error"},
		refine: refineUR},
	{id: "code.xid", cat: CategoryOther, dev: DeviceCUDA, msg: "other.xid", weight: wPrimary,
		needles: []string{"Xid (", "Xid:", "XID "}, re: `(?i)xid\s*(?:\([^)]*\))?\s*:?\s*(\d{1,3})`, refine: refineXid},
	{id: "gpu-lost.words", cat: CategoryOther, dev: DeviceCUDA, msg: "other.gpu_lost", weight: wPrimary,
		needles: []string{"fallen off the bus", "falls off the bus", "fell off the bus", "RmInitAdapter failed", "Cannot attach gpu"}},
	{id: "oom.words", cat: CategoryOutOfMemory, weight: wSecondary, generic: true,
		needles: []string{"out of memory", "out-of-memory", "OutOfMemoryError", "cudaMalloc failed", "unable to allocate CUDA", "failed to allocate memory"},
		not:     []string{"report_tensor_allocations_upon_oom"},
		refine:  refineOOMWord},
	{id: "oom.acronym", cat: CategoryOutOfMemory, weight: wWeak, generic: true,
		needles: []string{"OOM"}, re: `(?:^|[^A-Za-z])(?:OOM|oom)(?:[^A-Za-z]|$)`,
		not: []string{"report_tensor_allocations_upon_oom", "OOM when allocating"}, refine: refineOOMWord},
	{id: "oom.shortfall", cat: CategoryOutOfMemory, weight: wStrong, generic: true,
		needles: []string{"memory than is available", "requires more system memory", "not enough memory", "insufficient memory",
			"more memory than available", "insufficient system resources"},
		refine: refineShortfall},
	{id: "oom.killed", cat: CategoryOutOfMemory, dev: DeviceCPU, msg: "out_of_memory.cpu", weight: wPrimary,
		needles: []string{"killed by signal: Killed", "OOM killer", "oom-killer", "Killed process", "cgroup out of memory", "已杀死"}},
	{id: "oom.killed-bare", cat: CategoryOutOfMemory, dev: DeviceCPU, msg: "out_of_memory.cpu", weight: wStrong,
		needles: []string{"killed"}, re: `^[\s*#>\x60'"]*(?i:killed)[\s*\x60'".!]*$`},
	// The shell's "Killed" at the end of a line a progress bar was still
	// drawing ("3/8 [00:02<00:03, 1.28it/s]Killed"), or a process said to
	// have been killed while it loaded: the OOM killer, as a bare "Killed".
	{id: "oom.killed-words", cat: CategoryOutOfMemory, dev: DeviceCPU, msg: "out_of_memory.cpu", weight: wStrong,
		// "kill" also finds "被kill了" without a needle in Chinese (each
		// byte of one is a column of the matcher's table).
		needles: []string{"killed", "kill"},
		re:      `(?:[\]|>\s]Killed[\s.!*\x60'"]*$|(?i:\b(?:was|got|been|is|be|being|gets|get)\s+killed\b)|被kill|kill了|被杀)`,
		not:     []string{"killed by signal: Bus error", "killed: false", "killed: true"}},
	{id: "oom.llama", cat: CategoryOutOfMemory, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"unable to allocate backend buffer", "failed to allocate CUDA0 buffer", "unable to allocate CUDA0 buffer"}},
	{id: "xla.hint-oom", cat: CategoryXLAResourceExhausted, dev: DeviceXLA, weight: wWeak,
		needles: []string{"report_tensor_allocations_upon_oom"}},
	{id: "mismatch.backend", cat: CategoryDeviceMismatch, weight: wPrimary,
		needles: []string{"Expected object of backend", "but got backend", "Expected CUDA backend", "tensor (got CUDA tensor)", "tensor (got CPU tensor)",
			"device type tensor to numpy", "convert CUDA tensor to numpy", "convert cuda tensor to numpy", "is on CPU, but expected"},
		refine: refineDevices},
	{id: "mismatch.two-devices", cat: CategoryDeviceMismatch, weight: wStrong,
		needles: []string{"different device", "same device", "devices must match", "device type for", "device mismatch", "but found 'c", "but found 'm",
			// "CPU vs CUDA mismatch": two devices named next to the word.
			"vs CUDA mismatch", "vs CPU mismatch",
			// torch.cuda API handed a CPU device: "Expected a cuda device, but got: cpu".
			"device, but got",
			// "Cannot generate a cpu tensor from a generator of type cuda".
			"generator of type"},
		refine: refineTwoDevices},
	{id: "dtype.compute-capability", cat: CategoryUnsupportedDType, dev: DeviceCUDA, msg: "unsupported_dtype.compute_capability", weight: wPrimary,
		needles: []string{"only supports Ampere GPUs or newer", "compute capability below", "requires a GPU with compute capability",
			"requires compute capability", "not supported on GPUs with compute capability", "requires .target sm_", "is not supported on this GPU"}},
	{id: "launch.resources", cat: CategoryCUDALaunchFailure, dev: DeviceCUDA, msg: "cuda_launch_failure.resources", weight: wPrimary,
		needles: []string{"out of resource: shared memory", "OutOfResources", "too many resources requested for launch"}},
	{id: "tpu.connect", cat: CategoryXLATPUInit, dev: DeviceXLA, weight: wStrong,
		needles: []string{"failed to connect to all addresses", "Failed to open the gRPC driver", "Socket closed"},
		near:    []string{"TPU", "tpu"}},
	{id: "oom.ggml-buffer", cat: CategoryOutOfMemory, weight: wStrong, generic: true,
		needles: []string{"failed to allocate buffer", "alloc_buffer: failed to allocate", "failed to allocate compute", "unable to allocate ROCm0 buffer"},
		refine:  refineOOMWord},
	{id: "tpu.startup", cat: CategoryXLATPUInit, dev: DeviceXLA, weight: wPrimary,
		needles: []string{"Requested backend tpu", "backend 'tpu", "No TPU Platform", "TPU platform", "client mesh master", "mesh configuration",
			"mesh_service", "TPU_SYSTEM", "cloud_tpu_init failed", "tpu_driver", "Unable to find driver in registry", "TPU Initialization Failed",
			"make_tpu_client", "get_tpu_client", "Failed to connect to the TPU"}},
	{id: "cudnn.concept", cat: CategoryCUDNNError, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"Failed to get convolution algorithm", "cuDNN failed to initialize", "Could not create cudnn handle", "CUDNN_STATUS",
			"cudnn error", "cuDNN launch failure", "DNN library initialization failed", "DNN library is not found",
			// cuDNN frontend: PyTorch's "GET was unable to find an engine to execute
			// this computation", TensorFlow's "No algorithm worked!".
			"unable to find an engine", "No algorithm worked", "cuDNN frontend heuristics"}},
	{id: "cudnn.dll", cat: CategoryCUDNNError, dev: DeviceCUDA, msg: "cudnn_error.load", weight: wStrong,
		needles: []string{"cudnn64_", "libcudnn.so", "libcudnn_"}, also: []string{"load", "Load", "not found", "No such file"}},
	{id: "rocm.fault", cat: CategoryROCmHIPError, dev: DeviceROCm, weight: wPrimary,
		needles: []string{"Memory access fault by GPU", "Page not present or supervisor privilege", "miopenStatus", "MIOpen Error", "MIOpen(HIP): Error",
			"rocBLAS error", "hipBLASLt error", "HSA_STATUS_ERROR", "amdgpu: ", "HIPRTC_ERROR", "miopen status"}},
	{id: "nogpu.launcher", cat: CategoryNoGPUFound, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"Torch is not able to use GPU", "No CUDA runtime is found", "No CUDA GPUs", "CUDA is not available", "no CUDA-capable device",
			"Found no NVIDIA driver"}},
	{id: "mps.op-words", cat: CategoryMPSUnsupportedOp, dev: DeviceMPS, weight: wPrimary,
		needles: []string{"_overrideable not implemented", "implemented for mps", "not currently supported on the MPS backend", "from the 'MPS' backend",
			"MPS backend and will fall back", "not implemented for the MPS"}},
	{id: "bnb.words", cat: CategoryOther, dev: DeviceCUDA, msg: "other.bitsandbytes", weight: wStrong,
		needles: []string{"CUDA detection failed", "libbitsandbytes_cpu", "libcudart.so not found", "CUDA Setup failed"}},
	{id: "neuron", cat: CategoryOther, dev: DeviceNeuron, msg: "other.neuron", weight: wStrong,
		needles: []string{"neuronx-cc", "neuron-cc", "NRT_", "nrt_init", "Neuron runtime", "NEURON_RT", "neuronxcc", "NERR_",
			// the Neuron device driver layer of the runtime: "ERROR  TDRV:wait_for_engine_".
			"TDRV:"},
		refine: refineNeuron},
	// A native crash reading memory (access violation, bus error,
	// segfault, in Windows' NTSTATUS number, decimal too, or POSIX
	// signals) near a device: a device error of no listed kind. Not an
	// integer divide by zero (0xC0000094): that is the program's own bug.
	{id: "crash.access-violation", cat: CategoryOther, weight: wWeak,
		needles: []string{"0xC0000005", "exit code -1073741819", "exit code 139", "Segmentation fault",
			"3221225477", "Bus error", "SIGBUS", "SIGSEGV"},
		near: []string{"GPU", "gpu", "CUDA", "cuda", "MPS", "Metal"}},
	// The kernel's OOM killer sends SIGKILL: a rank or a container ended by
	// signal 9 (exit code 137 = 128 + 9, Kubernetes' OOMKilled) ran out of
	// host memory far more often than anything else kills it.
	{id: "oom.sigkill", cat: CategoryOutOfMemory, dev: DeviceCPU, msg: "out_of_memory.cpu", weight: wStrong,
		needles: []string{"exitcode: -9", "exitcode : -9", "exit code: -9", "exit code -9", "return code = -9", "returncode=-9",
			"exit code 137", "exited with code 137", "exit status 137", "OOMKilled", "signal 9 (SIGKILL)", "Signals.SIGKILL: 9"}},
	// A container started without the NVIDIA runtime, or one that cannot
	// reach the driver, sees no GPU.
	{id: "nogpu.container", cat: CategoryNoGPUFound, dev: DeviceCUDA, weight: wPrimary,
		needles: []string{"Unknown runtime specified nvidia", "runtime name: nvidia", "could not select device driver",
			// A GPU the driver cannot open a context on.
			"Error creating CUDA context", "failed to create CUDA context", "Could not create CUDA context",
			"nvidia-container-cli: initialization error", "nvidia-container-cli: requirement error", "nvidia-container-cli: mount error"}},
	// onnxruntime without a usable GPU provider falls back to the CPU: the
	// GPU is unusable, as TensorFlow's "Cannot dlopen some GPU libraries".
	{id: "nogpu.onnxruntime", cat: CategoryNoGPUFound, dev: DeviceCUDA, weight: wStrong,
		needles: []string{"Failed to create CUDAExecutionProvider", "Failed to create TensorrtExecutionProvider",
			"Attempt to set CUDAExecutionProvider failed",
			"Failed to create ROCMExecutionProvider", "Failed to create MIGraphXExecutionProvider",
			"ExecutionProvider' is not in available provider", "ExecutionProvider is not in available provider",
			"execution provider is not enabled in this build", "CUDA wasn't able to be loaded"},
		refine: func(line string, _ []string) (Category, Device, string) {
			if containsAny(line, "ROCM", "ROCm", "MIGraphX") {
				return CategoryNoGPUFound, DeviceROCm, ""
			}
			return CategoryNoGPUFound, DeviceCUDA, ""
		}},
	// A build without the accelerator: "This CTranslate2 package was not
	// compiled with CUDA support", detectron2's "Not compiled with GPU
	// support", MXNet's "GPU is not enabled".
	{id: "nogpu.build", cat: CategoryNoGPUFound, weight: wStrong,
		needles: []string{"not compiled with", "compiled without", "is not enabled"},
		// bitsandbytes' own set-up failures are other.bitsandbytes.
		not: []string{"bitsandbytes", "libbitsandbytes"},
		re:  `(?i)(?:not compiled with|compiled without|^.*\b(?:gpu|cuda|xpu|mps|rocm|hip)\b.* is not enabled)\s*(cuda|gpu|xpu|mps|rocm|hip|metal)?`,
		refine: func(line string, sub []string) (Category, Device, string) {
			if len(sub) < 2 || sub[1] == "" {
				if !containsAny(strings.ToLower(line), "gpu is not enabled", "cuda is not enabled") {
					return "", "", ""
				}
				return CategoryNoGPUFound, DeviceCUDA, ""
			}
			return refineNoDevice(sub[1], nil)
		}},
	// PyTorch asked for a device type its build does not know: "Expected
	// one of cpu, cuda, ... device type at start of device string: mps".
	{id: "nogpu.device-string", cat: CategoryNoGPUFound, weight: wStrong,
		needles: []string{"device type at start of device string"},
		re:      `device string: ?'?(\w+)`, refine: func(_ string, sub []string) (Category, Device, string) {
			if len(sub) < 2 {
				return "", "", ""
			}
			return refineNoDevice(sub[1], nil)
		}},
	// The XLA runtime's own exception, and PyTorch/XLA's XRT client: a
	// failure of the device runtime (out-of-memory and start-up have their
	// own rules, which outweigh this one).
	{id: "xla.runtime", cat: CategoryOther, weight: wCatchAll,
		needles: []string{"XlaRuntimeError", "xrt_computation_client", "XRT session"},
		refine: func(line string, _ []string) (Category, Device, string) {
			if containsAny(line, "TPU", "tpu", "xrt_", "XRT") {
				return CategoryOther, DeviceXLA, ""
			}
			return CategoryOther, inferDevice(line), ""
		}},
	// The CUDA math libraries' own failures, in words: "cublas runtime
	// error : the GPU program failed to execute", "cuSolver internal error".
	{id: "other.cuda-libraries", cat: CategoryOther, dev: DeviceCUDA, weight: wSecondary,
		needles: []string{"cublas runtime error", "cuBLAS error", "CUBLAS error", "cublas error", "cuSolver internal error",
			"cusolver error", "cuSOLVER error", "curand error", "cuRAND error", "cufft error", "cuFFT error", "cusparse error", "cuSPARSE error"},
		refine: func(line string, _ []string) (Category, Device, string) {
			if strings.Contains(strings.ToLower(line), "cublas") {
				return CategoryOther, DeviceCUDA, "other.cublas"
			}
			return CategoryOther, DeviceCUDA, ""
		}},
	{id: "missing-kernel", cat: CategoryOther, weight: wStrong,
		needles: []string{"missing kernel for", "no kernel for"}, refine: refineMissingKernel},
	{id: "nogpu.requested", cat: CategoryNoGPUFound, dev: DeviceCUDA, weight: wPrimary,
		// Lightning: "You requested GPUs: [0] / But your machine only has: []".
		needles: []string{"machine only has: []"}},
	{id: "nogpu.infer", cat: CategoryNoGPUFound, dev: DeviceAny, weight: wPrimary,
		needles: []string{"Failed to infer device type"}},
	{id: "nogpu.words", cat: CategoryNoGPUFound, weight: wWeak, generic: true,
		// Not "Is CUDA available: False": collect_env prints it on every
		// machine without that accelerator, which is a fact, not a failure.
		needles: []string{"devices are available", "devices found", "device found", "is_available()",
			"not linked with support for", "no GPU detected", "GPU not detected", "no devices", "Failed to initialize",
			"not available", "device count is zero", "supported gpu backend", "GPU detected"},
		re:     `(?i)\b(no|not|false|fail|fails|failed|unable|cannot|can't|zero)\b`,
		refine: refineNoDevice},
	{id: "cuda.op-not-supported", cat: CategoryOther, dev: DeviceCUDA, weight: wSecondary,
		needles: []string{"operation not supported"}, also: []string{"CUDA", "cuda"}},

	// --- other device errors -------------------------------------------------------------------
	{id: "other.fabric", cat: CategoryOther, dev: DeviceCUDA, msg: "other.fabric_manager", weight: wPrimary,
		needles: []string{"system not yet initialized", "cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY"}},
	{id: "other.no-kernel-image", cat: CategoryOther, dev: DeviceCUDA, msg: "other.no_kernel_image", weight: wPrimary,
		needles: []string{"no kernel image is available for execution", "no kernel image"}},
	// PyTorch's warning that its binary has no code for this GPU: "GeForce
	// RTX 3090 with CUDA capability sm_86 is not compatible with the
	// current PyTorch installation".
	{id: "other.arch-not-built", cat: CategoryOther, dev: DeviceCUDA, msg: "other.no_kernel_image", weight: wStrong,
		needles: []string{"is not compatible with the current PyTorch installation"}},
	// MLX without Metal kernels for this GPU: "[metal::Device] Unable to load
	// kernel ...", "Unable to load function ... was not found in the library".
	{id: "other.metal-kernel", cat: CategoryOther, dev: DeviceMPS, msg: "other.no_kernel_image", weight: wStrong,
		needles: []string{"[metal::Device] Unable to load"}},
	{id: "other.shm", cat: CategoryOther, dev: DeviceAny, msg: "other.shm", weight: wPrimary,
		needles: []string{"killed by signal: Bus error", "insufficient shared memory (shm)", "out of shared memory"}},
	{id: "other.bitsandbytes", cat: CategoryOther, dev: DeviceCUDA, msg: "other.bitsandbytes", weight: wPrimary,
		needles: []string{"CUDA Setup failed despite", "Could not load bitsandbytes native library"}},
	{id: "other.nvml-unknown", cat: CategoryOther, dev: DeviceCUDA, msg: "other.nvml_unknown", weight: wPrimary,
		needles: []string{"Failed to initialize NVML: Unknown Error"}},
	{id: "other.gpu-lost", cat: CategoryOther, dev: DeviceCUDA, msg: "other.gpu_lost", weight: wPrimary,
		needles: []string{"GPU is lost", "fallen off the bus", "NVRM: Xid"}},
	{id: "other.cuda-catchall", cat: CategoryOther, dev: DeviceCUDA, weight: wCatchAll,
		needles: []string{"CUDA error:", "CUDA error ", "CUDA Error", "cuda runtime error", "CUDA failure", "CUDA kernel failed",
			"cudaError", "CUDA_ERROR_", "THCudaCheck FAIL", "Cuda kernel failed", "CUDA call failed", "DeferredCudaCallError",
			"CUDA failed with", "CUDA RT call"}},
}

// refineDevices picks the device family from "... two devices, cuda:0 and
// cpu!" or "device type cuda".
func refineDevices(line string, _ []string) (Category, Device, string) {
	return CategoryDeviceMismatch, deviceFromMismatch(line), ""
}

func deviceFromMismatch(line string) Device {
	for _, d := range mismatchDevices(line) {
		if f := family(d); f != DeviceCPU && f != DeviceAny {
			return f
		}
	}
	if i := strings.Index(line, "device type "); i >= 0 {
		if f := family(line[i+len("device type "):]); f != DeviceCPU && f != DeviceAny {
			return f
		}
	}
	return inferDevice(line)
}

// family maps a device string ("cuda:1", "mps", "xla:0", "cpu") to a Device.
func family(s string) Device {
	s = strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(s, "cuda"), strings.HasPrefix(s, "gpu"):
		return DeviceCUDA
	case strings.HasPrefix(s, "mps"), strings.HasPrefix(s, "mlx"), strings.HasPrefix(s, "metal"):
		return DeviceMPS
	case strings.HasPrefix(s, "xla"), strings.HasPrefix(s, "tpu"):
		return DeviceXLA
	case strings.HasPrefix(s, "hip"), strings.HasPrefix(s, "rocm"):
		return DeviceROCm
	case strings.HasPrefix(s, "cpu"):
		return DeviceCPU
	case strings.HasPrefix(s, "xpu"):
		return DeviceXPU
	}
	return DeviceAny
}

// refineTypes decides between a device and a dtype mismatch from two
// tensor type names: "torch.cuda.HalfTensor" vs "torch.HalfTensor" differ
// in device only; "torch.cuda.HalfTensor" vs "torch.cuda.FloatTensor" in
// dtype only.
func refineTypes(_ string, sub []string) (Category, Device, string) {
	if len(sub) < 3 {
		return CategoryDTypeMismatch, DeviceAny, ""
	}
	d1, t1 := splitTensorType(sub[1])
	d2, t2 := splitTensorType(sub[2])
	if d1 != d2 {
		dev := d1
		if dev == DeviceCPU {
			dev = d2
		}
		return CategoryDeviceMismatch, dev, ""
	}
	if t1 == t2 {
		// Same device and same type: the message is about something else
		// (layout, MKLDNN); still a type problem, not a device one.
		return CategoryDTypeMismatch, orAny(d1), ""
	}
	dev := d1
	if dev == DeviceCPU {
		dev = DeviceAny
	}
	return CategoryDTypeMismatch, dev, ""
}

// splitTensorType reads "torch.cuda.HalfTensor", "CUDAFloatTensor",
// "MPSFloatType" into a device and a dtype word.
func splitTensorType(s string) (Device, string) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "torch.")
	low := strings.ToLower(s)
	switch {
	case strings.HasPrefix(low, "cuda"):
		return DeviceCUDA, strings.TrimPrefix(s[4:], ".")
	case strings.HasPrefix(low, "mps"):
		return DeviceMPS, strings.TrimPrefix(s[3:], ".")
	case strings.HasPrefix(low, "xla"):
		return DeviceXLA, strings.TrimPrefix(s[3:], ".")
	case strings.HasPrefix(low, "hip"):
		return DeviceROCm, strings.TrimPrefix(s[3:], ".")
	}
	return DeviceCPU, s
}

func orAny(d Device) Device {
	if d == DeviceCPU {
		return DeviceAny
	}
	return d
}

func refineMPSDType(_ string, sub []string) (Category, Device, string) {
	if len(sub) > 1 && strings.EqualFold(sub[1], "BFloat16") {
		return CategoryUnsupportedDType, DeviceMPS, "unsupported_dtype.mps_bf16"
	}
	if len(sub) > 1 && strings.EqualFold(sub[1], "Double") {
		return CategoryUnsupportedDType, DeviceMPS, "unsupported_dtype.mps_float64"
	}
	return CategoryUnsupportedDType, DeviceMPS, ""
}

// refineNotImplemented reads `"addmm_impl_cpu_" not implemented for 'Half'`:
// the kernel name says which device lacks the precision.
func refineNotImplemented(_ string, sub []string) (Category, Device, string) {
	if len(sub) < 3 {
		return CategoryUnsupportedDType, DeviceAny, ""
	}
	op := strings.ToLower(sub[1])
	dev := DeviceAny
	switch {
	case strings.Contains(op, "cpu"):
		dev = DeviceCPU
	case strings.Contains(op, "cuda"):
		dev = DeviceCUDA
	case strings.Contains(op, "mps"):
		dev = DeviceMPS
	}
	half := sub[2] == "Half" || sub[2] == "BFloat16"
	if dev == DeviceAny && half {
		// A kernel name without a device ("LayerNormKernelImpl") lacking
		// half precision is a CPU kernel: CUDA builds have them all.
		dev = DeviceCPU
	}
	if dev == DeviceCPU && half {
		return CategoryUnsupportedDType, dev, "unsupported_dtype.cpu_half"
	}
	return CategoryUnsupportedDType, dev, ""
}

// inferDevice guesses the device family a line talks about.
func inferDevice(line string) Device {
	switch {
	case containsAny(line, "MPS", "mps:", "'mps'", "Metal"):
		return DeviceMPS
	case containsAny(line, "HIP", "hip", "ROCm", "rocm", "gfx"):
		return DeviceROCm
	case containsAny(line, "TPU", "XLA", "xla:", "libtpu"):
		return DeviceXLA
	case containsAny(line, "XPU", "xpu:", "'xpu'", "Level-Zero", "level_zero"):
		return DeviceXPU
	case containsAny(line, "CUDA", "cuda", "GPU", "gpu", "cuDNN", "NVIDIA"):
		return DeviceCUDA
	}
	return DeviceAny
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// compiledRule is a rule with its regexp compiled.
type compiledRule struct {
	rule
	re func() *regexp.Regexp // nil when the rule has no regexp
}

// deviceToken finds device names on a line: cpu, cuda:0, 'mps', xpu, xla.
var deviceToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(cpu|cuda|mps|xpu|xla|hip)\b`) }) // compiled on first use, not at every start

// refineTwoDevices decides a device mismatch phrased in any words ("a
// storage on different device", "device type for generator but found
// 'cpu'") from the line naming two different device families; a line
// naming one family decides nothing.
func refineTwoDevices(line string, _ []string) (Category, Device, string) {
	seen := map[Device]bool{}
	dev := DeviceAny
	for _, m := range deviceToken().FindAllString(line, 8) {
		f := family(m)
		seen[f] = true
		if f != DeviceCPU && dev == DeviceAny {
			dev = f
		}
	}
	if len(seen) < 2 {
		return "", "", ""
	}
	return CategoryDeviceMismatch, dev, ""
}
