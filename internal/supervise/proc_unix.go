//go:build unix

package supervise

import (
	"errors"
	"os"
	"syscall"
)

// group is the child's process group; its id is the leader's pid.
type group struct {
	pid  int
	proc *os.Process
}

func (g *group) signal(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		s = syscall.SIGTERM
	}
	_ = syscall.Kill(-g.pid, s)
}

func (g *group) terminate() { _ = syscall.Kill(-g.pid, syscall.SIGTERM) }
func (g *group) kill()      { _ = syscall.Kill(-g.pid, syscall.SIGKILL) }

// reap collects the exit status of the group's members that are devctl's
// own children: with Spec.Subreaper, the orphans of the group are, and
// they would stay zombies otherwise. It never waits.
func (g *group) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-g.pid, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// alive reports whether any process is left in the group.
func (g *group) alive() bool {
	g.reap()
	err := syscall.Kill(-g.pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// isTermination tells the signals that ask a process to end, after which
// the grace period runs.
func isTermination(sig os.Signal) bool {
	switch sig {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
		return true
	}
	return false
}

// exitStatus follows the shell convention: the exit code, or 128+N when
// signal N ended the process. -1 means the state is unknown.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), signalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}
