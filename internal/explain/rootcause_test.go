package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The logs are put together from lines of the corpus (testdata/logs:
// nccl_error/272-sglang-1693.log, out_of_memory/1615-*.log and the
// ProcessGroupNCCL lines of the nccl_error files), interleaved the way
// torchrun prints several ranks.
func TestRootCauseWinsOverWhatItTriggered(t *testing.T) {
	const (
		timeout = "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9141, OpType=_ALLGATHER_BASE, NumelIn=19008, NumelOut=152064, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n"
		backend = "[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
		oom     = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free.\n"
		noise   = "[rank0]:   File \"/usr/lib/python3.10/site-packages/torch/distributed/c10d_logger.py\", line 47, in wrapper\n"
	)
	tests := []struct {
		name string
		log  string
		want [2]string // category, message id
	}{
		{"a watchdog timeout explains the DistBackendError raised after it",
			timeout + strings.Repeat(noise, 20) + backend,
			[2]string{"nccl_error", "nccl_error.timeout"}},
		{"an out-of-memory on one rank explains the NCCL errors of the others",
			oom + strings.Repeat(noise, 20) + timeout + backend,
			[2]string{"out_of_memory", "out_of_memory"}},
		{"it does so also when the other ranks' errors come first in the log",
			timeout + backend + oom + "[rank1]: Traceback (most recent call last):\n",
			[2]string{"out_of_memory", "out_of_memory"}},
		{"on one process, the first CUDA error explains the faults after it",
			`ERROR: CUDA RT call "cudaMalloc(&a_new, nx * ny * sizeof(real))" in line 378 of file jacobi.cpp failed with out of memory (2).` + "\n" +
				`ERROR: CUDA RT call "cudaDeviceSynchronize()" in line 385 of file jacobi.cpp failed with an illegal memory access was encountered (700).` + "\n" +
				`ERROR: CUDA RT call "cudaStreamCreate(&compute_stream)" in line 387 of file jacobi.cpp failed with an illegal memory access was encountered (700).` + "\n",
			[2]string{"out_of_memory", "out_of_memory"}},
		{"a CUDA failure NCCL reports itself is the collective's failure",
			"aiplatform-wlf2-ge11-33:19124:19124 [0] enqueue.cc:1087 NCCL WARN Cuda failure 'misaligned address'\n" +
				"RuntimeError: NCCL Error 1: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n",
			[2]string{"nccl_error", "nccl_error"}},
		{"two independent errors of one process: the later one is what the run died of",
			"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n" +
				"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n",
			[2]string{"device_mismatch", "device_mismatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Classify([]byte(tt.log))
			if diff := cmp.Diff(tt.want, [2]string{string(e.Category), e.MessageID}); diff != "" {
				t.Errorf("Classify (-want +got):\n%s\nevidence %q", diff, e.Evidence)
			}
		})
	}
}

func TestRankOf(t *testing.T) {
	for line, want := range map[string]string{
		"[rank3]: RuntimeError: x":                        "rank3",
		"[Rank 12] Watchdog caught":                       "rank12",
		"[default3]:Traceback (most recent call last):":   "default3",
		"(EngineCore_DP0 pid=17374) ERROR 09-28 15:47:24": "pid17374",
		"(RayWorkerVllm pid=2120) INFO":                   "pid2120",
		"node17-2:36754:36754 [6] NCCL INFO Init START":   "node17-2:36754",
		"[1,70]<stdout>:[1518277500.399391] ERROR":        "mpi1,70",
		"RuntimeError: CUDA error: out of memory":         "",
		"2024-05-01 12:00:01.123 E external/xla":          "",
	} {
		if got := rankOf([]byte(line)); got != want {
			t.Errorf("rankOf(%q) = %q, want %q", line, got, want)
		}
	}
}

func FuzzRankOf(f *testing.F) {
	for _, s := range []string{"[rank3]:", "(x pid=)", "a:1:2 [3]", "[1,2]<stdout>", "[", "(", "::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { rankOf([]byte(s)) })
}
