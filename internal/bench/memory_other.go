//go:build !amd64

package bench

// hostMem is the plain-Go STREAM loops off amd64 (ordinary stores only).
func hostMem(bool) memImpl { return goMem }
