package bench

import (
	"fmt"
	"math"
)

// memImpl is one set of STREAM kernels; each call handles one thread's
// slice of the arrays.
type memImpl struct {
	isa string
	// streaming is true for kernels with non-temporal stores.
	streaming bool
	copy      func(dst, src []float64)
	scale     func(dst, src []float64, q float64)
	add       func(dst, a, b []float64)
	triad     func(dst, b, c []float64, q float64)
}

// goMem is the portable implementation: plain loops, as STREAM's C.
var goMem = memImpl{
	isa: ISAGo,
	copy: func(dst, src []float64) {
		src = src[:len(dst)]
		for i := range dst {
			dst[i] = src[i]
		}
	},
	scale: func(dst, src []float64, q float64) {
		src = src[:len(dst)]
		for i := range dst {
			dst[i] = q * src[i]
		}
	},
	add: func(dst, a, b []float64) {
		a, b = a[:len(dst)], b[:len(dst)]
		for i := range dst {
			dst[i] = a[i] + b[i]
		}
	},
	triad: func(dst, b, c []float64, q float64) {
		b, c = b[:len(dst)], c[:len(dst)]
		for i := range dst {
			dst[i] = b[i] + q*c[i]
		}
	},
}

// Streaming reports whether the STREAM kernels should use non-temporal
// stores: when the three arrays together exceed the last-level cache, a
// write-allocate store first reads every target line from memory only to
// overwrite it, so an ordinary loop moves a third more bytes than STREAM
// counts for copy and scale. That is what glibc's memcpy avoids on copies
// larger than the cache (and what a C STREAM copy compiles to), so devctl
// does the same. When the cache size is unknown the arrays are 64 MiB
// each, larger than any common last-level cache: stream.
func Streaming(arrayBytes, llcBytes int64) bool {
	return llcBytes <= 0 || 3*arrayBytes > llcBytes
}

// streamScalar is STREAM's scalar.
const streamScalar = 3.0

// STREAM's kernel names and the bytes it counts per element (it counts
// the words a kernel names, not the write-allocate read of the target).
var streamKernels = []struct {
	name  string
	words int
}{{"copy", 2}, {"scale", 2}, {"add", 3}, {"triad", 3}}

// streamExpected replays STREAM's sequence on scalars: after init a=1,
// b=2, c=0 and a*=2, each trial runs c=a; b=q*c; c=a+b; a=b+q*c.
func streamExpected(trials int) (a, b, c float64) {
	a, b, c = 2, 2, 0
	for k := 0; k < trials; k++ {
		c = a
		b = streamScalar * c
		c = a + b
		a = b + streamScalar*c
	}
	return a, b, c
}

// checkStream compares a sample of elements with the scalar replay, as
// STREAM's checkSTREAMresults does.
func checkStream(a, b, c []float64, trials int) error {
	ea, eb, ec := streamExpected(trials)
	step := len(a)/4096 + 1
	for i := 0; i < len(a); i += step {
		for _, p := range []struct {
			name      string
			got, want float64
		}{{"a", a[i], ea}, {"b", b[i], eb}, {"c", c[i], ec}} {
			if math.Abs(p.got-p.want) > 1e-13*math.Abs(p.want) {
				return fmt.Errorf("memory kernels: %s[%d] = %g, want %g", p.name, i, p.got, p.want)
			}
		}
	}
	return nil
}

// chunk returns worker w's part of n elements split over parts workers,
// with boundaries on 16-element (128-byte) multiples so every vector
// kernel sees aligned, whole blocks except in the last part.
func chunk(n, parts, w int) (lo, hi int) {
	per := (n / parts) &^ 15
	lo = w * per
	hi = lo + per
	if w == parts-1 {
		hi = n
	}
	return lo, hi
}
