package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// Machine is what bench needs to know about the machine it measures. The
// command fills it from the probe report and a few sysfs files (Facts).
type Machine struct {
	OS          string
	Arch        string
	CPU         CPUID
	ModelName   string
	LogicalCPUs int
	// Cores is the number of physical cores (0: unknown, assume logical).
	Cores int
	// MaxFreqMHz is the CPU's maximum frequency, nil when unknown.
	MaxFreqMHz *float64
	FreqSource string
	// CurrentMHz is a clock the probe found that is not a maximum
	// (/proc/cpuinfo "cpu MHz" without cpufreq); reported, not used.
	CurrentMHz *float64
	// LLCBytes is the last-level cache of the whole machine (all
	// instances), 0 when unknown.
	LLCBytes      int64
	MemTotalBytes int64
	MemAvailBytes int64
	// CPUQuota is the cgroup CPU limit in CPUs, nil when unlimited.
	CPUQuota *float64
	// Links are the accelerators' PCIe links.
	Links []DeviceLink
}

// DeviceLink is one accelerator's PCIe link as the probe reported it.
type DeviceLink struct {
	Device string
	Name   string
	Link   probe.PCIeLink
}

// Facts gathers the Machine from the probe report (rep may be nil) and the
// host's files. Every fact is optional: a missing file leaves it unknown.
func Facts(h *host.Host, rep *probe.Report) Machine {
	m := Machine{OS: h.OS, Arch: h.Arch}
	if b, err := h.FS.ReadFile("/proc/cpuinfo"); err == nil {
		ci := ParseCPUInfo(b)
		m.CPU, m.ModelName, m.LogicalCPUs = ci.ID, ci.ModelName, ci.Processors
	}
	if h.OS == "darwin" && h.Arch == "arm64" {
		m.CPU.Vendor = "Apple"
	}
	if rep != nil {
		for _, d := range rep.Devices {
			if d.DeviceType == "cpu" || d.Backend == "cpu" {
				if d.Name != "" {
					m.ModelName = d.Name
				}
				if d.LogicalCPUs != nil && *d.LogicalCPUs > 0 {
					m.LogicalCPUs = *d.LogicalCPUs
				}
				if d.Cores != nil && *d.Cores > 0 {
					m.Cores = *d.Cores
				}
				if d.MaxFreqMHz != nil && *d.MaxFreqMHz > 0 {
					src, _ := d.Extra["max_frequency_source"].(string)
					if strings.Contains(src, "current clock") {
						// /proc/cpuinfo's "cpu MHz" without cpufreq (VMs): the
						// base or current clock, not a maximum; turbo runs
						// above it, so a peak from it would exceed 100%.
						m.CurrentMHz = probe.Ptr(*d.MaxFreqMHz)
					} else {
						if src == "" {
							src = "probe max_frequency_mhz"
						}
						m.MaxFreqMHz, m.FreqSource = probe.Ptr(*d.MaxFreqMHz), src
					}
				}
				continue
			}
			if d.Link != nil {
				m.Links = append(m.Links, DeviceLink{Device: d.ID, Name: d.Name, Link: *d.Link})
			}
		}
		if rep.Host.MemoryTotalMB != nil {
			m.MemTotalBytes = *rep.Host.MemoryTotalMB << 20
		}
		if rep.Host.MemoryAvailMB != nil {
			m.MemAvailBytes = *rep.Host.MemoryAvailMB << 20
		}
		m.CPUQuota = rep.Host.CPUQuota
	}
	if m.MaxFreqMHz == nil {
		if s, err := h.ReadString("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
			if khz, err := strconv.ParseFloat(s, 64); err == nil && khz > 0 {
				m.MaxFreqMHz, m.FreqSource = probe.Ptr(khz/1000), "cpufreq cpuinfo_max_freq"
			}
		}
	}
	if m.MemTotalBytes == 0 || m.MemAvailBytes == 0 {
		if b, err := h.FS.ReadFile("/proc/meminfo"); err == nil {
			total, avail := ParseMeminfo(b)
			if m.MemTotalBytes == 0 {
				m.MemTotalBytes = total
			}
			if m.MemAvailBytes == 0 {
				m.MemAvailBytes = avail
			}
		}
	}
	if m.CPUQuota == nil {
		if b, err := h.FS.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil {
			m.CPUQuota, _ = ParseCPUMax(b)
		}
	}
	m.LLCBytes = llcBytes(h, m.LogicalCPUs)
	return m
}

// llcBytes reads cpu0's highest-level data or unified cache and multiplies
// it by the number of instances (logical CPUs / CPUs sharing it), so that a
// many-CCD EPYC counts all its L3 slices.
func llcBytes(h *host.Host, logical int) int64 {
	const dir = "/sys/devices/system/cpu/cpu0/cache"
	ents, err := h.FS.ReadDir(dir)
	if err != nil {
		return 0
	}
	bestLevel, size, shared := 0, int64(0), 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		p := path.Join(dir, e.Name())
		typ, _ := h.ReadString(p + "/type")
		if typ == "Instruction" {
			continue
		}
		lv, err := h.ReadString(p + "/level")
		if err != nil {
			continue
		}
		level, err := strconv.Atoi(lv)
		if err != nil || level < bestLevel {
			continue
		}
		s, err := h.ReadString(p + "/size")
		if err != nil {
			continue
		}
		n, err := ParseCacheSize(s)
		if err != nil {
			continue
		}
		bestLevel, size, shared = level, n, 0
		if l, err := h.ReadString(p + "/shared_cpu_list"); err == nil {
			shared, _ = ParseCPUList(l)
		}
	}
	if size == 0 {
		return 0
	}
	if shared > 0 && logical > shared {
		return size * int64((logical+shared-1)/shared)
	}
	return size
}

// CPUInfo is what ParseCPUInfo takes from /proc/cpuinfo.
type CPUInfo struct {
	ID         CPUID
	ModelName  string
	Processors int
}

// ParseCPUInfo reads the first processor's identity and counts processors
// in /proc/cpuinfo (x86 and arm64 layouts).
func ParseCPUInfo(b []byte) CPUInfo {
	var ci CPUInfo
	first := true
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "processor" {
			ci.Processors++
			if ci.Processors > 1 {
				first = false
			}
			continue
		}
		if !first {
			continue
		}
		switch k {
		case "vendor_id":
			ci.ID.Vendor = v
		case "cpu family":
			ci.ID.Family, _ = strconv.Atoi(v)
		case "model":
			ci.ID.Model, _ = strconv.Atoi(v)
		case "model name":
			ci.ModelName = v
		case "CPU implementer":
			n, _ := strconv.ParseInt(v, 0, 64)
			ci.ID.Implementer = int(n)
		case "CPU part":
			n, _ := strconv.ParseInt(v, 0, 64)
			ci.ID.Part = int(n)
		}
	}
	return ci
}

// ParseCacheSize parses sysfs cache sizes such as "32768K", "1M" or "512".
func ParseCacheSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("cache size %q: want a number with an optional K, M or G suffix", s)
	}
	return n * mult, nil
}

// ParseCPUList counts the CPUs in a sysfs list such as "0-7,64-71".
func ParseCPUList(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0, fmt.Errorf("cpu list %q: bad entry %q", s, part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a || b-a > 1<<20 {
				return 0, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		n += b - a + 1
		if n > 1<<22 {
			return 0, fmt.Errorf("cpu list %q: too many CPUs", s)
		}
	}
	return n, nil
}

// ParseCPUMax parses cgroup v2 cpu.max ("max 100000" or "150000 100000")
// into a number of CPUs, nil when unlimited.
func ParseCPUMax(b []byte) (*float64, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 || len(f) > 2 {
		return nil, fmt.Errorf("cpu.max %q: want \"QUOTA PERIOD\"", string(b))
	}
	if f[0] == "max" {
		return nil, nil
	}
	q, err := strconv.ParseFloat(f[0], 64)
	if err != nil || q <= 0 || math.IsInf(q, 0) || math.IsNaN(q) {
		return nil, fmt.Errorf("cpu.max %q: bad quota", string(b))
	}
	period := 100000.0
	if len(f) == 2 {
		period, err = strconv.ParseFloat(f[1], 64)
		if err != nil || period <= 0 || math.IsInf(period, 0) || math.IsNaN(period) {
			return nil, fmt.Errorf("cpu.max %q: bad period", string(b))
		}
	}
	v := q / period
	return &v, nil
}

// ParseMeminfo returns MemTotal and MemAvailable from /proc/meminfo, in
// bytes (0 when absent).
func ParseMeminfo(b []byte) (total, avail int64) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64>>10 {
			continue
		}
		switch f[0] {
		case "MemTotal:":
			total = n << 10
		case "MemAvailable:":
			avail = n << 10
		}
	}
	return total, avail
}
