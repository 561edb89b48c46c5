// Package memory is the memory probe driver: how much RAM and swap the
// machine has, how much of it this process may use (cgroup limits, walking
// up the tree), and how big /dev/shm is (PyTorch DataLoader workers share
// tensors through it; Docker's 64 MiB default breaks them).
package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/system/kernfs"
	"github.com/devctl/devctl/internal/units"
)

// Driver probes memory.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "memory" }

// Facts is what the driver learns, in bytes. The cpu driver reuses it for
// the CPU device's memory. Nil means unknown.
type Facts struct {
	Total     *int64
	Available *int64
	SwapTotal *int64
	// Limit is the tightest cgroup memory limit over the process's cgroup
	// and its ancestors; nil when nothing limits memory.
	Limit     *int64
	LimitFile string
	// Shm is the size of the tmpfs at /dev/shm; ShmDefaulted says it had
	// no size= option and is the kernel default, half of RAM; ShmUnlimited
	// says it was mounted size=0 (no limit) and Shm is RAM.
	Shm          *int64
	ShmDefaulted bool
	ShmUnlimited bool
	Source       string
}

// Effective is the RAM a workload here can use: the smaller of the
// machine's RAM and the cgroup limit.
func (f Facts) Effective() *int64 {
	switch {
	case f.Total == nil:
		return f.Limit
	case f.Limit != nil && *f.Limit < *f.Total:
		return f.Limit
	default:
		return f.Total
	}
}

// Read gathers memory facts from a host. A missing /proc/meminfo (or
// hw.memsize on macOS) is probe.ErrAbsent. The facts are read once per
// Host (the cpu and memory drivers both need them, concurrently); callers
// share them and must not modify what the pointers point to.
func Read(h *host.Host) (Facts, error) {
	return host.Once(h, "memory.facts", func() (Facts, error) { return read(h) })
}

func read(h *host.Host) (Facts, error) {
	if h.OS == "darwin" {
		return readDarwin(h)
	}
	if h.OS != "linux" {
		return Facts{}, probe.Absent("memory probing is not supported on %s", h.OS)
	}
	b, err := h.FS.ReadFile("/proc/meminfo")
	if errors.Is(err, fs.ErrNotExist) {
		return Facts{}, probe.Absent("no /proc/meminfo")
	}
	if err != nil {
		return Facts{}, fmt.Errorf("reading /proc/meminfo: %w", err)
	}
	mi, err := ParseMeminfo(b)
	if err != nil {
		return Facts{}, err
	}
	f := Facts{
		Total:     probe.Ptr(mi.Total),
		Available: probe.Ptr(mi.Available),
		SwapTotal: probe.Ptr(mi.SwapTotal),
		Source:    "procfs",
	}
	cg := kernfs.Shared(h)
	if lim, ok := cg.MemoryLimit(); ok {
		f.Limit = probe.Ptr(int64(lim.Value))
		f.LimitFile = lim.Path
	}
	f.Shm, f.ShmDefaulted, f.ShmUnlimited = shmSize(cg.Mounts, mi.Total)
	return f, nil
}

// shmSize finds the tmpfs mounted at /dev/shm in the mount table.
func shmSize(mounts []kernfs.Mount, ram int64) (size *int64, defaulted, unlimited bool) {
	m, ok := kernfs.FindMount(mounts, "/dev/shm")
	if !ok || m.FSType != "tmpfs" {
		return nil, false, false
	}
	if v, ok := m.Option("size"); ok {
		n, unlimited, err := TmpfsSize(v, ram)
		if err != nil || (unlimited && n == 0) {
			return nil, false, false
		}
		return probe.Ptr(n), false, unlimited
	}
	// A tmpfs mounted without size= gets the kernel default: half of RAM
	// (Documentation/filesystems/tmpfs.rst).
	if ram <= 0 {
		return nil, false, false
	}
	return probe.Ptr(ram / 2), true, false
}

func readDarwin(h *host.Host) (Facts, error) {
	v, err := h.Sysctl.Get("hw.memsize")
	if err != nil {
		return Facts{}, probe.Absent("sysctl hw.memsize: %v", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return Facts{}, fmt.Errorf("sysctl hw.memsize %q: not a byte count", v)
	}
	return Facts{Total: probe.Ptr(n), Source: "sysctl"}, nil
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	f, err := Read(h)
	if err != nil {
		return probe.Result{}, err
	}
	hi := &probe.HostInfo{
		MemoryTotalMB: toMB(f.Total),
		MemoryAvailMB: toMB(f.Available),
		SwapTotalMB:   toMB(f.SwapTotal),
		MemoryLimitMB: toMB(f.Limit),
		ShmTotalMB:    toMB(f.Shm),
	}
	return probe.Result{Host: hi, Source: f.Source, Detail: detail(f), Raw: f}, nil
}

func detail(f Facts) string {
	var parts []string
	if f.Total != nil {
		parts = append(parts, units.Bytes(*f.Total).Format(units.MiB, 0)+" RAM")
	}
	if f.Limit != nil {
		parts = append(parts, "cgroup limit "+units.Bytes(*f.Limit).Format(units.MiB, 0))
	}
	if f.Shm != nil {
		s := "/dev/shm " + units.Bytes(*f.Shm).Format(units.MiB, 0)
		if f.ShmDefaulted {
			s += " (tmpfs default)"
		}
		if f.ShmUnlimited {
			s += " (size=0: no limit but RAM)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// toMB converts bytes to whole MiB, keeping nil as unknown.
func toMB(b *int64) *int64 {
	if b == nil {
		return nil
	}
	return probe.Ptr(*b >> 20)
}

// ToMB is toMB for other drivers.
func ToMB(b *int64) *int64 { return toMB(b) }
