//go:build unix

package host

import "syscall"

const (
	oNonblock = syscall.O_NONBLOCK
	oNofollow = syscall.O_NOFOLLOW
)
