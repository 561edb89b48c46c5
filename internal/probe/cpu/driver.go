// Package cpu is the cpu probe driver: the host CPU as a compute device,
// with its instruction-set features (which decide CPU bf16/int8/fp16
// support), its topology, and the share of it a cgroup lets this process
// use. Linux facts come from /proc/cpuinfo and /sys/devices/system/cpu,
// parsed without regard to the architecture devctl runs on; macOS facts
// come from sysctl.
package cpu

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/cpuinfo"
	"github.com/devctl/devctl/internal/hw/kernfs"
	"github.com/devctl/devctl/internal/hw/meminfo"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes the CPU.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "cpu" }

// Facts is what the driver learned about the CPU. Zero means unknown.
type Facts struct {
	Arch     string
	Vendor   string
	Model    string
	Features []string
	// Logical is the number of CPUs this process may use: online CPUs,
	// narrowed by the cgroup cpuset. Online is the machine's count.
	Logical int
	Online  int
	Cores   int
	Sockets int
	// PerfCores and EffCores are Apple's performance and efficiency cores.
	PerfCores, EffCores int
	MaxMHz              float64
	MHzSource           string
	// Quota is the tightest CFS bandwidth limit in CPUs (0: none).
	Quota     float64
	QuotaFile string
	CPUSet    string
	Source    string
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	var (
		f   Facts
		err error
		cg  *kernfs.Cgroups
	)
	switch h.OS {
	case "linux":
		cg = kernfs.Shared(h)
		f, err = readLinux(ctx, h, cg)
	case "darwin":
		f, err = readDarwin(h)
	default:
		return probe.Result{}, probe.Absent("cpu probing is not supported on %s", h.OS)
	}
	if err != nil {
		return probe.Result{}, err
	}
	dev := device(f)
	res := probe.Result{Devices: []probe.Device{dev}, Source: f.Source}
	if mem, err := meminfo.Read(h); err == nil {
		eff := mem.Effective()
		dev.TotalMemoryMB = probe.MB(eff)
		if mem.Available != nil {
			free := *mem.Available
			if eff != nil && free > *eff {
				free = *eff
			}
			dev.FreeMemoryMB = probe.MB(&free)
		}
		res.Devices[0] = dev
	}
	if f.Quota > 0 {
		res.Host = &probe.HostInfo{CPUQuota: probe.Ptr(math.Round(f.Quota*1000) / 1000)}
	}
	res.Detail = detail(f)
	return res, nil
}

// device turns facts into the report's CPU device.
func device(f Facts) probe.Device {
	sup := capability.Evaluate(capability.Facts{Backend: "cpu", CPUFeatures: f.Features})
	d := probe.Device{
		ID:            "cpu",
		Index:         0,
		Backend:       "cpu",
		DeviceType:    "cpu",
		Vendor:        f.Vendor,
		Name:          f.Model,
		SupportsFP16:  sup.FP16,
		SupportsBF16:  sup.BF16,
		Supports8Bit:  sup.Int8,
		SupportsFP8:   sup.FP8,
		PytorchDevice: "cpu",
		JAXPlatform:   "cpu",
		Features:      f.Features,
	}
	if f.Arch != "" {
		d.Architecture = probe.Ptr(f.Arch)
	}
	if f.Logical > 0 {
		d.LogicalCPUs = probe.Ptr(f.Logical)
	}
	if f.Cores > 0 {
		d.Cores = probe.Ptr(f.Cores)
	}
	if f.Sockets > 0 {
		d.Sockets = probe.Ptr(f.Sockets)
	}
	if f.MaxMHz > 0 {
		d.MaxFreqMHz = probe.Ptr(math.Round(f.MaxMHz*10) / 10)
	}
	x := probe.CPUExtra{CPUSet: f.CPUSet, MaxFrequencySource: f.MHzSource, PerformanceCores: f.PerfCores, EfficiencyCores: f.EffCores}
	if f.Online > 0 && f.Online != f.Logical {
		x.OnlineCPUs = f.Online
	}
	if m := x.Map(); m != nil {
		d.CPU, d.Extra = &x, m
	}
	return d
}

func detail(f Facts) string {
	s := fmt.Sprintf("%d logical CPU(s)", f.Logical)
	if f.Quota > 0 {
		s += fmt.Sprintf(", cgroup quota %.2f CPUs", f.Quota)
	}
	return s
}

// readLinux reads /proc/cpuinfo and the few sysfs files that fill what it
// leaves out (topology on non-x86, the maximum clock), then the cgroup
// quota and cpuset.
func readLinux(ctx context.Context, h *host.Host, cg *kernfs.Cgroups) (Facts, error) {
	info, err := cpuinfo.Read(h)
	if err != nil {
		return Facts{}, err
	}
	f := Facts{
		Arch:     info.Arch,
		Vendor:   info.Vendor,
		Model:    info.Model,
		Features: info.Features,
		Cores:    info.Cores,
		Sockets:  info.Sockets,
		Online:   info.Processors,
		Source:   "procfs",
	}
	const cpuDir = "/sys/devices/system/cpu"
	var online kernfs.CPUList
	if ob, err := h.FS.ReadFile(cpuDir + "/online"); err == nil {
		if l, err := kernfs.ParseCPUList(ob); err == nil && len(l) > 0 {
			online = l
			f.Online = l.Count()
			f.Source = "procfs+sysfs"
		}
	}
	if (f.Cores == 0 || f.Sockets == 0) && ctx.Err() == nil {
		if t, ok := readTopology(h, cpuDir, online); ok {
			if f.Sockets == 0 {
				f.Sockets = t.Sockets
			}
			if f.Cores == 0 {
				f.Cores = t.Cores
			}
			f.Source = "procfs+sysfs"
		}
	}
	if mhz, ok := maxFreq(h, cpuDir); ok {
		f.MaxMHz, f.MHzSource = mhz, "cpufreq cpuinfo_max_freq"
	} else if info.MaxMHz > 0 {
		f.MaxMHz = info.MaxMHz
		f.MHzSource = "cpuinfo " + info.MHzKey
		if info.MHzKey == "cpu MHz" {
			f.MHzSource += " (current clock; no cpufreq)"
		}
	}
	f.Logical = f.Online
	if set, _, ok := cg.CPUSet(); ok {
		f.CPUSet = set.String()
		n := set.Count()
		if online != nil {
			n = online.Intersect(set)
		}
		if n > 0 && (f.Logical == 0 || n < f.Logical) {
			f.Logical = n
		}
	}
	if q, ok := cg.CPUQuota(); ok {
		f.Quota, f.QuotaFile = q.Value, q.Path
	}
	return f, nil
}

// Topology is the socket and core count from sysfs.
type Topology struct{ Sockets, Cores int }

// readTopology counts packages and cores from
// /sys/devices/system/cpu/cpuN/topology, for the CPUs in online (or every
// cpuN directory when online is unknown). Each file is read once.
func readTopology(h *host.Host, dir string, online kernfs.CPUList) (Topology, bool) {
	var cpus []int
	if len(online) > 0 {
		for _, r := range online {
			for c := r.Lo; c <= r.Hi; c++ {
				cpus = append(cpus, c)
			}
		}
	} else {
		ents, err := h.FS.ReadDir(dir)
		if err != nil {
			return Topology{}, false
		}
		for _, e := range ents {
			if n, ok := strings.CutPrefix(e.Name(), "cpu"); ok {
				if i, err := strconv.Atoi(n); err == nil {
					cpus = append(cpus, i)
				}
			}
		}
	}
	var recs []TopologyRecord
	for _, c := range cpus {
		base := dir + "/cpu" + strconv.Itoa(c) + "/topology/"
		pkg, err1 := h.ReadString(base + "physical_package_id")
		core, err2 := h.ReadString(base + "core_id")
		if err1 != nil || err2 != nil {
			continue
		}
		recs = append(recs, TopologyRecord{Package: pkg, Core: core})
	}
	t := CountTopology(recs)
	return t, t.Cores > 0 || t.Sockets > 0
}

// TopologyRecord is one CPU's physical_package_id and core_id.
type TopologyRecord struct{ Package, Core string }

// CountTopology counts distinct packages and (package, core) pairs. A
// package id of -1 (PowerVM partitions, some arm64 firmware) means the
// kernel does not know the package: sockets stay unknown.
func CountTopology(recs []TopologyRecord) Topology {
	pkgs, cores := map[string]bool{}, map[string]bool{}
	unknownPkg := false
	for _, r := range recs {
		if _, err := strconv.Atoi(r.Package); err != nil || r.Package == "-1" {
			unknownPkg = true
		} else {
			pkgs[r.Package] = true
		}
		if _, err := strconv.Atoi(r.Core); err == nil {
			cores[r.Package+"/"+r.Core] = true
		}
	}
	t := Topology{Cores: len(cores)}
	if !unknownPkg {
		t.Sockets = len(pkgs)
	}
	return t
}

// maxFreq is the highest cpuinfo_max_freq over the cpufreq policies (big
// and little clusters differ), in MHz.
func maxFreq(h *host.Host, dir string) (float64, bool) {
	var files []string
	if ents, err := h.FS.ReadDir(dir + "/cpufreq"); err == nil {
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "policy") {
				files = append(files, dir+"/cpufreq/"+e.Name()+"/cpuinfo_max_freq")
			}
		}
	}
	if len(files) == 0 {
		files = []string{dir + "/cpu0/cpufreq/cpuinfo_max_freq"}
	}
	best := 0.0
	for _, p := range files {
		s, err := h.ReadString(p)
		if err != nil {
			continue
		}
		if khz, err := strconv.ParseFloat(s, 64); err == nil && khz > 0 && khz < 1e9 {
			best = math.Max(best, khz/1000)
		}
	}
	return best, best > 0
}

// sortedUnique lower-cases, sorts and de-duplicates feature names.
func sortedUnique(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		s = strings.ToLower(strings.TrimSpace(s))
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
