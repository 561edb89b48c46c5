//go:build unix

package interrupt

import (
	"os"
	"syscall"
)

// Signals are what Watch handles.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// reraise ends devctl by sig with its default action (the handler was
// removed), so the shell sees the status a signal gives. A signal that was
// ignored when devctl started is ignored again once its handler is gone:
// SIGTERM is raised instead, and SIGKILL if that too was ignored.
func reraise(sig os.Signal, ignored map[os.Signal]bool) {
	s, ok := sig.(syscall.Signal)
	switch {
	case !ok:
		return
	case ignored[sig] && !ignored[syscall.SIGTERM]:
		s = syscall.SIGTERM
	case ignored[sig]:
		s = syscall.SIGKILL
	}
	_ = syscall.Kill(os.Getpid(), s)
}
