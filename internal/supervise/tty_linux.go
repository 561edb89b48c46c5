package supervise

import (
	"io"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// terminal is devctl's controlling terminal while a job runs: the job's
// process group gets its foreground the way a shell gives it to a
// foreground job, and devctl takes it back when the job ends or stops.
type terminal struct {
	fd     int
	opened *os.File      // /dev/tty when devctl opened it (closed at the end)
	pgrp   int           // devctl's own process group
	modes  *unix.Termios // the modes before the job started (nil: unknown)
	handed bool          // the job's group was given the foreground
}

// stdinTerminal returns the terminal when stdin is devctl's controlling
// terminal, or nil.
func stdinTerminal(stdin io.Reader) *terminal {
	f, ok := stdin.(*os.File)
	if !ok || f == nil {
		return nil
	}
	t := &terminal{fd: int(f.Fd()), pgrp: unix.Getpgrp()}
	// TIOCGPGRP fails (ENOTTY) on a file, a pipe, and a terminal that is
	// not this session's controlling terminal.
	if _, err := t.foreground(); err != nil {
		return nil
	}
	if m, err := unix.IoctlGetTermios(t.fd, unix.TCGETS); err == nil {
		t.modes = m
	}
	return t
}

// controllingTerminal opens /dev/tty, devctl's controlling terminal
// whatever its stdin is, or returns nil when it has none.
func controllingTerminal() *terminal {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil
	}
	t := &terminal{fd: int(f.Fd()), opened: f, pgrp: unix.Getpgrp()}
	if _, err := t.foreground(); err != nil {
		f.Close()
		return nil
	}
	return t
}

// foreground returns the terminal's foreground process group.
func (t *terminal) foreground() (int, error) {
	return unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
}

// inForeground reports whether devctl's own group holds the terminal.
func (t *terminal) inForeground() bool {
	fg, err := t.foreground()
	return err == nil && fg == t.pgrp
}

// give makes pgrp the terminal's foreground group. SIGTTOU is blocked on
// this thread meanwhile, as shells ignore it: a process outside the
// foreground group that sets it would otherwise be stopped by the kernel
// (tty_check_change treats a blocked signal like an ignored one). Blocking
// on one locked thread, rather than ignoring process-wide, leaves nothing
// behind for a child started later to inherit.
func (t *terminal) give(pgrp int) error {
	defer blockTTOU()()
	return unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, pgrp)
}

// blockTTOU locks the calling goroutine to its thread and blocks SIGTTOU
// there, until the function it returns is called.
func blockTTOU() (restore func()) {
	runtime.LockOSThread()
	var block, old unix.Sigset_t
	addSignal(&block, unix.SIGTTOU)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &block, &old); err != nil {
		runtime.UnlockOSThread()
		return func() {}
	}
	return func() {
		_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
		runtime.UnlockOSThread()
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// restoreModes puts back the modes the terminal had before the job (a job
// killed in raw mode leaves no echo): bash does the same when a foreground
// job is killed by a signal (jobs.c, wait_for: set_tty_state).
func (t *terminal) restoreModes() {
	if t.modes != nil {
		_ = unix.IoctlSetTermios(t.fd, unix.TCSETS, t.modes)
	}
}

func (t *terminal) close() {
	if t.opened != nil {
		t.opened.Close()
	}
}

// addSignal adds sig to set; the words of Sigset_t are 32 or 64 bits wide
// depending on the architecture.
func addSignal(set *unix.Sigset_t, sig unix.Signal) {
	n := uint(sig) - 1
	w := uint(8 * unsafe.Sizeof(set.Val[0]))
	set.Val[n/w] |= 1 << (n % w)
}
