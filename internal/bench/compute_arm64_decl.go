//go:build arm64

package bench

//go:noescape
func fmaF32NEON(iters int64, x, y, acc *float32)

//go:noescape
func fmaF64NEON(iters int64, x, y, acc *float64)
