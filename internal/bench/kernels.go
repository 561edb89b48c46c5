package bench

import (
	"fmt"
	"math"
)

// Kernel is a runnable peak-compute kernel.
type Kernel struct {
	Spec KernelSpec
	// Run executes iters loop iterations on benign inputs (no denormals,
	// no overflow) and keeps its accumulators on the caller's stack.
	Run func(iters int64)
	// Check runs the kernel on known inputs and compares every lane with a
	// pure-Go reference. Inputs are small dyadic numbers so that fused and
	// unfused arithmetic agree exactly.
	Check func() error
}

// checkIters is long enough to exercise the loop and short enough that
// every partial sum stays exact.
const checkIters = 1000

func laneX(l int) float64 { return float64(l%7-3) * 0.5 }    // -1.5 .. 1.5
func laneY(l int) float64 { return float64(l%5-2)*0.25 + 1 } // 0.5 .. 1.5
func accInit(i int) float64 {
	return float64(i%13) + float64(i%3)*0.125
}

// checkFMA checks a kernel computing acc[k*lanes+l] += x[l]*y[l] for every
// accumulator k, in float32 or float64.
func checkFMA[T float32 | float64](name string, lanes, accs int, run func(n int64, x, y, acc []T)) error {
	x, y := make([]T, lanes), make([]T, lanes)
	for l := range x {
		x[l], y[l] = T(laneX(l)), T(laneY(l))
	}
	acc, want := make([]T, lanes*accs), make([]T, lanes*accs)
	for i := range acc {
		acc[i] = T(accInit(i))
		want[i] = acc[i]
	}
	for it := 0; it < checkIters; it++ {
		for i := range want {
			want[i] += x[i%lanes] * y[i%lanes]
		}
	}
	run(checkIters, x, y, acc)
	return sameAccumulators(name, lanes, acc, want)
}

// sameAccumulators compares a kernel's accumulators with the reference, and
// names the first lane that differs.
func sameAccumulators[T comparable](name string, lanes int, acc, want []T) error {
	for i := range want {
		if acc[i] != want[i] {
			return fmt.Errorf("kernel %s: accumulator %d lane %d = %v, want %v", name, i/lanes, i%lanes, acc[i], want[i])
		}
	}
	return nil
}

// BF16 converts a float32 to bfloat16 by truncation (exact for the values
// the checks use) and back.
func BF16(f float32) uint16      { return uint16(math.Float32bits(f) >> 16) }
func bf16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// checkBF16 checks a kernel computing, for each fp32 lane i of each
// accumulator, acc += x[2i]*y[2i] + x[2i+1]*y[2i+1] on bfloat16 inputs.
func checkBF16(name string, lanes, accs int, run func(n int64, x, y []uint16, acc []float32)) error {
	x, y := make([]uint16, 2*lanes), make([]uint16, 2*lanes)
	for e := range x {
		x[e], y[e] = BF16(float32(laneX(e))), BF16(float32(laneY(e+3)))
	}
	acc, want := make([]float32, lanes*accs), make([]float32, lanes*accs)
	for i := range acc {
		acc[i] = float32(accInit(i))
		want[i] = acc[i]
	}
	for it := 0; it < checkIters; it++ {
		for i := range want {
			l := i % lanes
			want[i] += bf16ToF32(x[2*l+1]) * bf16ToF32(y[2*l+1])
			want[i] += bf16ToF32(x[2*l]) * bf16ToF32(y[2*l])
		}
	}
	run(checkIters, x, y, acc)
	return sameAccumulators(name, lanes, acc, want)
}

// checkInt8 checks a kernel computing, for each int32 lane i, acc += the
// sum over j<4 of uint8(x[4i+j]) * int8(y[4i+j]) (VNNI's VPDPBUSD).
func checkInt8(name string, lanes, accs int, run func(n int64, x []uint8, y []int8, acc []int32)) error {
	x, y := make([]uint8, 4*lanes), make([]int8, 4*lanes)
	for e := range x {
		x[e] = uint8(e * 37)               // covers 0..255, large values included
		y[e] = int8(int((e*53)%256) - 128) // covers -128..127
	}
	acc, want := make([]int32, lanes*accs), make([]int32, lanes*accs)
	for i := range acc {
		acc[i] = int32(i*1000 - 50000)
		want[i] = acc[i]
	}
	for it := 0; it < checkIters; it++ {
		for i := range want {
			l := i % lanes
			for j := 0; j < 4; j++ {
				want[i] += int32(x[4*l+j]) * int32(y[4*l+j])
			}
		}
	}
	run(checkIters, x, y, acc)
	return sameAccumulators(name, lanes, acc, want)
}

// fmaGo is the portable fallback: eight independent chains of a = a*x + y
// that the compiler keeps in registers (and fuses where the target has
// FMA). It cannot be hoisted: every step depends on the last. float32 and
// float64 get separate instantiations, so neither pays for the other.
func fmaGo[T float32 | float64](iters int64, x, y T, acc *[8]T) {
	a0, a1, a2, a3, a4, a5, a6, a7 := acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
	for i := int64(0); i < iters; i++ {
		a0 = a0*x + y
		a1 = a1*x + y
		a2 = a2*x + y
		a3 = a3*x + y
		a4 = a4*x + y
		a5 = a5*x + y
		a6 = a6*x + y
		a7 = a7*x + y
	}
	acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7] = a0, a1, a2, a3, a4, a5, a6, a7
}

// goKernel returns the portable kernels, available on every architecture.
func goKernel(id string) (Kernel, bool) {
	spec, ok := SpecByID(id)
	if !ok {
		return Kernel{}, false
	}
	switch id {
	case "fma_fp32/" + ISAGo:
		return Kernel{Spec: spec,
			Run: func(n int64) {
				acc := [8]float32{1, 2, 3, 4, 5, 6, 7, 8}
				fmaGo(n, 0.999, 0.001, &acc)
			},
			Check: func() error {
				var a [8]float32
				for i := range a {
					a[i] = float32(accInit(i))
				}
				want := a
				for it := 0; it < checkIters; it++ {
					for i := range want {
						want[i] = want[i]*1 + 0.5
					}
				}
				fmaGo(checkIters, 1, 0.5, &a)
				if a != want {
					return fmt.Errorf("kernel %s: got %v, want %v", id, a, want)
				}
				return nil
			}}, true
	case "fma_fp64/" + ISAGo:
		return Kernel{Spec: spec,
			Run: func(n int64) {
				acc := [8]float64{1, 2, 3, 4, 5, 6, 7, 8}
				fmaGo(n, 0.999, 0.001, &acc)
			},
			Check: func() error {
				var a [8]float64
				for i := range a {
					a[i] = accInit(i)
				}
				want := a
				for it := 0; it < checkIters; it++ {
					for i := range want {
						want[i] = want[i]*1 + 0.5
					}
				}
				fmaGo(checkIters, 1, 0.5, &a)
				if a != want {
					return fmt.Errorf("kernel %s: got %v, want %v", id, a, want)
				}
				return nil
			}}, true
	}
	return Kernel{}, false
}

// fillRun32 sets benign timing inputs: acc grows by a small step and never
// reaches a denormal or infinity however long the loop runs.
func fillRun32(x, y, acc []float32) {
	for i := range x {
		x[i], y[i] = 1, 1.0/1024
	}
	for i := range acc {
		acc[i] = 1
	}
}

// fillRun64 is fillRun32 for float64.
func fillRun64(x, y, acc []float64) {
	for i := range x {
		x[i], y[i] = 1, 1.0/1024
	}
	for i := range acc {
		acc[i] = 1
	}
}
