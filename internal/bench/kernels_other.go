//go:build !amd64 && !arm64

package bench

// kernelFor offers only the portable kernels on architectures without
// hand-written ones.
func kernelFor(id string) (Kernel, bool) { return goKernel(id) }
