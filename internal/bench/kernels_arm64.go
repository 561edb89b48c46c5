//go:build arm64

package bench

// kernelFor returns the implementation of id when this CPU can run it.
func kernelFor(id string) (Kernel, bool) {
	if k, ok := goKernel(id); ok {
		return k, true
	}
	spec, ok := SpecByID(id)
	if !ok || spec.ISA != ISANEON || !CPUFeatures().ASIMD {
		return Kernel{}, false
	}
	k := Kernel{Spec: spec}
	switch id {
	case "fma_fp32/" + ISANEON:
		k.Run = func(n int64) {
			var x, y [4]float32
			var acc [24 * 4]float32
			fillRun32(x[:], y[:], acc[:])
			fmaF32NEON(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkFMA(id, 4, 24, func(n int64, x, y, acc []float32) { fmaF32NEON(n, &x[0], &y[0], &acc[0]) })
		}
	case "fma_fp64/" + ISANEON:
		k.Run = func(n int64) {
			var x, y [2]float64
			var acc [24 * 2]float64
			fillRun64(x[:], y[:], acc[:])
			fmaF64NEON(n, &x[0], &y[0], &acc[0])
		}
		k.Check = func() error {
			return checkFMA(id, 2, 24, func(n int64, x, y, acc []float64) { fmaF64NEON(n, &x[0], &y[0], &acc[0]) })
		}
	default:
		return Kernel{}, false
	}
	return k, true
}
