package meminfo

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw"
	"github.com/devctl/devctl/internal/hw/kernfs"
)

// Facts are the machine's memory facts, in bytes: the memory driver's
// report, the CPU device's memory, doctor's /dev/shm and cgroup checks and
// bench all read them. Nil means unknown.
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
// hw.memsize on macOS) is hw.ErrAbsent. The facts are read once per
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
		return Facts{}, hw.Absent("memory probing is not supported on %s", h.OS)
	}
	b, err := h.FS.ReadFile("/proc/meminfo")
	if errors.Is(err, fs.ErrNotExist) {
		return Facts{}, hw.Absent("no /proc/meminfo")
	}
	if err != nil {
		return Facts{}, fmt.Errorf("reading /proc/meminfo: %w", err)
	}
	mi, err := Parse(b)
	if err != nil {
		return Facts{}, err
	}
	f := Facts{
		Total:     ptr(mi.Total),
		Available: ptr(mi.Available),
		SwapTotal: ptr(mi.SwapTotal),
		Source:    "procfs",
	}
	cg := kernfs.Shared(h)
	if lim, ok := cg.MemoryLimit(); ok {
		f.Limit = ptr(int64(lim.Value))
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
		return ptr(n), false, unlimited
	}
	// A tmpfs mounted without size= gets the kernel default: half of RAM
	// (Documentation/filesystems/tmpfs.rst).
	if ram <= 0 {
		return nil, false, false
	}
	return ptr(ram / 2), true, false
}

func readDarwin(h *host.Host) (Facts, error) {
	v, err := h.Sysctl.Get("hw.memsize")
	if err != nil {
		return Facts{}, hw.Absent("sysctl hw.memsize: %v", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 {
		return Facts{}, fmt.Errorf("sysctl hw.memsize %q: not a byte count", v)
	}
	return Facts{Total: ptr(n), Source: "sysctl"}, nil
}

func ptr[T any](v T) *T { return &v }
