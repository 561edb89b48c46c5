package selftest

import (
	"os"
	"syscall"
)

// processGroups: every child leads a process group of its own.
const processGroups = true

// nsMode is how a child's network is cut off.
type nsMode int

const (
	nsNone nsMode = iota
	// nsNet: a network namespace alone (needs CAP_SYS_ADMIN: root
	// outside a restricted container).
	nsNet
	// nsUserNet: a user namespace (unprivileged, where the kernel allows
	// it) holding a network namespace; the user's own ids are mapped, so
	// files and device nodes are checked against the same user.
	nsUserNet
)

// netnsModes lists the namespace set-ups worth trying, most direct first.
func netnsModes() []nsMode {
	if os.Geteuid() == 0 {
		return []nsMode{nsNet, nsUserNet}
	}
	return []nsMode{nsUserNet}
}

// sysProcAttr puts the child in its own process group, kills it when devctl
// dies (Pdeathsig), and cuts its network per mode.
func sysProcAttr(mode nsMode) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	switch mode {
	case nsNet:
		a.Cloneflags = syscall.CLONE_NEWNET
	case nsUserNet:
		uid, gid := os.Getuid(), os.Getgid()
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}
