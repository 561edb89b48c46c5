package bench

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/cpuinfo"
	"github.com/devctl/devctl/internal/hw/kernfs"
	"github.com/devctl/devctl/internal/hw/meminfo"
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
	if ci, err := cpuinfo.Read(h); err == nil {
		m.CPU = CPUID{Family: ci.Family, Model: ci.ModelNumber, Implementer: ci.Implementer, Part: ci.Part}
		if !strings.HasPrefix(ci.VendorID, "0x") { // arm's is the implementer code, kept in Implementer
			m.CPU.Vendor = ci.VendorID // GenuineIntel, AuthenticAMD: the peak table keys on it
		}
		m.ModelName, m.LogicalCPUs = ci.Model, ci.Processors
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
					var src string
					if d.CPU != nil {
						src = d.CPU.MaxFrequencySource
					}
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
		if mi, err := meminfo.Read(h); err == nil {
			if m.MemTotalBytes == 0 && mi.Total != nil {
				m.MemTotalBytes = *mi.Total
			}
			if m.MemAvailBytes == 0 && mi.Available != nil {
				m.MemAvailBytes = *mi.Available
			}
		}
	}
	if m.CPUQuota == nil {
		if q, ok := kernfs.Shared(h).CPUQuota(); ok {
			m.CPUQuota = probe.Ptr(q.Value)
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
			if cpus, err := kernfs.ParseCPUList([]byte(l)); err == nil {
				shared = cpus.Count()
			}
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
