//go:build amd64

package bench

// kernelFor returns the implementation of id when this CPU can run it: a
// planned kernel whose instructions the CPU lacks is never executed.
func kernelFor(id string) (Kernel, bool) {
	if k, ok := goKernel(id); ok {
		return k, true
	}
	spec, ok := SpecByID(id)
	if !ok {
		return Kernel{}, false
	}
	f := CPUFeatures()
	switch spec.ISA {
	case ISAFMA3:
		if !f.FMA || !f.AVX2 {
			return Kernel{}, false
		}
	case ISAAVX512:
		if !f.AVX512F {
			return Kernel{}, false
		}
	case ISAAVX512BF:
		if !f.AVX512F || !f.AVX512BF16 {
			return Kernel{}, false
		}
	case ISAAVX512VN:
		if !f.AVX512F || !f.AVX512VNNI {
			return Kernel{}, false
		}
	default:
		return Kernel{}, false
	}
	k := Kernel{Spec: spec}
	switch id {
	case "fma_fp32/" + ISAFMA3:
		k.Run = func(n int64) {
			var x, y [8]float32
			var acc [12 * 8]float32
			fillRun32(x[:], y[:], acc[:])
			fmaF32AVX2(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkFMA(id, 8, 12, func(n int64, x, y, acc []float32) { fmaF32AVX2(n, &x[0], &y[0], &acc[0]) })
		}
	case "fma_fp64/" + ISAFMA3:
		k.Run = func(n int64) {
			var x, y [4]float64
			var acc [12 * 4]float64
			fillRun64(x[:], y[:], acc[:])
			fmaF64AVX2(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkFMA(id, 4, 12, func(n int64, x, y, acc []float64) { fmaF64AVX2(n, &x[0], &y[0], &acc[0]) })
		}
	case "fma_fp32/" + ISAAVX512:
		k.Run = func(n int64) {
			var x, y [16]float32
			var acc [12 * 16]float32
			fillRun32(x[:], y[:], acc[:])
			fmaF32AVX512(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkFMA(id, 16, 12, func(n int64, x, y, acc []float32) { fmaF32AVX512(n, &x[0], &y[0], &acc[0]) })
		}
	case "fma_fp64/" + ISAAVX512:
		k.Run = func(n int64) {
			var x, y [8]float64
			var acc [12 * 8]float64
			fillRun64(x[:], y[:], acc[:])
			fmaF64AVX512(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkFMA(id, 8, 12, func(n int64, x, y, acc []float64) { fmaF64AVX512(n, &x[0], &y[0], &acc[0]) })
		}
	case "dot_bf16/" + ISAAVX512BF:
		k.Run = func(n int64) {
			var x, y [32]uint16
			var acc [12 * 16]float32
			for i := range x {
				x[i], y[i] = BF16(1), BF16(0.0009765625)
			}
			for i := range acc {
				acc[i] = 1
			}
			dotBF16AVX512(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkBF16(id, 16, 12, func(n int64, x, y []uint16, acc []float32) { dotBF16AVX512(n, &x[0], &y[0], &acc[0]) })
		}
	case "dot_int8/" + ISAAVX512VN:
		k.Run = func(n int64) {
			var x [64]uint8
			var y [64]int8
			var acc [12 * 16]int32
			for i := range x {
				x[i], y[i] = 1, 1
			}
			dotInt8VNNI(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkInt8(id, 16, 12, func(n int64, x []uint8, y []int8, acc []int32) { dotInt8VNNI(n, &x[0], &y[0], &acc[0]) })
		}
	default:
		return Kernel{}, false
	}
	return k, true
}
