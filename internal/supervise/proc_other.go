//go:build !unix

package supervise

import "os"

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
func (g *group) reap()            {}

func isTermination(os.Signal) bool { return true }

func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	return ps.ExitCode(), ""
}
