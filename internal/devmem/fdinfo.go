package devmem

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"strconv"
	"strings"
	"sync"
)

// FDInfo is a Source reading the kernel's DRM client statistics: for
// every process of the job, the /proc/<pid>/fdinfo/<fd> of each open
// /dev/dri node (Documentation/gpu/drm-usage-stats.rst, torvalds/linux).
// The memory of a client in a device-memory region is its
// drm-resident-<region> (or the older alias drm-memory-<region>); the
// regions counted are those named vram* (amdgpu's "vram", xe's "vram0",
// "vram1"). Clients are counted once by drm-pdev and drm-client-id, as
// the specification asks (a duplicated descriptor is the same client).
// No tool is needed, and no root: a process's fdinfo is readable by its
// owner.
type FDInfo struct {
	Job *Job
	// Link reads a symbolic link of the proc file system
	// (/proc/<pid>/fd/<n>); os.Readlink under /proc on the live machine.
	Link func(name string) (string, error)

	mu   sync.Mutex
	drm  map[fdKey]bool // descriptors known to be (or not to be) DRM nodes
	live map[fdKey]bool
}

type fdKey struct{ pid, fd int }

// Method names the source.
func (s *FDInfo) Method() string { return MethodDRMFdinfo }

// Close has nothing to release.
func (s *FDInfo) Close() error { return nil }

// Read takes one reading of the job's processes.
func (s *FDInfo) Read(context.Context) ([]Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.drm == nil {
		s.drm = map[fdKey]bool{}
	}
	live := map[fdKey]bool{}
	type client struct{ pdev, id string }
	seen := map[client]bool{}
	var r Reading
	for _, pid := range append([]int{s.Job.Root}, s.Job.PIDs()...) {
		dir := strconv.Itoa(pid) + "/fd"
		ents, err := fs.ReadDir(s.Job.Proc, dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			fd, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			k := fdKey{pid, fd}
			live[k] = true
			isDRM, known := s.drm[k]
			if !known {
				target, err := s.Link(dir + "/" + e.Name())
				isDRM = err == nil && strings.HasPrefix(target, "/dev/dri/")
				s.drm[k] = isDRM
			}
			if !isDRM {
				continue
			}
			b, err := fs.ReadFile(s.Job.Proc, strconv.Itoa(pid)+"/fdinfo/"+e.Name())
			if err != nil {
				continue
			}
			st := ParseDRMFdinfo(b)
			if st.VRAMBytes <= 0 {
				continue
			}
			c := client{st.PDev, st.ClientID}
			if st.ClientID != "" {
				if seen[c] {
					continue
				}
				seen[c] = true
			}
			r = append(r, Usage{PID: pid, Device: st.PDev, Bytes: st.VRAMBytes})
		}
	}
	for k := range s.drm { // forget closed descriptors: the number may be reused
		if !live[k] {
			delete(s.drm, k)
		}
	}
	return []Reading{r}, nil
}

// DRMStats is what ParseDRMFdinfo reads from one fdinfo file.
type DRMStats struct {
	Driver, PDev, ClientID string
	// VRAMBytes sums the device-memory regions (vram*), resident.
	VRAMBytes int64
}

// ParseDRMFdinfo reads the drm-* keys of one /proc/<pid>/fdinfo/<fd>
// (drm-usage-stats.rst: "key:<whitespace>value[ unit]", units KiB or MiB,
// bytes when none). For a region both drm-resident-<region> and its
// deprecated alias drm-memory-<region> may appear; resident wins.
func ParseDRMFdinfo(b []byte) DRMStats {
	var st DRMStats
	resident, memory := map[string]int64{}, map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(k, "drm-") {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case k == "drm-driver":
			st.Driver = v
		case k == "drm-pdev":
			st.PDev = v
		case k == "drm-client-id":
			st.ClientID = v
		case strings.HasPrefix(k, "drm-resident-vram"):
			if n, ok := drmBytes(v); ok {
				resident[strings.TrimPrefix(k, "drm-resident-")] = n
			}
		case strings.HasPrefix(k, "drm-memory-vram"):
			if n, ok := drmBytes(v); ok {
				memory[strings.TrimPrefix(k, "drm-memory-")] = n
			}
		}
	}
	for region, n := range memory {
		if _, ok := resident[region]; !ok {
			resident[region] = n
		}
	}
	for _, n := range resident {
		st.VRAMBytes += n
	}
	return st
}

// drmBytes reads "<uint> [KiB|MiB]".
func drmBytes(v string) (int64, bool) {
	num, unit, _ := strings.Cut(v, " ")
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	switch strings.TrimSpace(unit) {
	case "":
		return n, true
	case "KiB":
		return n << 10, n < 1<<53
	case "MiB":
		return n << 20, n < 1<<43
	}
	return 0, false
}
