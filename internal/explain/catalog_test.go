package explain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The lines are quoted from the corpus (testdata/logs) or built from the
// catalogue's own rows; each case is one way a library's error reaches a log.
func TestCatalogueMatchesACodeWhateverItsForm(t *testing.T) {
	tests := []struct {
		name string
		line string
		want [3]string // category, device, message id
	}{
		{"a Caffe CHECK prints the runtime number and the legacy text",
			"F0601 10:27:47.313387  4577 math_functions.cpp:91] Check failed: error == cudaSuccess (4 vs. 0)  unspecified launch failure",
			[3]string{"cuda_launch_failure", "cuda", "cuda_launch_failure"}},
		{"a CHECK without text takes the numbering that has the number",
			"Check failed: error == cudaSuccess (77 vs. 0)",
			[3]string{"cuda_launch_failure", "cuda", "cuda_launch_failure.illegal_access"}},
		{"a CHECK's out of memory is out_of_memory",
			"Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
			[3]string{"out_of_memory", "cuda", "out_of_memory"}},
		{"Paddle's CUDA error(N) with the runtime text",
			"OSError: (External) Cuda error(3), initialization error.",
			[3]string{"no_gpu_found", "cuda", "no_gpu_found"}},
		{"a bare CUDA error number",
			"安装完GPU版paddle2.4.2后，运行paddle.utils.run_check()，报错CUDA error(700)",
			[3]string{"cuda_launch_failure", "cuda", "cuda_launch_failure.illegal_access"}},
		{"error# in a library's own check",
			"CUDA error in function cudaMalloc((void**) v, sizeof(T) * n) at CudaMemory.hpp:59, error# 100",
			[3]string{"no_gpu_found", "cuda", "no_gpu_found"}},
		{"the runtime text after a framework's prefix",
			"RuntimeError: CUDA error: invalid configuration argument",
			[3]string{"cuda_launch_failure", "cuda", "cuda_launch_failure"}},
		{"a status text after TensorFlow's Status:",
			"InternalError: cudaGetDevice() failed. Status: initialization error",
			[3]string{"no_gpu_found", "cuda", "no_gpu_found"}},
		{"unknown error mid-run names no listed kind",
			"c:\\jenkins\\workspace\\mxnet\\src\\storage\\pooled_storage_manager.h:143: cudaMalloc failed: unknown error",
			[3]string{"other", "cuda", "other"}},
		{"unknown error at initialisation is no usable GPU",
			"failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error",
			[3]string{"no_gpu_found", "cuda", "no_gpu_found.cuda_unknown"}},
		{"a code of no listed kind still says CUDA failed",
			"RuntimeError: CUDA failed with error invalid argument",
			[3]string{"other", "cuda", "other"}},
		{"another CUDA version's wording of the same string",
			"RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
			[3]string{"no_gpu_found", "cuda", "no_gpu_found"}},
		{"a whole short text is not the start of a longer one",
			"RuntimeError: CUDA error: operation not supported",
			[3]string{"other", "cuda", "other"}},
		{"an HSA status name alone is a ROCm error",
			"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.",
			[3]string{"rocm_hip_error", "rocm", "rocm_hip_error"}},
		{"a cuBLAS allocation failure is out_of_memory",
			"RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
			[3]string{"out_of_memory", "cuda", "out_of_memory"}},
		{"a framework message cut short by a tracker still matches",
			"# RuntimeError: Expected all tensors to be on the same device, but found at le",
			[3]string{"device_mismatch", "any", "device_mismatch"}},
		{"an XLA status with a GPU named is a device error",
			"jaxlib.xla_extension.XlaRuntimeError: INTERNAL: cuSolver internal error on GPU 0",
			[3]string{"other", "cuda", "other"}},
		{"a success name alone decides nothing",
			"assert status == cudaSuccess",
			[3]string{"unknown", "any", "unknown"}},
		{"an error number with no CUDA on the line decides nothing",
			"subprocess failed: error=3",
			[3]string{"unknown", "any", "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := classify([]byte(tt.line+"\n"), nil) // the catalogues and rules, without the model
			got := [3]string{string(e.Category), string(e.Device), e.MessageID}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify (-want +got):\n%s\nrule %s", diff, e.Rule)
			}
		})
	}
}

func TestMessageAtAcceptsACutButNotAnotherWord(t *testing.T) {
	tests := []struct {
		line, pattern string
		want          bool
	}{
		{"x NRT_RESOURCE y", "NRT_RESOURCE", true},
		{"x NRT_RESOURCE_NC y", "NRT_RESOURCE", false},
		{"Expected all tensors to be on the same device, but found at le", "Expected all tensors to be on the same device, but found at least two devices,", true},
		{"Expected all tensors to be on the same device, but found at least two other things", "Expected all tensors to be on the same device, but found at least two devices,", false},
		{"Expected all tens", "Expected all tensors to be on the same device, but found at least two devices,", false},
	}
	for _, tt := range tests {
		if got := messageAt(tt.line, tt.pattern); got != tt.want {
			t.Errorf("messageAt(%q, %q) = %v, want %v", tt.line, tt.pattern, got, tt.want)
		}
	}
}

// FuzzCatalogueLine runs every catalogue reader over arbitrary lines: they
// slice lines at offsets they compute, so they must never panic.
func FuzzCatalogueLine(f *testing.F) {
	for _, s := range []string{
		"Check failed: error == cudaSuccess (2 vs. 0)  out of memory",
		"CUDA error: 35 (0x23) cudaErrorInsufficientD",
		"hipError_t(1002)", "Status: initialization error", "error# ", "cudaError", "INTERNAL:", "nccl",
		"XlaRuntimeError: RESOURCE_EXHAUSTED: x", "CUDA failed with error ", "Error 2: out of m", "NRT_",
	} {
		f.Add(s)
	}
	c := loadCatalogue()
	f.Fuzz(func(t *testing.T, line string) {
		c.namesOnLine(line)
		c.byNumber(line)
		c.byText(line)
		c.statusOnLine(line)
		for _, m := range c.messages[:3] {
			messageAt(line, m.pattern)
		}
		Classify([]byte(line))
	})
}
