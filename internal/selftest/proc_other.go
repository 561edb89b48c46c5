//go:build !unix

package selftest

import (
	"fmt"
	"os"
	"syscall"
)

// processGroups: there are none here (Windows); only the child itself is
// ended.
const processGroups = false

type nsMode int

const nsNone nsMode = 0

func netnsModes() []nsMode { return nil }

func sysProcAttr(nsMode) *syscall.SysProcAttr { return nil }

func exitStatus(ps *os.ProcessState, _ error) (string, int, string) {
	if ps == nil {
		return "", -1, ""
	}
	return fmt.Sprintf("exit %d", ps.ExitCode()), ps.ExitCode(), ""
}
