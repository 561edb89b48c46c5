package kernfs

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/devctl/devctl/internal/host"
)

// ProcCgroup is one line of /proc/<pid>/cgroup: "hierarchy-ID:controllers:path".
// The cgroup v2 line has ID 0 and no controllers.
type ProcCgroup struct {
	ID          int
	Controllers []string
	Path        string
}

// ParseProcCgroup parses /proc/<pid>/cgroup. Malformed lines are skipped.
func ParseProcCgroup(b []byte) []ProcCgroup {
	var out []ProcCgroup
	for _, line := range lines(b) {
		idStr, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		ctrl, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		id, err := strconv.Atoi(idStr)
		if err != nil || id < 0 {
			continue
		}
		pc := ProcCgroup{ID: id, Path: p}
		if ctrl != "" {
			pc.Controllers = strings.Split(ctrl, ",")
		}
		out = append(out, pc)
	}
	return out
}

// ErrMalformed is returned by the limit parsers for contents they do not
// recognise.
var ErrMalformed = errors.New("malformed cgroup file")

// ParseCPUMax parses cgroup v2 cpu.max: "max 100000" (no limit) or
// "<quota> <period>" in microseconds. It returns the quota in CPUs
// (quota/period) and whether there is a limit at all.
func ParseCPUMax(b []byte) (cpus float64, limited bool, err error) {
	f := strings.Fields(string(b))
	if len(f) == 0 || len(f) > 2 {
		return 0, false, fmt.Errorf("cpu.max %q: %w", clip(b), ErrMalformed)
	}
	if f[0] == "max" {
		return 0, false, nil
	}
	period := int64(100000) // the kernel default when only a quota is written
	if len(f) == 2 {
		p, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || p <= 0 {
			return 0, false, fmt.Errorf("cpu.max period %q: %w", f[1], ErrMalformed)
		}
		period = p
	}
	q, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || q <= 0 {
		return 0, false, fmt.Errorf("cpu.max quota %q: %w", f[0], ErrMalformed)
	}
	return float64(q) / float64(period), true, nil
}

// ParseCFSQuota parses cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us.
// A quota of -1 means no limit.
func ParseCFSQuota(quota, period []byte) (cpus float64, limited bool, err error) {
	q, err := strconv.ParseInt(strings.TrimSpace(string(quota)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("cpu.cfs_quota_us %q: %w", clip(quota), ErrMalformed)
	}
	if q < 0 {
		return 0, false, nil
	}
	p, err := strconv.ParseInt(strings.TrimSpace(string(period)), 10, 64)
	if err != nil || p <= 0 {
		return 0, false, fmt.Errorf("cpu.cfs_period_us %q: %w", clip(period), ErrMalformed)
	}
	if q == 0 {
		return 0, false, fmt.Errorf("cpu.cfs_quota_us 0: %w", ErrMalformed)
	}
	return float64(q) / float64(p), true, nil
}

// UnlimitedBytes is the threshold above which a memory limit means "no
// limit". cgroup v1 writes PAGE_COUNTER_MAX pages (9223372036854771712 with
// 4 KiB pages, a little less with 64 KiB pages); no machine has an exbibyte.
const UnlimitedBytes = int64(1) << 60

// ParseMemoryLimit parses cgroup v2 memory.max ("max" or bytes) and v1
// memory.limit_in_bytes (bytes, huge when unlimited).
func ParseMemoryLimit(b []byte) (bytes int64, limited bool, err error) {
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false, nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("memory limit %q: %w", clip(b), ErrMalformed)
	}
	if u >= uint64(UnlimitedBytes) {
		return 0, false, nil
	}
	return int64(u), true, nil
}

// CPUList is a set of CPU numbers as ranges, from files such as
// /sys/devices/system/cpu/online or cpuset.cpus.effective ("0-3,8,10-11").
type CPUList []CPURange

// CPURange is an inclusive range of CPU numbers.
type CPURange struct{ Lo, Hi int }

// maxCPU bounds CPU numbers: the kernel's NR_CPUS limit is at most 8192; a
// bigger number is a corrupt file, not a machine. maxRanges bounds the work
// a hostile list can cause.
const (
	maxCPU    = 8192
	maxRanges = 1024
)

// ParseCPUList parses the kernel's CPU list format. An empty file is an
// empty list (a cpuset with no CPUs yet).
func ParseCPUList(b []byte) (CPUList, error) {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return CPUList{}, nil
	}
	var out CPUList
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a >= maxCPU {
			return nil, fmt.Errorf("cpu list %q: %w", clip(b), ErrMalformed)
		}
		z := a
		if isRange {
			z, err = strconv.Atoi(hi)
			if err != nil || z < a || z >= maxCPU {
				return nil, fmt.Errorf("cpu list %q: %w", clip(b), ErrMalformed)
			}
		}
		out = append(out, CPURange{a, z})
		if len(out) > maxRanges {
			return nil, fmt.Errorf("cpu list: too many ranges: %w", ErrMalformed)
		}
	}
	return out, nil
}

// Count is the number of CPUs in the list (overlaps counted once).
func (l CPUList) Count() int { return l.Intersect(l) }

// Intersect counts the CPUs present in both lists.
func (l CPUList) Intersect(o CPUList) int {
	// Lists are short (a handful of ranges); a bitmap over the largest CPU
	// number keeps duplicates and overlaps honest.
	hi := -1
	for _, r := range l {
		hi = max(hi, r.Hi)
	}
	if hi < 0 {
		return 0
	}
	in := make([]bool, hi+1)
	for _, r := range l {
		for c := r.Lo; c <= r.Hi; c++ {
			in[c] = true
		}
	}
	both := make([]bool, hi+1)
	n := 0
	for _, r := range o {
		for c := r.Lo; c <= r.Hi && c <= hi; c++ {
			if in[c] && !both[c] {
				both[c] = true
				n++
			}
		}
	}
	return n
}

// String formats the list the way the kernel does.
func (l CPUList) String() string {
	parts := make([]string, len(l))
	for i, r := range l {
		if r.Lo == r.Hi {
			parts[i] = strconv.Itoa(r.Lo)
		} else {
			parts[i] = strconv.Itoa(r.Lo) + "-" + strconv.Itoa(r.Hi)
		}
	}
	return strings.Join(parts, ",")
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// Cgroups locates the calling process's cgroups in a machine's tree
// (/proc/self/cgroup + /proc/self/mountinfo) and reads limit files along
// the path from the process's cgroup up to the hierarchy root.
type Cgroups struct {
	fs host.FS
	// Mounts are the cgroup and /dev/shm entries of the mount table
	// LoadCgroups read (mountinfo, else /proc/mounts), kept so callers
	// need not read it again; other mounts are left out (usefulMounts).
	Mounts []Mount
	// v2 is the unified hierarchy (leaf dir and mount point), if mounted.
	v2 *hierarchy
	// v1 maps a controller name to its hierarchy.
	v1 map[string]*hierarchy

	// The limits are read once and shared: the cpu and memory drivers both
	// ask, concurrently.
	cpuOnce, memOnce sync.Once
	cpu, mem         Limit
	cpuOK, memOK     bool
}

// Shared returns the host's cgroups, loaded once per Host for every driver
// that asks (see host.Once).
func Shared(h *host.Host) *Cgroups {
	c, _ := host.Once(h, "kernfs.cgroups", func() (*Cgroups, error) { return LoadCgroups(h.FS), nil })
	return c
}

// usefulMounts keeps the lines of a mount table (mountinfo or mounts
// format) that can be a cgroup hierarchy or /dev/shm, the only mounts
// devctl reads: a Kubernetes node lists thousands of container mounts,
// and parsing each would cost every probe there a millisecond. A kept
// line has " cgroup" (its file system type) or " /dev/shm " (its mount
// point; spaces inside paths are escaped as \040, so the match is exact
// enough); a false match only costs its parse.
func usefulMounts(b []byte) []byte {
	var out []byte
	for line := range bytes.Lines(b) {
		if bytes.Contains(line, []byte(" cgroup")) || bytes.Contains(line, []byte(" /dev/shm ")) {
			out = append(out, line...)
		}
	}
	return out
}

type hierarchy struct{ leaf, mount string }

// maxDepth bounds the walk up a cgroup path; real trees are a few levels.
const maxDepth = 64

// LoadCgroups finds the process's cgroups. Missing files are not errors:
// without /proc/self/cgroup the process is taken to sit at each hierarchy's
// root; without a mount table the conventional /sys/fs/cgroup layout is
// assumed.
func LoadCgroups(fsys host.FS) *Cgroups {
	c := &Cgroups{fs: fsys, v1: map[string]*hierarchy{}}
	var mounts []Mount
	if b, err := fsys.ReadFile("/proc/self/mountinfo"); err == nil {
		mounts = ParseMountInfo(usefulMounts(b))
	} else if b, err := fsys.ReadFile("/proc/mounts"); err == nil {
		mounts = ParseMounts(usefulMounts(b))
	}
	c.Mounts = mounts
	var self []ProcCgroup
	if b, err := fsys.ReadFile("/proc/self/cgroup"); err == nil {
		self = ParseProcCgroup(b)
	}
	pathFor := func(v2 bool, controller string) string {
		for _, pc := range self {
			if v2 && pc.ID == 0 && len(pc.Controllers) == 0 {
				return pc.Path
			}
			if !v2 {
				for _, ctl := range pc.Controllers {
					if ctl == controller {
						return pc.Path
					}
				}
			}
		}
		return "/"
	}
	haveMounts := false
	for _, m := range mounts {
		switch m.FSType {
		case "cgroup2":
			haveMounts = true
			if c.v2 == nil || m.MountPoint == "/sys/fs/cgroup" {
				c.v2 = &hierarchy{leaf: leafDir(m, pathFor(true, "")), mount: m.MountPoint}
			}
		case "cgroup":
			haveMounts = true
			for _, o := range m.SuperOptions {
				switch o {
				case "cpu", "cpuacct", "cpuset", "memory":
					if _, done := c.v1[o]; !done {
						c.v1[o] = &hierarchy{leaf: leafDir(m, pathFor(false, o)), mount: m.MountPoint}
					}
				}
			}
		}
	}
	if !haveMounts {
		// No mount table: assume the usual layout.
		if _, err := fsys.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
			c.v2 = &hierarchy{leaf: path.Join("/sys/fs/cgroup", pathFor(true, "")), mount: "/sys/fs/cgroup"}
		}
		for _, ctl := range []string{"cpu", "cpuset", "memory"} {
			for _, dir := range []string{ctl, "cpu,cpuacct"} {
				if ctl != "cpu" && dir != ctl {
					continue
				}
				mp := "/sys/fs/cgroup/" + dir
				if _, err := fsys.Stat(mp); err == nil {
					c.v1[ctl] = &hierarchy{leaf: path.Join(mp, pathFor(false, ctl)), mount: mp}
					break
				}
			}
		}
	}
	return c
}

// leafDir maps a process's cgroup path onto a mount of that hierarchy. In
// a container the mount's Root is often the container's own cgroup, and the
// process path is relative to the host's root; a path outside the mount
// (cgroup namespaces show "/../..") maps to the mount point itself.
func leafDir(m Mount, p string) string {
	p = path.Clean("/" + p)
	root := path.Clean("/" + m.Root)
	switch {
	case root == "/":
	case p == root:
		p = "/"
	case strings.HasPrefix(p, root+"/"):
		p = strings.TrimPrefix(p, root)
	default:
		p = "/"
	}
	if strings.Contains(p, "..") {
		p = "/"
	}
	return path.Join(m.MountPoint, p)
}

// Found is one limit file's contents and where it was.
type Found struct {
	Path string
	Data []byte
}

// walk reads file in every cgroup from the leaf up to the mount point,
// leaf first. Missing files are skipped.
func (c *Cgroups) walk(h *hierarchy, files ...string) [][]Found {
	if h == nil {
		return nil
	}
	var out [][]Found
	dir := h.leaf
	for i := 0; i < maxDepth; i++ {
		var level []Found
		for _, f := range files {
			p := path.Join(dir, f)
			if b, err := c.fs.ReadFile(p); err == nil {
				level = append(level, Found{Path: p, Data: b})
			}
		}
		if len(level) == len(files) {
			out = append(out, level)
		}
		if dir == h.mount || dir == "/" || !strings.HasPrefix(dir, h.mount) {
			break
		}
		dir = path.Dir(dir)
	}
	return out
}

// Limit is the tightest limit found and the file that set it.
type Limit struct {
	Value float64
	Path  string
}

// CPUQuota is the tightest CFS bandwidth limit, in CPUs, over the process's
// cgroup and all its ancestors in both hierarchies. ok is false when no
// level has a limit.
func (c *Cgroups) CPUQuota() (Limit, bool) {
	c.cpuOnce.Do(func() { c.cpu, c.cpuOK = c.readCPUQuota() })
	return c.cpu, c.cpuOK
}

func (c *Cgroups) readCPUQuota() (Limit, bool) {
	best, ok := Limit{Value: math.Inf(1)}, false
	for _, lv := range c.walk(c.v2, "cpu.max") {
		if v, lim, err := ParseCPUMax(lv[0].Data); err == nil && lim && v < best.Value {
			best, ok = Limit{v, lv[0].Path}, true
		}
	}
	for _, lv := range c.walk(c.v1["cpu"], "cpu.cfs_quota_us", "cpu.cfs_period_us") {
		if v, lim, err := ParseCFSQuota(lv[0].Data, lv[1].Data); err == nil && lim && v < best.Value {
			best, ok = Limit{v, lv[0].Path}, true
		}
	}
	return best, ok
}

// MemoryLimit is the tightest memory limit in bytes over the process's
// cgroup and its ancestors. ok is false when nothing limits memory.
func (c *Cgroups) MemoryLimit() (Limit, bool) {
	c.memOnce.Do(func() { c.mem, c.memOK = c.readMemoryLimit() })
	return c.mem, c.memOK
}

func (c *Cgroups) readMemoryLimit() (Limit, bool) {
	best, ok := Limit{Value: math.Inf(1)}, false
	try := func(levels [][]Found) {
		for _, lv := range levels {
			if v, lim, err := ParseMemoryLimit(lv[0].Data); err == nil && lim && float64(v) < best.Value {
				best, ok = Limit{float64(v), lv[0].Path}, true
			}
		}
	}
	try(c.walk(c.v2, "memory.max"))
	try(c.walk(c.v1["memory"], "memory.limit_in_bytes"))
	return best, ok
}

// CPUSet returns the CPUs the process may run on, from the nearest cgroup
// that states an effective cpuset (the kernel already folds parents into
// "effective"). ok is false when no cpuset file exists.
func (c *Cgroups) CPUSet() (CPUList, string, bool) {
	for _, lv := range c.walk(c.v2, "cpuset.cpus.effective") {
		if l, err := ParseCPUList(lv[0].Data); err == nil && len(l) > 0 {
			return l, lv[0].Path, true
		}
	}
	for _, lv := range c.walk(c.v1["cpuset"], "cpuset.effective_cpus") {
		if l, err := ParseCPUList(lv[0].Data); err == nil && len(l) > 0 {
			return l, lv[0].Path, true
		}
	}
	for _, lv := range c.walk(c.v1["cpuset"], "cpuset.cpus") {
		if l, err := ParseCPUList(lv[0].Data); err == nil && len(l) > 0 {
			return l, lv[0].Path, true
		}
	}
	return nil, "", false
}
