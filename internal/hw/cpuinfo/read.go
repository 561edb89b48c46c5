package cpuinfo

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw"
)

// Read parses the host's /proc/cpuinfo, once per Host: the cpu and system
// drivers, doctor's checks and bench share one read and one parse (on x86
// the kernel interrupts every CPU to fill the "cpu MHz" lines, so a read
// is not free). A missing file is hw.ErrAbsent. Callers must not modify
// the Features slice they share.
func Read(h *host.Host) (Info, error) {
	return host.Once(h, "hw.cpuinfo", func() (Info, error) {
		b, err := h.FS.ReadFile("/proc/cpuinfo")
		if errors.Is(err, fs.ErrNotExist) {
			return Info{}, hw.Absent("no /proc/cpuinfo")
		}
		if err != nil {
			return Info{}, fmt.Errorf("reading /proc/cpuinfo: %w", err)
		}
		return Parse(b), nil
	})
}
