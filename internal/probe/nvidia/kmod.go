package nvidia

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
)

// ProcVersionPath is where the loaded NVIDIA kernel module says its version.
const ProcVersionPath = "/proc/driver/nvidia/version"

// KernelModule is what /proc/driver/nvidia/version tells.
type KernelModule struct {
	// Version is the module's driver version ("550.90.07"; "35.3.1" on Jetson).
	Version string `json:"version"`
	// Open is true for the open-source kernel module (R515+ "Open Kernel Module").
	Open bool `json:"open"`
	// Arch is the architecture named by the open module ("x86_64", "aarch64"),
	// "" for the proprietary module, which names it before "Kernel Module".
	Arch string `json:"arch,omitempty"`
}

// ErrNoModuleVersion is returned when the file has no NVRM version line.
var ErrNoModuleVersion = errors.New("no NVRM version line")

// ParseKernelModule reads /proc/driver/nvidia/version. Both layouts occur:
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 ...
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release Build  (...)  ...
//
// The version is the first token after "Kernel Module" (skipping "for
// <arch>") made of digits and dots.
func ParseKernelModule(b []byte) (KernelModule, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "NVRM version:") {
			continue
		}
		var km KernelModule
		i := strings.Index(line, "Kernel Module")
		if i < 0 {
			return KernelModule{}, ErrNoModuleVersion
		}
		km.Open = strings.Contains(line[:i], "Open")
		fields := strings.Fields(line[i+len("Kernel Module"):])
		if len(fields) >= 2 && fields[0] == "for" {
			km.Arch = fields[1]
			fields = fields[2:]
		}
		for _, f := range fields {
			if isVersion(f) {
				km.Version = f
				return km, nil
			}
		}
		return KernelModule{}, ErrNoModuleVersion
	}
	return KernelModule{}, ErrNoModuleVersion
}

// isVersion reports whether s is digits separated by single dots ("550.90.07").
func isVersion(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		default:
			return false
		}
	}
	return digits > 0
}
