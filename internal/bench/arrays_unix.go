//go:build unix

package bench

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// newArrays returns three float64 arrays of n elements each from one fresh
// anonymous mapping, and the function that unmaps it. Fresh pages are zero
// without being written: the Go heap would zero a large allocation that
// reuses memory an earlier test freed, touching every page from one thread
// before the test's own first touch (seconds for gigabyte arrays, outside
// any budget, and on the wrong NUMA node).
func newArrays(n int) (a, b, c []float64, free func()) {
	size := 3 * n * 8
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return heapArrays(n)
	}
	all := unsafe.Slice((*float64)(unsafe.Pointer(&mem[0])), 3*n)
	return all[:n:n], all[n : 2*n : 2*n], all[2*n:], func() { _ = unix.Munmap(mem) }
}
