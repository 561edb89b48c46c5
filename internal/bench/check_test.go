package bench

import (
	"strings"
	"testing"
)

// The kernel checks must catch a wrong kernel, or timing a broken one
// would report garbage as GFLOPS.
func TestChecksCatchWrongKernels(t *testing.T) {
	goodF32 := func(n int64, x, y, acc []float32) {
		for it := int64(0); it < n; it++ {
			for i := range acc {
				acc[i] += x[i%len(x)] * y[i%len(y)]
			}
		}
	}
	if err := checkFMA("go-f32", 8, 3, goodF32); err != nil {
		t.Errorf("a correct kernel failed its check: %v", err)
	}
	if err := checkFMA("noop", 8, 3, func(int64, []float32, []float32, []float32) {}); err == nil {
		t.Error("a kernel that computes nothing passed its check")
	}
	err := checkFMA("one-lane-off", 4, 2, func(n int64, x, y, acc []float64) {
		for it := int64(0); it < n; it++ {
			for i := range acc {
				acc[i] += x[i%len(x)] * y[i%len(y)]
			}
		}
		acc[5]++
	})
	if err == nil || !strings.Contains(err.Error(), "accumulator 1 lane 1") {
		t.Errorf("a kernel wrong in one lane: %v", err)
	}
	if err := checkBF16("noop", 4, 2, func(int64, []uint16, []uint16, []float32) {}); err == nil {
		t.Error("a bf16 kernel that computes nothing passed its check")
	}
	if err := checkInt8("noop", 4, 2, func(int64, []uint8, []int8, []int32) {}); err == nil {
		t.Error("an int8 kernel that computes nothing passed its check")
	}
}

func TestTheGoFallbackKernelsPassTheirChecks(t *testing.T) {
	for _, id := range []string{"fma_fp32/" + ISAGo, "fma_fp64/" + ISAGo} {
		k, ok := goKernel(id)
		if !ok {
			t.Fatalf("no Go kernel %s", id)
		}
		if err := k.Check(); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}
