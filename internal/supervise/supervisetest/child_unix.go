//go:build unix

package supervisetest

import (
	"fmt"
	"os"
	"syscall"
)

func newSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// unixMode runs the modes that need unix signals.
func unixMode(args []string) (int, bool) {
	switch args[0] {
	case "stop-self":
		sig := syscall.SIGSTOP
		if arg(args, 1) == "TSTP" {
			sig = syscall.SIGTSTP
		}
		fmt.Printf("ready %d\n", os.Getpid())
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1, true
		}
		fmt.Println("resumed")
		return 0, true
	}
	return osMode(args)
}
