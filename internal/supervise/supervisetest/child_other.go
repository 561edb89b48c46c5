//go:build !unix

package supervisetest

import "syscall"

func newSession() *syscall.SysProcAttr { return nil }

func unixMode([]string) (int, bool) { return 0, false }
