//go:build amd64

package bench

//go:noescape
func copyAVX(dst, src []float64)

//go:noescape
func scaleAVX(dst, src []float64, q float64)

//go:noescape
func addAVX(dst, a, b []float64)

//go:noescape
func triadAVX(dst, b, c []float64, q float64)

//go:noescape
func copyNT(dst, src []float64)

//go:noescape
func scaleNT(dst, src []float64, q float64)

//go:noescape
func addNT(dst, a, b []float64)

//go:noescape
func triadNT(dst, b, c []float64, q float64)
