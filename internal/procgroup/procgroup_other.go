//go:build !unix

package procgroup

import (
	"os"
	"syscall"
)

// Attr is nil where there are no process groups (Windows): only the
// program itself can be ended.
func Attr() *syscall.SysProcAttr { return nil }

// Kill ends p.
func Kill(p *os.Process) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}
