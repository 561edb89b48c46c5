//go:build amd64

package bench

//go:noescape
func fmaF32AVX2(iters int64, x, y, acc *float32)

//go:noescape
func fmaF64AVX2(iters int64, x, y, acc *float64)

//go:noescape
func fmaF32AVX512(iters int64, x, y, acc *float32)

//go:noescape
func fmaF64AVX512(iters int64, x, y, acc *float64)

//go:noescape
func dotBF16AVX512(iters int64, x, y *uint16, acc *float32)

//go:noescape
func dotInt8VNNI(iters int64, x *uint8, y *int8, acc *int32)
