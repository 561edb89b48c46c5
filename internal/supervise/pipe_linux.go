package supervise

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is asked of the kernel for the output pipes: 1 MiB instead of
// the default 64 KiB halves the context switches of a fast writer. A
// refusal (the per-user pipe quota) leaves the default.
const pipeSize = 1 << 20

func growPipe(w *os.File) {
	if sc, err := w.SyscallConn(); err == nil {
		_ = sc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}
