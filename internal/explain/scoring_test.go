package explain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClassifyScoring pins each part of the score on its own: a line's
// shape (exception, warning, plain), its position, the tie-break between
// equal scores, and which lines are quoted as evidence.
func TestClassifyScoring(t *testing.T) {
	type result struct {
		Category   Category
		Evidence   []string
		Confidence float64
	}
	// 60 KB of training output: one point of position bonus spans ~400
	// bytes, so two adjacent error lines below tie on score.
	var noise strings.Builder
	for i := 0; noise.Len() < 60<<10; i++ {
		fmt.Fprintf(&noise, "epoch 3 step %d loss 1.%04d lr 0.0001\n", i, i%9973)
	}
	tests := []struct {
		name string
		log  string
		want result
	}{
		{
			name: "a later warning does not take over from a plain error line of equal weight",
			log: "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity; 13.90 GiB already allocated)\n" +
				"/usr/lib/python3.10/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment\n",
			want: result{CategoryOutOfMemory, []string{"CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity; 13.90 GiB already allocated)"}, 0.95},
		},
		{
			name: "an exception line beats a later plain line of equal weight",
			log: "RuntimeError: CUDA error: an illegal memory access was encountered\n" +
				"[rank1] NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled cuda error, NCCL version 2.14.3\n",
			want: result{CategoryCUDALaunchFailure, []string{"RuntimeError: CUDA error: an illegal memory access was encountered"}, 1},
		},
		{
			name: "between hits of similar weight the one nearer the end wins",
			log: "No CUDA GPUs are available\n" +
				"2024-05-01 12:00:01.123 E external/xla/xla/stream_executor/cuda/cuda_driver.cc:1234] failed to alloc 2.00G bytes on device: CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
			want: result{CategoryOutOfMemory, []string{"2024-05-01 12:00:01.123 E external/xla/xla/stream_executor/cuda/cuda_driver.cc:1234] failed to alloc 2.00G bytes on device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"}, 0.86},
		},
		{
			name: "two equal scores on neighbouring lines go to the later line",
			log: noise.String() +
				"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n" +
				"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
			want: result{CategoryDeviceMismatch, []string{"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"}, 1},
		},
		{
			name: "a warning alone is explained with less confidence",
			log:  "/usr/lib/python3.10/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment\n",
			want: result{CategoryNoGPUFound, []string{"/usr/lib/python3.10/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment"}, 0.71},
		},
		{
			name: "evidence quotes further lines of the winning category only",
			log: "NCCL WARN Cuda failure 'out of memory'\n" +
				"/x/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: Found no NVIDIA driver on your system.\n" +
				"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled cuda error, NCCL version 2.14.3\n",
			want: result{CategoryNCCLError, []string{
				"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled cuda error, NCCL version 2.14.3",
				"NCCL WARN Cuda failure 'out of memory'",
			}, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Classify([]byte(tt.log))
			if diff := cmp.Diff(tt.want, result{e.Category, e.Evidence, e.Confidence}); diff != "" {
				t.Errorf("Classify (-want +got):\n%s", diff)
			}
		})
	}
}
