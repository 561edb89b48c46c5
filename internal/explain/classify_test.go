package explain

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// The lines below are quoted from the corpus (testdata/logs, sources in
// its index.tsv); each case checks one rule family, without the learned
// fallback (TestLOSO and TestModelAnswersOnlyWhenConfident test that).
func TestClassifyCategories(t *testing.T) {
	tests := []struct {
		name string
		log  string
		cat  Category
		dev  Device
		msg  string
	}{
		{"a PyTorch CUDA out-of-memory is out_of_memory on cuda",
			"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacty of 6.00 GiB of which 0 bytes is free.",
			CategoryOutOfMemory, DeviceCUDA, "out_of_memory"},
		{"a HIP out-of-memory is out_of_memory on rocm",
			"torch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.31 GiB. GPU 0 has a total capacity of 128.00 GiB of which 780.24 MiB is free.",
			CategoryOutOfMemory, DeviceROCm, "out_of_memory.rocm"},
		{"an MPS backend out-of-memory is out_of_memory on mps",
			"RuntimeError: MPS backend out of memory (MPS allocated: 7.23 GB, other allocations: 1.54 GB, max allowed: 9.07 GB). Tried to allocate 896.00 MB on private pool.",
			CategoryOutOfMemory, DeviceMPS, "out_of_memory.mps"},
		{"a TensorFlow OOM on a GPU allocator is out_of_memory on cuda",
			"ResourceExhaustedError: OOM when allocating tensor with shape[25088,4096] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
			CategoryOutOfMemory, DeviceCUDA, "out_of_memory.tensorflow"},
		{"XLA's out of memory while trying to allocate is xla_resource_exhausted",
			"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.",
			CategoryXLAResourceExhausted, DeviceXLA, "xla_resource_exhausted"},
		{"a TPU HBM reservation failure is xla_resource_exhausted",
			"RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible. There are 8.97G free, 0B reserved, and 8.97G reservable.",
			CategoryXLAResourceExhausted, DeviceXLA, "xla_resource_exhausted"},
		{"tensors on cpu and cuda:0 are a device_mismatch on cuda",
			"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! (when checking argument for argument mat2 in method wrapper_CUDA_mm)",
			CategoryDeviceMismatch, DeviceCUDA, "device_mismatch"},
		{"a cuda input with a cpu weight is a device_mismatch, not a dtype one",
			"RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.HalfTensor) should be the same",
			CategoryDeviceMismatch, DeviceCUDA, "device_mismatch"},
		{"half input with a float weight on cuda is a dtype_mismatch",
			"RuntimeError: Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same",
			CategoryDTypeMismatch, DeviceCUDA, "dtype_mismatch"},
		{"expected scalar type with no device named is a dtype_mismatch on any device",
			"RuntimeError: expected scalar type Float but found Half",
			CategoryDTypeMismatch, DeviceAny, "dtype_mismatch"},
		{"mat1 and mat2 dtypes differing is a dtype_mismatch",
			"RuntimeError: mat1 and mat2 must have the same dtype",
			CategoryDTypeMismatch, DeviceAny, "dtype_mismatch"},
		{"bfloat16 on MPS is unsupported_dtype on mps",
			"TypeError: BFloat16 is not supported on MPS",
			CategoryUnsupportedDType, DeviceMPS, "unsupported_dtype.mps_bf16"},
		{"float64 on MPS is unsupported_dtype on mps",
			"TypeError: Cannot convert a MPS Tensor to float64 dtype as the MPS framework doesn't support float64. Please use float32 instead.",
			CategoryUnsupportedDType, DeviceMPS, "unsupported_dtype.mps_float64"},
		{"a half CPU kernel is unsupported_dtype on cpu",
			`RuntimeError: "addmm_impl_cpu_" not implemented for 'Half'`,
			CategoryUnsupportedDType, DeviceCPU, "unsupported_dtype.cpu_half"},
		{"placeholder storage is mps_placeholder_storage",
			"RuntimeError: Placeholder storage has not been allocated on MPS device!",
			CategoryMPSPlaceholderStorage, DeviceMPS, "mps_placeholder_storage"},
		{"an operator missing on MPS is mps_unsupported_op",
			"NotImplementedError: The operator 'aten::upsample_bicubic2d.out' is not currently implemented for the MPS device.",
			CategoryMPSUnsupportedOp, DeviceMPS, "mps_unsupported_op"},
		{"the SparseMPS backend is mps_unsupported_op",
			"NotImplementedError: Could not run 'aten::empty.memory_format' with arguments from the 'SparseMPS' backend.",
			CategoryMPSUnsupportedOp, DeviceMPS, "mps_unsupported_op.sparse"},
		{"a driver too old is cuda_driver_mismatch",
			"RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
			CategoryCUDADriverMismatch, DeviceCUDA, "cuda_driver_mismatch"},
		{"an NVML version mismatch is cuda_driver_mismatch",
			"Failed to initialize NVML: Driver/library version mismatch",
			CategoryCUDADriverMismatch, DeviceCUDA, "cuda_driver_mismatch.nvml"},
		{"no NVIDIA driver is no_gpu_found",
			"RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver",
			CategoryNoGPUFound, DeviceCUDA, "no_gpu_found"},
		{"a CPU-only torch is no_gpu_found",
			"AssertionError: Torch not compiled with CUDA enabled",
			CategoryNoGPUFound, DeviceCUDA, "no_gpu_found.cpu_build"},
		{"CUDA unknown error is no_gpu_found",
			"RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment",
			CategoryNoGPUFound, DeviceCUDA, "no_gpu_found.cuda_unknown"},
		{"a device-side assert is cuda_launch_failure",
			"RuntimeError: CUDA error: device-side assert triggered",
			CategoryCUDALaunchFailure, DeviceCUDA, "cuda_launch_failure"},
		{"an illegal memory access is cuda_launch_failure",
			"RuntimeError: CUDA error: an illegal memory access was encountered",
			CategoryCUDALaunchFailure, DeviceCUDA, "cuda_launch_failure.illegal_access"},
		{"a cuDNN status is cudnn_error",
			"RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
			CategoryCUDNNError, DeviceCUDA, "cudnn_error"},
		{"an NCCL system error is nccl_error",
			"RuntimeError: NCCL Error 2: unhandled system error",
			CategoryNCCLError, DeviceCUDA, "nccl_error"},
		{"a collective timeout is nccl_error",
			"[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE)",
			CategoryNCCLError, DeviceCUDA, "nccl_error.timeout"},
		{"a TPU in use is xla_tpu_init",
			"RuntimeError: Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by process with pid 2718466.",
			CategoryXLATPUInit, DeviceXLA, "xla_tpu_init.busy"},
		{"a TPU topology failure is xla_tpu_init",
			"RuntimeError: Unable to initialize backend 'tpu': INTERNAL: Failed to get global TPU topology.",
			CategoryXLATPUInit, DeviceXLA, "xla_tpu_init"},
		{"no code object for the AMD GPU is rocm_hip_error",
			"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
			CategoryROCmHIPError, DeviceROCm, "rocm_hip_error.no_binary"},
		{"no access to /dev/kfd is rocm_hip_error",
			"Unable to open /dev/kfd read-write: Permission denied",
			CategoryROCmHIPError, DeviceROCm, "rocm_hip_error.kfd"},
		{"error 802 is other on cuda (fabric manager)",
			"RuntimeError: cuda runtime error (802) : system not yet initialized at THCGeneral.cpp:50",
			CategoryOther, DeviceCUDA, "other.fabric_manager"},
		{"a dataloader bus error is other (shared memory)",
			"RuntimeError: DataLoader worker (pid 46794) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory.",
			CategoryOther, DeviceAny, "other.shm"},
		{"an unrecognised CUDA error is other",
			"RuntimeError: CUDA error: operation not permitted when stream is capturing",
			CategoryOther, DeviceCUDA, "other"},
		// The generalising mechanisms, each on a line from the training set.
		{"case does not matter: NO CUDA GPUs is no_gpu_found",
			"RuntimeError: NO CUDA GPUs are available",
			CategoryNoGPUFound, DeviceCUDA, "no_gpu_found"},
		{"CUDA error code 2 is out_of_memory whatever the wording",
			"CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory",
			CategoryOutOfMemory, DeviceCUDA, "out_of_memory"},
		{"CUDA failure 35 is cuda_driver_mismatch",
			"onnxruntime::CudaCall CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
			CategoryCUDADriverMismatch, DeviceCUDA, "cuda_driver_mismatch"},
		{"Cuda failure 700 is an illegal address",
			"[BUG] Cuda failure 700 when use deepcompile with zero stage 3",
			CategoryCUDALaunchFailure, DeviceCUDA, "cuda_launch_failure.illegal_access"},
		{"hipError_t(1002) is out_of_memory on rocm",
			"mnist.py: failed to allocate 8.00G from device: hipError_t(1002)",
			CategoryOutOfMemory, DeviceROCm, "out_of_memory.rocm"},
		{"a CUDA invalid device function is not a ROCm error",
			"RuntimeError: cuda runtime error (8) : invalid device function at /x/THCTensorMathPointwise.cu:247",
			CategoryOther, DeviceCUDA, "other.no_kernel_image"},
		{"a HIP invalid device function is a ROCm error",
			"RuntimeError: HIP error: invalid device function",
			CategoryROCmHIPError, DeviceROCm, "rocm_hip_error.no_binary"},
		{"a GPU memory access fault is rocm_hip_error",
			"Memory access fault by GPU node-2 (Agent handle: 0x56468ab3bb50) on address 0x7fe55fb03000. Reason: Page not present or supervisor privilege.",
			CategoryROCmHIPError, DeviceROCm, "rocm_hip_error"},
		{"an application Xid line is other with the Xid's meaning",
			"[31543.449443] NVRM: Xid (PCI:0000:01:00): 31, Ch 0000003a, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted",
			CategoryOther, DeviceCUDA, "other.xid_app"},
		{"Xid 79 is a GPU lost",
			"NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus",
			CategoryOther, DeviceCUDA, "other.gpu_lost"},
		{"a bare Killed line is the host OOM killer",
			"classes\n['background']\n\n**Killed**",
			CategoryOutOfMemory, DeviceCPU, "out_of_memory.cpu"},
		{"a tensor type naming cuda against a cpu weight is a device_mismatch",
			"RuntimeError: Expected object of backend CUDA but got backend CPU for argument #3 'index'",
			CategoryDeviceMismatch, DeviceCUDA, "device_mismatch"},
		{"an overrideable op missing is mps_unsupported_op",
			"NotImplementedError: convolution_overrideable not implemented. You are likely triggering this with tensor backend other than CPU/CUDA/MKLDNN",
			CategoryMPSUnsupportedOp, DeviceMPS, "mps_unsupported_op"},
		{"an op that needs Ampere is unsupported_dtype for the compute capability",
			"RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
			CategoryUnsupportedDType, DeviceCUDA, "unsupported_dtype.compute_capability"},
		{"a launcher's GPU check is no_gpu_found",
			"RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable this check",
			CategoryNoGPUFound, DeviceCUDA, "no_gpu_found"},
		{"llama.cpp's cudaMalloc failure is out_of_memory on cuda",
			"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 35533.34 MiB on device 0: cudaMalloc failed: out of memory",
			CategoryOutOfMemory, DeviceCUDA, "out_of_memory"},
		{"TensorFlow's convolution algorithm failure is cudnn_error",
			"UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize",
			CategoryCUDNNError, DeviceCUDA, "cudnn_error"},
		{"an XRT mesh failure is xla_tpu_init",
			"Failed to connect to client mesh master: d7c1c93dfe8c:56419",
			CategoryXLATPUInit, DeviceXLA, "xla_tpu_init"},
		{"an Intel UR out-of-resources is other on xpu",
			"RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
			CategoryOther, DeviceXPU, "other.xpu"},
		{"a Triton shared-memory limit is cuda_launch_failure",
			"triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 49152.",
			CategoryCUDALaunchFailure, DeviceCUDA, "cuda_launch_failure.resources"},
		{"a storage set across devices is a device_mismatch on the non-cpu device",
			`Error in (function (self, device)  : Attempted to set the storage of a tensor on device "cpu" to a storage on different device "mps:0".`,
			CategoryDeviceMismatch, DeviceMPS, "device_mismatch"},
		{"a generator on the wrong device is a device_mismatch",
			"RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'",
			CategoryDeviceMismatch, DeviceCUDA, "device_mismatch"},
		{"a line naming one device only decides nothing",
			"INFO: model and data are on the same device (cuda:0)",
			CategoryUnknown, DeviceAny, "unknown"},
		{"JAX's DNN library failure is cudnn_error",
			"jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above for more details.",
			CategoryCUDNNError, DeviceCUDA, "cudnn_error"},
		{"a loader's memory check naming system memory is out_of_memory on cpu",
			`"model requires more system memory (5.3 GiB) than is available (3.3 GiB)"`,
			CategoryOutOfMemory, DeviceCPU, "out_of_memory.cpu"},
		{"a half-precision kernel named without a device is a CPU kernel",
			`RuntimeError: "LayerNormKernelImpl" not implemented for 'Half'`,
			CategoryUnsupportedDType, DeviceCPU, "unsupported_dtype.cpu_half"},
		{"a gRPC connection failure in a TPU job is xla_tpu_init",
			"# Colab training with TPU gives error\nUnavailableError: {{function_node __inference_train_function_34573}} failed to connect to all addresses",
			CategoryXLATPUInit, DeviceXLA, "xla_tpu_init"},
		{"the same gRPC failure with no TPU around is not a TPU error",
			"UnavailableError: {{function_node __inference_train_function_34573}} failed to connect to all addresses",
			CategoryUnknown, DeviceAny, "unknown"},
		{"no accelerator devices of a kind is no_gpu_found for that kind",
			"RuntimeError: No XPU devices are available.",
			CategoryNoGPUFound, DeviceXPU, "no_gpu_found"},
		{"Neuron runtime status 4 is an allocation failure",
			`RuntimeError: nrt_load_collectives status=4 message="Allocation Failure"`,
			CategoryOutOfMemory, DeviceNeuron, "out_of_memory"},
		{"a Windows access violation in a GPU run is a device error",
			"When I was training with gpu, there is a error :\nProcess finished with exit code -1073741819 (0xC0000005)",
			CategoryOther, DeviceCUDA, "other"},
		{"an error mentioned as advice is not a failure",
			"If you get `CUDA error: invalid device function` errors, the above might be the cause",
			CategoryUnknown, DeviceAny, "unknown"},
		{"the first device error is the root cause, not the watchdog after it",
			"[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n" +
				"[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE)\n",
			CategoryCUDALaunchFailure, DeviceCUDA, "cuda_launch_failure.illegal_access"},
		{"Lightning's accelerator class name names the missing device",
			"pytorch_lightning.utilities.exceptions.MisconfigurationException: TPUAccelerator can not run on your system since the accelerator is not available.",
			CategoryNoGPUFound, DeviceXLA, "no_gpu_found"},
		{"Lightning's requested-but-absent GPU list is no_gpu_found",
			"MisconfigurationException:\n            You requested GPUs: [0]\n            But your machine only has: []\n",
			CategoryNoGPUFound, DeviceCUDA, "no_gpu_found"},
		{"TensorFlow skipping the GPU for missing libraries is no_gpu_found",
			"W tensorflow/core/common_runtime/gpu/gpu_device.cc:1956] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU.\nSkipping registering GPU devices...\n",
			CategoryNoGPUFound, DeviceCUDA, "no_gpu_found.tf_libraries"},
		{"JAX's backend summary yields to the cuInit cause before it",
			"E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized\njaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: No visible GPU devices.\n",
			CategoryOther, DeviceCUDA, "other.fabric_manager"},
		{"a torch.cuda call handed the CPU is device_mismatch",
			"    raise ValueError('Expected a cuda device, but got: {}'.format(device))\nValueError: Expected a cuda device, but got: cpu\n",
			CategoryDeviceMismatch, DeviceCUDA, "device_mismatch"},
		{"an NCCL InfiniBand completion error is nccl_error",
			"NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)",
			CategoryNCCLError, DeviceCUDA, "nccl_error"},
		{"a SYCL Native API failure is an XPU error",
			"Native API failed. Native API returns: -5 (CL_OUT_OF_RESOURCES) -5 (CL_OUT_OF_RESOURCES)",
			CategoryOther, DeviceXPU, "other.xpu"},
		{"Paddle's allocator check is out_of_memory",
			"paddle.fluid.core.EnforceNotMet: enforce allocating <= available failed, 10513462067 > 1369702144",
			CategoryOutOfMemory, DeviceAny, "out_of_memory"},
		{"a Python import error is unknown",
			"Traceback (most recent call last):\n  File \"train.py\", line 53, in <module>\n    import debug\nModuleNotFoundError: No module named 'debug'",
			CategoryUnknown, DeviceAny, "unknown"},
		{"an empty log is unknown", "", CategoryUnknown, DeviceAny, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := classify([]byte(tt.log), nil) // the rules and catalogues; the model has TestLOSO
			got := [3]string{string(e.Category), string(e.Device), e.MessageID}
			want := [3]string{string(tt.cat), string(tt.dev), tt.msg}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Classify (-want +got):\n%s\nevidence: %q", diff, e.Evidence)
			}
		})
	}
}

func TestClassifyPrimaryErrorWins(t *testing.T) {
	tests := []struct {
		name string
		log  string
		cat  Category
		line string
	}{
		{
			name: "a device-side assert beats an earlier CUDA warning",
			log: `/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA initialization: Found no NVIDIA driver on your system.
epoch 1 step 10 loss 2.31
Traceback (most recent call last):
  File "train.py", line 214, in train_one_epoch
    total_loss += loss.item() * batch_size
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.`,
			cat:  CategoryCUDALaunchFailure,
			line: "RuntimeError: CUDA error: device-side assert triggered",
		},
		{
			name: "the final exception of the last traceback beats an earlier handled one",
			log: `Traceback (most recent call last):
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free.
retrying with a smaller batch
Traceback (most recent call last):
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!`,
			cat:  CategoryDeviceMismatch,
			line: "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
		},
		{
			name: "a warning after the error does not take over",
			log: `RuntimeError: CUDA out of memory. Tried to allocate 1.12 MiB (GPU 0; 22.37 GiB total capacity; 15.87 GiB already allocated; 3.56 MiB free; 787.74 MiB cached)
/usr/lib/python3.10/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment`,
			cat:  CategoryOutOfMemory,
			line: "RuntimeError: CUDA out of memory. Tried to allocate 1.12 MiB (GPU 0; 22.37 GiB total capacity; 15.87 GiB already allocated; 3.56 MiB free; 787.74 MiB cached)",
		},
		{
			name: "a specific error beats the generic CUDA error on the same line",
			log:  "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported",
			cat:  CategoryOutOfMemory,
			line: "RuntimeError: CUDA error: out of memory",
		},
		{
			name: "deprecation noise and a non-device error after a device error leave the device error",
			log: `FutureWarning: The module torch.distributed.launch is deprecated
RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error
During handling of the above exception, another exception occurred:
KeyError: 'LOCAL_RANK'`,
			cat:  CategoryNCCLError,
			line: "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Classify([]byte(tt.log))
			if e.Category != tt.cat {
				t.Fatalf("Category = %s, want %s (evidence %q)", e.Category, tt.cat, e.Evidence)
			}
			if len(e.Evidence) == 0 || e.Evidence[0] != tt.line {
				t.Errorf("primary evidence = %q, want %q", e.Evidence, tt.line)
			}
		})
	}
}

// A long real-shaped log: thousands of lines of training noise and
// warnings, the error, then more noise.
func TestClassifyLongNoisyLog(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 5000; i++ {
		b.WriteString("   [Train] Epoch: [1][1/4899]  Loss:0.776 (Avg 0.7759) Dice:0.0909 (Avg 0.0909) LR 1.00e-03   (AvgTime 6.3)\n")
		if i%500 == 0 {
			b.WriteString("/usr/local/lib/python3.8/dist-packages/torch/nn/functional.py:1805: UserWarning: nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.\n")
			b.WriteString("/usr/local/lib/python3.8/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11000).\n")
		}
	}
	b.WriteString("Traceback (most recent call last):\n  File \"train.py\", line 128, in train_net\n    loss.backward()\n")
	b.WriteString("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free. Including non-PyTorch memory, this process has 14.74 GiB memory in use.\n")
	for i := 0; i < 200; i++ {
		b.WriteString("wandb: Waiting for W&B process to finish... (success).\n")
	}
	e := Classify([]byte(b.String()))
	if e.Category != CategoryOutOfMemory || e.Device != DeviceCUDA {
		t.Fatalf("got %s/%s, want out_of_memory/cuda (evidence %q)", e.Category, e.Device, e.Evidence)
	}
	if e.Line != 5000+20+4 {
		t.Errorf("Line = %d, want %d", e.Line, 5000+20+4)
	}
	got := e.Message(NewCatalog(), "en").Explanation
	if !strings.Contains(got, "requested 20.0 MiB with 3.1 MiB free of 14.75 GiB on GPU 0") {
		t.Errorf("explanation does not quote the numbers: %q", got)
	}
}

func TestClassifyLineWithoutNewlinesIsBounded(t *testing.T) {
	// A 1 MiB log with no newline at all (a progress bar redrawn with \r
	// stripped) must still be read cheaply and quote a short evidence.
	log := strings.Repeat("x", 1<<19) + " RuntimeError: CUDA error: device-side assert triggered " + strings.Repeat("y", 1<<19)
	e := Classify([]byte(log))
	if e.Category != CategoryCUDALaunchFailure {
		t.Fatalf("Category = %s", e.Category)
	}
	if len(e.Evidence[0]) > evidenceMax {
		t.Errorf("evidence is %d bytes, want at most %d", len(e.Evidence[0]), evidenceMax)
	}
}

func TestClassifyQuotesLastExceptionForUnknown(t *testing.T) {
	log := "Traceback (most recent call last):\n  File \"inference.py\", line 32, in main\n    model.load_state_dict(checkpoint['state_dict'])\nKeyError: 'state_dict'\n"
	e := Classify([]byte(log))
	want := Explanation{Category: CategoryUnknown, Device: DeviceAny, MessageID: "unknown",
		Evidence: []string{"KeyError: 'state_dict'"}, Line: 4, DecidedBy: DecidedByNone}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Classify (-want +got):\n%s", diff)
	}
}

func TestClassifyReaderKeepsTheTail(t *testing.T) {
	log := strings.Repeat("noise line\n", 10) + "RuntimeError: CUDA error: device-side assert triggered\n"
	e, err := ClassifyReader(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if e.Category != CategoryCUDALaunchFailure {
		t.Errorf("Category = %s", e.Category)
	}
	b, dropped, err := readTail(strings.NewReader("first line\nsecond line\nthird\n"), 12)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("third\n", string(b)); diff != "" {
		t.Errorf("readTail (-want +got):\n%s", diff)
	}
	if dropped != 2 {
		t.Errorf("readTail dropped %d lines, want 2", dropped)
	}
}

func TestLineNumbersCountFromTheStartOfALongStream(t *testing.T) {
	const noise = 4 << 20 // lines of 10 bytes: 40 MiB, past MaxTail
	log := strings.Repeat("noise lin\n", noise) + "RuntimeError: CUDA error: device-side assert triggered\n"
	e, err := ClassifyReader(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if e.Line != noise+1 {
		t.Errorf("Line = %d, want %d", e.Line, noise+1)
	}
}

func TestLineKinds(t *testing.T) {
	tests := []struct {
		name string
		line string
		want lineKind
	}{
		{"a Python exception line", "RuntimeError: CUDA error: device-side assert triggered", kindException},
		{"a dotted exception class", "torch.cuda.OutOfMemoryError: CUDA out of memory.", kindException},
		{"an exception in markdown bold", "**RuntimeError: CUDA error: device-side assert triggered**", kindException},
		{"an exception after a rank prefix", "[rank0]: RuntimeError: NCCL error", kindException},
		{"a C++ what()", "  what():  Error (gpu_burn-drv.cpp:298): system not yet initialized", kindException},
		{"a glog fatal line", "F0402 19:17:15.304689 15412 im2col.cu:54] Cuda kernel failed.", kindException},
		{"a UserWarning", "/x/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: CUDA unknown error", kindWarning},
		{"a glog warning", "W0323 21:57:08.4 ProcessGroupNCCL.cpp:1538] heart beat", kindWarning},
		{"a plain log line", "Loading model: unet", kindPlain},
		{"prose mentioning an error", "I get this error when running the script", kindPlain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kindOf([]byte(tt.line)); got != tt.want {
				t.Errorf("kindOf(%q) = %d, want %d", tt.line, got, tt.want)
			}
		})
	}
}

func TestEveryRuleCompilesAndIsReachable(t *testing.T) {
	c := getTables()
	seen := map[string]bool{}
	for _, r := range c.rules {
		if seen[r.id] {
			t.Errorf("rule id %q is used twice", r.id)
		}
		seen[r.id] = true
		if len(r.needles) == 0 {
			t.Errorf("rule %q has no needle", r.id)
		}
		if r.rule.re != "" {
			if _, err := regexp.Compile(r.rule.re); err != nil {
				t.Errorf("rule %q: %v", r.id, err)
			}
		}
		valid := false
		for _, cat := range Categories() {
			if r.cat == cat {
				valid = true
			}
		}
		if !valid || r.cat == CategoryUnknown {
			t.Errorf("rule %q has category %q", r.id, r.cat)
		}
	}
}

func TestReadTailWrapsTheRingAtAnyReadSize(t *testing.T) {
	var log strings.Builder
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&log, "line %d of a long job log\n", i)
	}
	in := log.String()
	for _, max := range []int{7, 64, 1000, len(in) - 1, len(in), len(in) + 5} {
		want := in
		if len(in) > max {
			want = in[len(in)-max:]
			want = want[strings.IndexByte(want, '\n')+1:]
		}
		for name, r := range map[string]io.Reader{
			"one byte at a time": iotest.OneByteReader(strings.NewReader(in)),
			"in big reads":       strings.NewReader(in),
			"in half reads":      iotest.HalfReader(strings.NewReader(in)),
		} {
			got, dropped, err := readTail(r, max)
			if err != nil {
				t.Fatal(err)
			}
			if wantDropped := strings.Count(in[:len(in)-len(want)], "\n"); dropped != wantDropped {
				t.Errorf("max %d, %s: dropped %d lines, want %d", max, name, dropped, wantDropped)
			}
			if string(got) != want {
				t.Errorf("max %d, %s: got %d bytes ending %q, want %d bytes", max, name, len(got), tail(string(got)), len(want))
			}
		}
	}
}

func tail(s string) string {
	if len(s) > 30 {
		return s[len(s)-30:]
	}
	return s
}
