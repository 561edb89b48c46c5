//go:build !amd64

package bench

// hostMem is the plain-Go STREAM loops off amd64.
func hostMem() memImpl { return goMem }
