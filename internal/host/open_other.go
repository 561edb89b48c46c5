//go:build !unix

package host

const (
	oNonblock = 0
	oNofollow = 0
)
