package explain

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"
)

// noisyLog builds about size bytes of realistic noise: training progress,
// NCCL INFO chatter, deprecation and CUDA warnings, paths mentioning cuda,
// and the primary error near the end.
func noisyLog(size int) []byte {
	noise := [][]byte{
		[]byte("   [Train] Epoch: [1][1/4899]  Loss:0.776 (Avg 0.7759) Dice:0.0909 (Avg 0.0909) LR 1.00e-03   (AvgTime 6.3)\n"),
		[]byte("node17-2:36754:36754 [6] NCCL INFO ncclCommInitRank comm 0xa624cf0 rank 6 nranks 8 cudaDev 6 nvmlDev 6 busId 90000 - Init START\n"),
		[]byte("/usr/local/lib/python3.8/dist-packages/torch/nn/functional.py:1805: UserWarning: nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.\n"),
		[]byte("  File \"/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 172, in _lazy_init\n"),
		[]byte("/x/torch/cuda/__init__.py:124: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11000).\n"),
		[]byte("2023-03-23 02:02:25.057202: I tensorflow/core/common_runtime/bfc_allocator.cc:1066] InUse at 703b12d00 of size 256 next 275\n"),
	}
	var b bytes.Buffer
	b.Grow(size + 1024)
	for i := 0; b.Len() < size-512; i++ {
		b.Write(noise[i%len(noise)])
	}
	b.WriteString("RuntimeError: CUDA error: device-side assert triggered\n")
	b.WriteString("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n")
	return b.Bytes()
}

// TestClassifyTenMegabytesIsBounded checks the work on a 10 MB noisy log is
// bounded in memory (not in time: timing assertions are flaky on shared CI;
// BenchmarkClassify10MB reports the speed).
func TestClassifyTenMegabytesIsBounded(t *testing.T) {
	log := noisyLog(10 << 20)
	e := Classify(log)
	if e.Category != CategoryCUDALaunchFailure {
		t.Fatalf("Category = %s (evidence %q)", e.Category, e.Evidence)
	}
	allocs := testing.AllocsPerRun(3, func() { Classify(log) })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	Classify(log)
	runtime.ReadMemStats(&after)
	bytesAllocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("10 MiB log: %.0f allocations, %d bytes allocated per Classify", allocs, bytesAllocated)
	if allocs > 5000 {
		t.Errorf("Classify made %.0f allocations on a 10 MiB log, want at most 5000", allocs)
	}
	if bytesAllocated > 4<<20 {
		t.Errorf("Classify allocated %d bytes on a 10 MiB log, want at most 4 MiB (it must not copy the log)", bytesAllocated)
	}
}

func BenchmarkClassify10MB(b *testing.B) {
	log := noisyLog(10 << 20)
	getTables()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Classify(log)
	}
}

func FuzzClassify(f *testing.F) {
	// Seed with the corpus plus edge shapes.
	if paths, err := filepath.Glob(filepath.Join(corpusDir, "*", "*.log")); err == nil {
		for i, p := range paths {
			if i%4 != 0 {
				continue
			}
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	for _, s := range []string{"", "\n", "\r\r\r", "CUDA out of memory", "[[{", "Tried to allocate 1e999 GiB (GPU 99999999999999999999;",
		"Input type (torch.cuda.) and weight type () should be the same", "found at least two devices,  and !",
		"\xff\xfeRuntimeError: CUDA error: \x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		e := classify(log, embeddedModel()) // unguarded: a panic here is a bug
		if e.Category == "" || e.Device == "" || e.MessageID == "" {
			t.Errorf("incomplete explanation %+v", e)
		}
		if len(e.Evidence) > 3 {
			t.Errorf("%d evidence lines, want at most 3", len(e.Evidence))
		}
		for _, ev := range e.Evidence {
			if len(ev) > evidenceMax {
				t.Errorf("evidence of %d bytes", len(ev))
			}
		}
		if e.Confidence < 0 || e.Confidence > 1 {
			t.Errorf("confidence %v", e.Confidence)
		}
	})
}

// denseLine is one line of n bytes packed with the same OOM message: the
// worst case for line-bound work (every hit's line is the whole input).
func denseLine(n int) []byte {
	msg := []byte("CUDA out of memory. ")
	return bytes.Repeat(msg, n/len(msg))
}

// TestClassifyDenseLineIsLinear compares the work on an 8 MB single line
// dense with one message to the work on a quarter of it: linear work
// scales by about 4, the old per-hit line scan by about 16. It counts
// allocations and compares medians of a few runs, with a wide margin, so
// a shared machine cannot make it flaky.
func TestClassifyDenseLineIsLinear(t *testing.T) {
	big, small := denseLine(8<<20), denseLine(2<<20)
	if e := Classify(big); e.Category != CategoryOutOfMemory {
		t.Fatalf("Category = %s", e.Category)
	}
	med := func(b []byte) float64 {
		var ds []float64
		for i := 0; i < 3; i++ {
			start := time.Now()
			Classify(b)
			ds = append(ds, float64(time.Since(start)))
		}
		sort.Float64s(ds)
		return ds[1]
	}
	ratio := med(big) / med(small)
	t.Logf("8 MiB dense line / 2 MiB dense line: %.1fx", ratio)
	if ratio > 10 {
		t.Errorf("work grew %.1fx for 4x the input; want about 4x (linear)", ratio)
	}
}

func BenchmarkClassifyDenseLine16MB(b *testing.B) {
	log := denseLine(16 << 20)
	getTables()
	b.SetBytes(int64(len(log)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Classify(log)
	}
}
