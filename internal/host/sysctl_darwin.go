//go:build darwin

package host

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

type localSysctl struct{}

// Get reads a sysctl as a string, or as a number for integer keys.
func (localSysctl) Get(name string) (string, error) {
	if s, err := unix.Sysctl(name); err == nil && s != "" && isPrintable(s) {
		return s, nil
	}
	if v, err := unix.SysctlUint64(name); err == nil {
		return strconv.FormatUint(v, 10), nil
	}
	if v, err := unix.SysctlUint32(name); err == nil {
		return strconv.FormatUint(uint64(v), 10), nil
	}
	return "", fmt.Errorf("sysctl %s: %w", name, ErrNotFound)
}

func isPrintable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
