//go:build unix

package selftest

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitStatus describes how a reaped child ended: "exit 1" or "signal
// SIGSEGV", its exit code (-1 for a signal) and the signal's name.
func exitStatus(ps *os.ProcessState, _ error) (string, int, string) {
	if ps == nil {
		return "", -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
		return "signal " + name, -1, name
	}
	return fmt.Sprintf("exit %d", ps.ExitCode()), ps.ExitCode(), ""
}
