// Package hw holds the readers of machine facts that several parts of
// devctl share: the PCI bus (pci), cgroups and mounts (kernfs), the kernel
// log (kernlog), /proc/cpuinfo (cpuinfo) and /proc/meminfo (meminfo). Each
// reads through a host.Host, parses with a pure function that has a fuzz
// target, and is read at most once per Host (host.Once), so the probe's
// drivers, doctor's checks and bench see one answer.
//
// Probe drivers (internal/probe/<name>) turn these facts into devices; the
// readers here know nothing of the report.
package hw

import (
	"errors"
	"fmt"
)

// ErrAbsent marks a fact the machine simply does not have (no
// /proc/meminfo, an OS without the interface). probe.ErrAbsent is this
// error, so a driver passes it on unchanged.
var ErrAbsent = errors.New("absent")

// Absent returns an ErrAbsent error carrying a reason.
func Absent(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrAbsent)
}
