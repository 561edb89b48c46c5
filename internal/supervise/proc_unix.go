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

// alive reports whether any process is left in the group (a zombie
// whose parent has not reaped it yet counts).
func (g *group) alive() bool {
	err := syscall.Kill(-g.pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ForwardedSignals are the signals a caller should notify and pass in
// Spec.Signals: those that ask a job to end (SIGQUIT, Ctrl-\, included, so
// that it reaches the job instead of making Go dump devctl's goroutines and
// exit first).
var ForwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

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
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return waitStatus(ws)
	}
	return ps.ExitCode(), ""
}

// waitStatus is exitStatus for a status read with wait4.
func waitStatus(ws syscall.WaitStatus) (int, string) {
	if ws.Signaled() {
		return 128 + int(ws.Signal()), signalName(ws.Signal())
	}
	return ws.ExitStatus(), ""
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
