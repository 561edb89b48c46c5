//go:build unix && !linux

package selftest

import "syscall"

// processGroups: every child leads a process group of its own.
const processGroups = true

// nsMode is how a child's network is cut off; only Linux has namespaces.
type nsMode int

const nsNone nsMode = 0

func netnsModes() []nsMode { return nil }

// sysProcAttr puts the child in its own process group.
func sysProcAttr(nsMode) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
