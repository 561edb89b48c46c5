//go:build amd64

package bench

// hostMem returns the AVX kernels where the CPU has AVX, else plain Go.
func hostMem() memImpl {
	if !CPUFeatures().AVX {
		return goMem
	}
	return memImpl{
		isa: ISAAVXMemory,
		copy: func(dst, src []float64) {
			n := len(dst) &^ 15
			copyAVX(dst[:n], src[:n])
			goMem.copy(dst[n:], src[n:])
		},
		scale: func(dst, src []float64, q float64) {
			n := len(dst) &^ 15
			scaleAVX(dst[:n], src[:n], q)
			goMem.scale(dst[n:], src[n:], q)
		},
		add: func(dst, a, b []float64) {
			n := len(dst) &^ 15
			addAVX(dst[:n], a[:n], b[:n])
			goMem.add(dst[n:], a[n:], b[n:])
		},
		triad: func(dst, b, c []float64, q float64) {
			n := len(dst) &^ 15
			triadAVX(dst[:n], b[:n], c[:n], q)
			goMem.triad(dst[n:], b[n:], c[n:], q)
		},
	}
}
