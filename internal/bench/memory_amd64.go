//go:build amd64

package bench

import "unsafe"

// avxMem is one set of AVX STREAM kernels; each handles len(dst) rounded
// down to 16 elements and leaves the rest to the Go loops.
type avxMem struct {
	copy  func(dst, src []float64)
	scale func(dst, src []float64, q float64)
	add   func(dst, a, b []float64)
	triad func(dst, b, c []float64, q float64)
}

var (
	avxCached   = avxMem{copyAVX, scaleAVX, addAVX, triadAVX}
	avxStreamed = avxMem{copyNT, scaleNT, addNT, triadNT}
)

// hostMem returns the AVX kernels where the CPU has AVX, else plain Go.
// With streaming set it returns the kernels with non-temporal stores.
func hostMem(streaming bool) memImpl {
	if !CPUFeatures().AVX {
		return goMem
	}
	k, isa := avxCached, ISAAVXMemory
	if streaming {
		k, isa = avxStreamed, ISAAVXMemoryNT
	}
	// split returns the vector part [h, n) of dst: a head up to a 32-byte
	// boundary (streaming stores need aligned targets) and whole 16-element
	// blocks; the Go loops do the head and the tail.
	split := func(dst []float64) (h, n int) {
		if streaming {
			h = min(int((32-uintptr(unsafe.Pointer(unsafe.SliceData(dst)))&31)&31)/8, len(dst))
		}
		return h, h + (len(dst)-h)&^15
	}
	return memImpl{
		isa:       isa,
		streaming: streaming,
		copy: func(dst, src []float64) {
			h, n := split(dst)
			goMem.copy(dst[:h], src[:h])
			k.copy(dst[h:n], src[h:n])
			goMem.copy(dst[n:], src[n:])
		},
		scale: func(dst, src []float64, q float64) {
			h, n := split(dst)
			goMem.scale(dst[:h], src[:h], q)
			k.scale(dst[h:n], src[h:n], q)
			goMem.scale(dst[n:], src[n:], q)
		},
		add: func(dst, a, b []float64) {
			h, n := split(dst)
			goMem.add(dst[:h], a[:h], b[:h])
			k.add(dst[h:n], a[h:n], b[h:n])
			goMem.add(dst[n:], a[n:], b[n:])
		},
		triad: func(dst, b, c []float64, q float64) {
			h, n := split(dst)
			goMem.triad(dst[:h], b[:h], c[:h], q)
			k.triad(dst[h:n], b[h:n], c[h:n], q)
			goMem.triad(dst[n:], b[n:], c[n:], q)
		},
	}
}
