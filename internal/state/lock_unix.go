//go:build unix

package state

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock without waiting. The lock dies with the
// descriptor, so a killed writer never leaves the file locked.
func tryLock(f *os.File) (held bool, unlock func(), err error) {
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EINTR) {
		return false, nil, nil
	}
	return err == nil, func() {}, err
}
