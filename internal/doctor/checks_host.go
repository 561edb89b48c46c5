package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/hw"
	"github.com/devctl/devctl/internal/hw/cpuinfo"
	"github.com/devctl/devctl/internal/hw/kernfs"
	"github.com/devctl/devctl/internal/hw/meminfo"
	"github.com/devctl/devctl/internal/units"
)

// gpuCount is the number of accelerators (for sizing advice), from the
// probe report or the PCI walk.
func (e *Env) gpuCount() int {
	if e.Report != nil && e.Report.Summary.GPUCount > 0 {
		return e.Report.Summary.GPUCount
	}
	n := 0
	for _, d := range e.PCI() {
		if d.IsDisplay() && (d.Vendor == VendorNVIDIA || d.Vendor == VendorAMD) {
			n++
		}
	}
	return n
}

func memTotal(e *Env) (int64, bool) {
	mi, err := meminfo.Read(e.Host)
	if err != nil || mi.Total == nil {
		return 0, false
	}
	return *mi.Total, true
}

var checkShm = &Check{
	ID: "host.shm_size",
	Run: func(_ context.Context, e *Env) Finding {
		var size int64
		ev := []Evidence{}
		if e.Report != nil && e.Report.Host.ShmTotalMB != nil {
			size = *e.Report.Host.ShmTotalMB << 20
			ev = append(ev, Evidence{"probe host.shm_total_mb", strconv.FormatInt(*e.Report.Host.ShmTotalMB, 10)})
		} else {
			// No probe report: the memory driver's own reading, so a
			// size=25% or a missing size= is understood the same way.
			f, err := meminfo.Read(e.Host)
			if err != nil || f.Shm == nil {
				return skip("skip_no_shm", nil)
			}
			size = *f.Shm
			how := "size= option"
			if f.ShmDefaulted {
				how = "no size= (tmpfs default: half of MemTotal)"
			}
			if f.ShmUnlimited {
				how = "size=0 (no limit but RAM)"
			}
			ev = append(ev, Evidence{"memory facts /dev/shm", how})
		}
		gpus := e.gpuCount()
		want := int64(max(1, gpus)) << 30
		wantS := fmt.Sprintf("%dg", max(2, 2*gpus))
		args := Args{"size": units.Bytes(size).Format(units.MiB, 0), "gpus": strconv.Itoa(gpus), "want": wantS}
		switch {
		case size < 256<<20:
			return Finding{Status: Fail, Msg: "tiny", Args: args, Evidence: ev}
		case size < want:
			return Finding{Status: Warn, Msg: "small", Args: args, Evidence: ev}
		}
		return Finding{Status: Pass, Msg: "pass", Args: args, Evidence: ev}
	},
}

// CgroupLimits are the effective limits of the process's cgroup: the
// tightest along the path up to the root (a parent's limit binds too).
type CgroupLimits struct {
	MemoryBytes int64   // 0: unlimited
	CPUQuota    float64 // CPUs; 0: unlimited
	MemorySrc   string
	CPUSrc      string
}

// readCgroupLimits takes the tightest memory and CPU limits on the
// process's cgroup and its ancestors, in both hierarchies: the same walk the
// probe's drivers made (kernfs.Shared reads it once per host).
func readCgroupLimits(e *Env) CgroupLimits {
	var l CgroupLimits
	cg := kernfs.Shared(e.Host)
	if m, ok := cg.MemoryLimit(); ok {
		l.MemoryBytes, l.MemorySrc = int64(m.Value), m.Path
	}
	if c, ok := cg.CPUQuota(); ok {
		l.CPUQuota, l.CPUSrc = c.Value, c.Path
	}
	return l
}

var checkCgroup = &Check{
	ID: "host.cgroup_limits",
	Run: func(_ context.Context, e *Env) Finding {
		if e.Host.OS != "linux" {
			return skip("skip_not_linux", Args{"os": e.Host.OS})
		}
		l := readCgroupLimits(e)
		total, haveMem := memTotal(e)
		cpus := hostCPUs(e)
		if !haveMem && cpus == 0 {
			return skip("skip_unknown", nil)
		}
		args := Args{"mem": "?", "cpus": strconv.Itoa(cpus)}
		if haveMem {
			args["mem"] = units.Bytes(total).Format(units.MiB, 0)
		}
		var what, hostS []string
		var ev []Evidence
		if l.MemoryBytes > 0 && haveMem && l.MemoryBytes < total {
			what = append(what, units.Bytes(l.MemoryBytes).Format(units.MiB, 0)+" of memory")
			hostS = append(hostS, units.Bytes(total).Format(units.MiB, 0))
			ev = append(ev, Evidence{l.MemorySrc, strconv.FormatInt(l.MemoryBytes, 10)})
		}
		workers := cpus
		if l.CPUQuota > 0 && (cpus == 0 || l.CPUQuota < float64(cpus)) {
			what = append(what, strconv.FormatFloat(l.CPUQuota, 'g', 4, 64)+" CPUs")
			hostS = append(hostS, strconv.Itoa(cpus)+" CPUs")
			ev = append(ev, Evidence{l.CPUSrc, strconv.FormatFloat(l.CPUQuota, 'g', 4, 64)})
			workers = int(l.CPUQuota)
		}
		if len(what) == 0 {
			return Finding{Status: Pass, Msg: "pass", Args: args}
		}
		args["what"] = strings.Join(what, " and ")
		args["host"] = strings.Join(hostS, ", ")
		args["workers"] = strconv.Itoa(max(workers, 1))
		return Finding{Status: Warn, Msg: "limited", Args: args, Evidence: ev}
	},
}

var checkAVX2 = &Check{
	ID: "cpu.avx2",
	Run: func(_ context.Context, e *Env) Finding {
		h := e.Host
		if h.OS == "darwin" {
			if h.Arch != "amd64" {
				return skip("skip_not_x86", Args{"arch": h.Arch})
			}
			s, err := h.Sysctl.Get("machdep.cpu.leaf7_features")
			if err != nil {
				return skip("skip_no_cpuinfo", nil)
			}
			if strings.Contains(strings.ToUpper(s), "AVX2") {
				return Finding{Status: Pass, Msg: "pass", Evidence: []Evidence{{"sysctl machdep.cpu.leaf7_features", "AVX2"}}}
			}
			return Finding{Status: Warn, Msg: "no_avx2", Evidence: []Evidence{{"sysctl machdep.cpu.leaf7_features", s}}}
		}
		info, err := cpuinfo.Read(h)
		if err != nil {
			if h.Arch != "amd64" && h.Arch != "386" {
				return skip("skip_not_x86", Args{"arch": h.Arch})
			}
			if !errors.Is(err, hw.ErrAbsent) {
				// Present but unreadable (over the 16 MiB bound, no
				// permission): say so rather than "no /proc/cpuinfo".
				return skip("skip_unreadable_cpuinfo", Args{"error": err.Error()})
			}
			return skip("skip_no_cpuinfo", nil)
		}
		if info.Arch != "amd64" && info.Arch != "386" {
			arch := h.Arch
			if info.Arch == "arm" || info.Arch == "arm64" {
				arch = "arm (Features line)"
			}
			return skip("skip_not_x86", Args{"arch": arch})
		}
		switch {
		case !slices.Contains(info.Features, "avx"):
			return Finding{Status: Fail, Msg: "no_avx", Evidence: []Evidence{{"/proc/cpuinfo flags", "no avx"}}}
		case !slices.Contains(info.Features, "avx2"):
			return Finding{Status: Warn, Msg: "no_avx2", Evidence: []Evidence{{"/proc/cpuinfo flags", "avx without avx2"}}}
		}
		return Finding{Status: Pass, Msg: "pass", Evidence: []Evidence{{"/proc/cpuinfo flags", "avx2"}}}
	},
}

var checkP2P = &Check{
	ID: "multi_gpu.p2p_iommu",
	Run: func(_ context.Context, e *Env) Finding {
		n := e.gpuCount()
		if n < 2 {
			return skip("skip_one_gpu", Args{"count": strconv.Itoa(n)})
		}
		count := strconv.Itoa(n)
		cmdline, _ := e.Host.ReadString("/proc/cmdline")
		groups := 0
		if ents, err := e.Host.FS.ReadDir("/sys/kernel/iommu_groups"); err == nil {
			groups = len(ents)
		}
		passthrough := false
		var on []string
		for _, f := range strings.Fields(cmdline) {
			switch f {
			case "iommu=pt", "amd_iommu=pt", "intel_iommu=pt":
				passthrough = true
			case "intel_iommu=on", "amd_iommu=on", "amd_iommu=force_isolation", "iommu=force", "iommu.passthrough=0":
				on = append(on, f)
			case "iommu.passthrough=1", "iommu=off", "intel_iommu=off", "amd_iommu=off":
				passthrough = true
			}
		}
		ev := []Evidence{{"/proc/cmdline", orNone(strings.Join(on, " "))}, {"/sys/kernel/iommu_groups", strconv.Itoa(groups) + " group(s)"}}
		if groups > 0 && !passthrough && len(on) > 0 {
			return Finding{Status: Warn, Msg: "translated", Args: Args{"count": count, "cmdline": strings.Join(on, " ")}, Evidence: ev}
		}
		if v, ok := e.Host.LookupEnv("NCCL_P2P_DISABLE"); ok && v != "0" && v != "" {
			return Finding{Status: Warn, Msg: "p2p_disabled", Args: Args{"count": count, "value": v}, Evidence: []Evidence{{"env NCCL_P2P_DISABLE", v}}}
		}
		state := "IOMMU off"
		if groups > 0 {
			state = "IOMMU in passthrough mode (iommu=pt) or default"
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": count, "iommu": state}, Evidence: ev}
	},
}

var checkPCIeLink = &Check{
	ID: "pcie.link_width",
	// Every accelerator below its maximum width is reported: on an
	// eight-GPU node the one narrow link named first is rarely the only one.
	Run: func(ctx context.Context, e *Env) Finding {
		count := 0
		genNote := ""
		type narrow struct{ dev, cur, max, addr string }
		var slow []narrow
		var ev []Evidence
		for _, d := range e.PCI() {
			accel := (d.IsDisplay() && (d.Vendor == VendorNVIDIA || d.Vendor == VendorAMD || d.Vendor == VendorIntel)) ||
				d.Vendor == VendorGoogle || (d.Vendor == VendorAmazon && d.Class>>16 != 0x02)
			if !accel || d.Max.Width <= 0 || d.Current.Width <= 0 {
				continue
			}
			count++
			if d.Current.Width < d.Max.Width {
				src := pciRoot + "/" + d.Address
				slow = append(slow, narrow{d.Address, strconv.Itoa(d.Current.Width), strconv.Itoa(d.Max.Width), d.Address})
				ev = append(ev, Evidence{src + "/current_link_width", strconv.Itoa(d.Current.Width)}, Evidence{src + "/max_link_width", strconv.Itoa(d.Max.Width)})
			}
			if d.Current.Speed != "" && d.Max.Speed != "" && d.Current.Speed != d.Max.Speed {
				genNote = " (speed below maximum while idle is normal power saving)"
			}
		}
		if nv, _ := e.NVIDIA(ctx); nv != nil && nv.Usable && count == 0 {
			for _, d := range nv.Devices {
				if d.LinkWidthCur == nil || d.LinkWidthMax == nil || *d.LinkWidthMax <= 0 {
					continue
				}
				count++
				if *d.LinkWidthCur < *d.LinkWidthMax {
					idx := strconv.Itoa(d.Index)
					slow = append(slow, narrow{devName(d), strconv.Itoa(*d.LinkWidthCur), strconv.Itoa(*d.LinkWidthMax), d.BusID})
					ev = append(ev, Evidence{"DeviceGetCurrPcieLinkWidth(" + idx + ")", strconv.Itoa(*d.LinkWidthCur)}, Evidence{"DeviceGetMaxPcieLinkWidth(" + idx + ")", strconv.Itoa(*d.LinkWidthMax)})
				}
			}
		}
		switch {
		case len(slow) == 1:
			n := slow[0]
			return Finding{Status: Warn, Msg: "narrow", Args: Args{"dev": n.dev, "cur": n.cur, "max": n.max, "addr": n.addr}, Evidence: ev}
		case len(slow) > 1:
			parts := make([]string, len(slow))
			for i, n := range slow {
				parts[i] = n.dev + " x" + n.cur + "/x" + n.max
			}
			return Finding{Status: Warn, Msg: "narrow_many", Args: Args{"n": strconv.Itoa(len(slow)), "of": strconv.Itoa(count), "list": strings.Join(parts, ", ")}, Evidence: ev}
		case count == 0:
			return skip("skip_no_link", nil)
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(count), "gen": genNote}}
	},
}

// hostCPUs is the machine's logical CPU count: the probe's CPU device
// (which understands every architecture's cpuinfo) when there is one, else
// a count of /proc/cpuinfo processors. The cpuset narrows the probe's figure,
// so the online count it keeps in extra is preferred.
func hostCPUs(e *Env) int {
	for _, d := range e.Devices("cpu") {
		if d.CPU != nil && d.CPU.OnlineCPUs > 0 {
			return d.CPU.OnlineCPUs
		}
		if d.LogicalCPUs != nil && *d.LogicalCPUs > 0 {
			return *d.LogicalCPUs
		}
	}
	if ci, err := cpuinfo.Read(e.Host); err == nil {
		return ci.Processors
	}
	return 0
}
