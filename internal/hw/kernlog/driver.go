package kernlog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe/neuron"
	"github.com/devctl/devctl/internal/probe/tpu"
)

// Args ask dmesg for the kernel facility at warning level and above:
// Xid, amdgpu fault and reset lines are errors or warnings, and the filter
// keeps what a snapshot records small. Busybox dmesg knows neither option;
// then the whole buffer is read.
var Args = []string{"--kernel", "--level=emerg,alert,crit,err,warn"}

// Log is what Read found: the input of doctor's kernel.device_errors. It is
// not a probe driver: running dmesg costs a process start that `probe`,
// which should cost what lscpu costs, does not pay; doctor and snapshot do.
type Log struct {
	// Readable is false when the log could not be read; Why says why.
	Readable bool    `json:"readable"`
	Why      string  `json:"why,omitempty"`
	Lines    int     `json:"lines"`
	Events   []Event `json:"events"`
}

// Read runs dmesg and classifies its lines. It never fails: an unreadable
// log is a Log with Readable false and the reason.
func Read(ctx context.Context, h *host.Host) Log {
	if h == nil || h.Runner == nil {
		return Log{Why: "no kernel log here (no program runner)"}
	}
	if h.OS != "linux" {
		return Log{Why: "the kernel log is read on Linux only"}
	}
	out, err := h.Runner.Run(ctx, "dmesg", Args...)
	if err != nil && ctx.Err() == nil && unknownOption(out, err) {
		out, err = h.Runner.Run(ctx, "dmesg")
	}
	if err != nil {
		return Log{Why: why(h, out, err)}
	}
	lines := Parse(out)
	return Log{Readable: true, Lines: len(lines), Events: Events(lines, accelerators(h))}
}

func unknownOption(out []byte, err error) bool {
	s := strings.ToLower(string(out) + " " + err.Error())
	return strings.Contains(s, "unrecognized option") || strings.Contains(s, "invalid option") || strings.Contains(s, "unknown option")
}

// why explains an unreadable log; the common case is a non-root user on a
// kernel with dmesg_restrict set.
func why(h *host.Host, out []byte, err error) string {
	switch {
	case errors.Is(err, host.ErrNotAllowed), errors.Is(err, host.ErrNotFound):
		return "dmesg is not available here (replayed tree, or not installed)"
	}
	msg := strings.ToLower(string(out) + " " + err.Error())
	if strings.Contains(msg, "not permitted") || strings.Contains(msg, "permission denied") {
		restrict, _ := h.ReadString("/proc/sys/kernel/dmesg_restrict")
		if restrict == "" {
			restrict = "unknown"
		}
		return fmt.Sprintf("the kernel log is not readable by uid %d (kernel.dmesg_restrict = %s): reading it needs root or CAP_SYSLOG", h.Identity.UID, restrict)
	}
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 200 {
		s = s[:200]
	}
	return "dmesg failed: " + s
}

// accelerators are the PCI addresses of the machine's accelerators, so an
// error line naming one counts even without a pattern for its driver.
func accelerators(h *host.Host) map[string]bool {
	devs, err := pci.Scan(h)
	if err != nil {
		return nil
	}
	out := map[string]bool{}
	for _, d := range devs {
		_, isTPU := tpu.Identify(d)
		_, neu := neuron.Identify(d)
		gpu := (d.Vendor == pci.VendorNVIDIA || d.Vendor == pci.VendorAMD || d.Vendor == pci.VendorIntel) && d.IsGPULike()
		if isTPU || neu || gpu {
			out[d.Address] = true
		}
	}
	return out
}
