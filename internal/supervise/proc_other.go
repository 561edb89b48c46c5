//go:build !unix

package supervise

import (
	"os"
	"syscall"
)

// Without process groups (Windows) signals reach the child alone and the
// only one that can be delivered is Kill.
type group struct {
	pid  int
	proc *os.Process
}

func (g *group) signal(os.Signal) { _ = g.proc.Kill() }
func (g *group) terminate()       { _ = g.proc.Kill() }
func (g *group) kill()            { _ = g.proc.Kill() }
func (g *group) alive() bool      { return false }

// ForwardedSignals are the signals a caller should notify and pass in
// Spec.Signals.
var ForwardedSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

func isTermination(os.Signal) bool { return true }

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
