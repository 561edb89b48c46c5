package supervise

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// teePump passes r on to w with tee(2) when both are pipes: the kernel
// hands the child's pages to the reader downstream without a copy, and
// only the tail's copy is read into devctl. That keeps a fast stream at
// pipe speed on a busy machine. It returns false, having read nothing,
// when tee cannot be used (w is a terminal, a file or not an *os.File);
// the caller then copies.
func teePump(r *os.File, w io.Writer, tl *tail, last *byte) bool {
	out, ok := w.(*os.File)
	if !ok {
		return false
	}
	if st, err := out.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return false
	}
	// Blocking descriptors: tee waits for data and for room downstream
	// in the kernel. (A goroutine blocked here ends when the child's last
	// writer closes the pipe; see drainDelay.)
	rfd, wfd := int(r.Fd()), int(out.Fd())
	buf := tl.buffer()
	for first := true; ; first = false {
		n, err := unix.Tee(rfd, wfd, copyBuf, 0)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			if first && errors.Is(err, unix.EINVAL) {
				return false
			}
			r.Close() // downstream is gone: the child gets EPIPE, as without devctl
			return true
		}
		if n == 0 {
			return true // every writer closed the pipe
		}
		// Consume what was teed, into the tail.
		for left := int(n); left > 0; {
			k, err := unix.Read(rfd, buf[:min(left, len(buf))])
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			if err != nil || k <= 0 {
				return true
			}
			left -= k
			if last != nil {
				*last = buf[k-1]
			}
			buf = tl.keep(buf[:k])
		}
	}
}
