//go:build unix

package procgroup

import (
	"errors"
	"os"
	"syscall"
)

// Attr makes the started program the leader of a new process group whose
// id is its pid.
func Attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Kill sends SIGKILL to every process in p's group. A group already gone
// is not an error.
func Kill(p *os.Process) error {
	if p == nil {
		return nil
	}
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
