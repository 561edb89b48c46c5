//go:build unix

package target

import (
	"errors"
	"os"
	"syscall"
	"time"
)

const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonblock = syscall.O_NONBLOCK
)

// pipeWait is how long openPipe waits for a FIFO's reader to open it: a
// script that starts its reader in the background beside devctl
// (`consumer < p & devctl ... -o p`) may not have it open yet.
const pipeWait = time.Second

// openPipe opens a FIFO for writing without blocking on it: with no reader
// (ENXIO) it tries again for up to pipeWait, then fails, so a FIFO nobody
// reads never hangs devctl.
func openPipe(path string) (*os.File, error) {
	deadline := time.Now().Add(pipeWait)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil || !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncDir makes a rename durable; a failure only costs durability.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
