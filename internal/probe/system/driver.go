// Package system is the system probe driver: the kernel release, the
// container devctl runs in, and for a --sysroot tree the architecture the
// tree describes. It always runs (--only does not remove it) and has no
// devices; later commands lean on its answers (doctor's container checks,
// recommend's view of the host).
package system

import (
	"context"
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/cpuinfo"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes the system.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "system" }

// Facts is what the driver found, kept in Result.Raw for doctor.
type Facts struct {
	OS, Arch  string
	Kernel    string
	Container string
	// Evidence names what showed the container ("/.dockerenv").
	Evidence string
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	f := Facts{OS: h.OS, Arch: h.Arch, Container: ContainerNone}
	source := ""
	switch h.OS {
	case "linux":
		source = "procfs"
		if k, err := h.ReadString("/proc/sys/kernel/osrelease"); err == nil && k != "" {
			f.Kernel = k
		}
		// The tree, not the runner, decides the architecture: an arm64
		// tree replayed on amd64 is arm64. /proc/sys/kernel/arch (uname
		// -m, Linux 6.1+) is one small read; /proc/cpuinfo is the
		// fallback (on x86 the kernel interrupts every CPU to fill its
		// "cpu MHz" lines, so it is not read when not needed).
		if m, err := h.ReadString("/proc/sys/kernel/arch"); err == nil && GoArch(m) != "" {
			f.Arch = GoArch(m)
		} else if ci, err := cpuinfo.Read(h); err == nil && ci.Arch != "" {
			f.Arch = ci.Arch
		}
		f.Container, f.Evidence = DetectContainer(Gather(h, f.Kernel))
	case "darwin":
		source = "sysctl"
		if k, err := h.Sysctl.Get("kern.osrelease"); err == nil {
			f.Kernel = strings.TrimSpace(k)
		}
	}
	hi := &probe.HostInfo{OS: f.OS, Arch: f.Arch, Container: f.Container}
	if f.Kernel != "" {
		hi.Kernel = probe.Ptr(f.Kernel)
	}
	detail := fmt.Sprintf("%s/%s", f.OS, f.Arch)
	if f.Kernel != "" {
		detail += " kernel " + f.Kernel
	}
	if f.Container != ContainerNone {
		detail += fmt.Sprintf(", container %s (%s)", f.Container, f.Evidence)
	}
	return probe.Result{Host: hi, Source: source, Detail: detail}, nil
}

// Gather reads the files and variables that betray a container (the
// unanswered-device sweep asks too: a GPU without device nodes in a
// container cannot be used).
func Gather(h *host.Host, kernel string) Evidence {
	e := Evidence{
		DockerEnv:    h.Exists("/.dockerenv"),
		ContainerEnv: h.Exists("/run/.containerenv"),
		OSRelease:    kernel,
	}
	_, e.KubernetesEnv = h.LookupEnv("KUBERNETES_SERVICE_HOST")
	if s, err := h.ReadString("/run/systemd/container"); err == nil {
		e.SystemdContainer = s
	}
	for _, p := range []string{"/proc/1/cgroup", "/proc/self/cgroup"} {
		if b, err := h.FS.ReadFile(p); err == nil {
			e.Cgroups = append(e.Cgroups, CgroupEvidence{Path: p, Data: b})
		}
	}
	return e
}

// GoArch maps a kernel machine name (uname -m) to Go's architecture name,
// or "" for one devctl does not know.
func GoArch(machine string) string {
	m := strings.TrimSpace(machine)
	switch {
	case m == "x86_64" || m == "amd64":
		return "amd64"
	case m == "i386" || m == "i486" || m == "i586" || m == "i686":
		return "386"
	case m == "aarch64" || m == "arm64" || m == "aarch64_be":
		return "arm64"
	case strings.HasPrefix(m, "armv") || m == "arm":
		return "arm"
	case m == "ppc64le" || m == "ppc64" || m == "s390x" || m == "riscv64" || m == "mips64" || m == "mips64le":
		return m
	case m == "loongarch64":
		return "loong64"
	}
	return ""
}
