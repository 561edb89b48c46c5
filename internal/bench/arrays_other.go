//go:build !unix

package bench

// newArrays returns three arrays from the Go heap where there is no mmap.
func newArrays(n int) (a, b, c []float64, free func()) { return heapArrays(n) }
