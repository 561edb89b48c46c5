//go:build unix

package snapshot

import (
	"os"
	"syscall"
)

// openPipeForWriting opens a FIFO without blocking: with no reader it fails
// (ENXIO) at once instead of waiting forever.
func openPipeForWriting(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
}
