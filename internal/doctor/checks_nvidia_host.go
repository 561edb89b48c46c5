package doctor

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Paths the NVIDIA checks read.
const (
	nvVersionFile = "/proc/driver/nvidia/version"
	nvGPUsDir     = "/proc/driver/nvidia/gpus"
	ldCache       = "/etc/ld.so.cache"
	secureBootVar = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
)

// nvidiaPresent reports whether the machine has an NVIDIA GPU by any sign:
// a display-class 0x10de function, the kernel module's proc file, or a cuda
// device in the probe report.
func (e *Env) nvidiaPresent() bool {
	return len(e.pciOf(VendorNVIDIA, true)) > 0 || e.Host.Exists(nvVersionFile) || len(e.Devices("cuda")) > 0
}

var checkDriverLoaded = &Check{
	ID:  "nvidia.driver_loaded",
	Run: runDriverLoaded,
}

func runDriverLoaded(_ context.Context, e *Env) Finding {
	gpus := e.pciOf(VendorNVIDIA, true)
	version := ""
	if b, err := e.Host.FS.ReadFile(nvVersionFile); err == nil {
		version = ParseNvidiaVersion(b)
	}
	if len(gpus) == 0 {
		if version != "" {
			return Finding{Status: Pass, Msg: "pass", Args: Args{"count": "0 visible", "version": version},
				Evidence: []Evidence{{nvVersionFile, version}}}
		}
		return skip("skip_no_nvidia", nil)
	}
	for _, g := range gpus {
		ev := []Evidence{{pciRoot + "/" + g.Address + "/driver", orNone(g.Driver)}}
		switch g.Driver {
		case "nouveau":
			return Finding{Status: Fail, Msg: "nouveau", Args: Args{"addr": g.Address}, Evidence: ev}
		case "vfio-pci":
			return Finding{Status: Warn, Msg: "vfio", Args: Args{"addr": g.Address}, Evidence: ev}
		case "nvidia":
		default:
			if version != "" && g.Driver == "" {
				// A proc file without a bound device: the module is loaded but
				// did not claim this GPU (an unsupported or too-new GPU).
				continue
			}
			why := nvVersionFile + " missing"
			if e.Host.Exists("/sys/module/nouveau") {
				why += ", /sys/module/nouveau present"
			}
			ev = append(ev, Evidence{nvVersionFile, "missing"})
			if b, err := e.Host.FS.ReadFile(secureBootVar); err == nil && len(b) > 0 && b[len(b)-1] == 1 {
				ev = append(ev, Evidence{secureBootVar, "enabled"})
				return Finding{Status: Fail, Msg: "secure_boot", Args: Args{"addr": g.Address}, Evidence: ev}
			}
			if version == "" {
				return Finding{Status: Fail, Msg: "no_driver", Args: Args{"addr": g.Address, "why": why}, Evidence: ev}
			}
		}
	}
	if version == "" {
		version = "unknown"
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(len(gpus)), "version": version},
		Evidence: []Evidence{{nvVersionFile, version}}}
}

var checkVersionMatch = &Check{
	ID:  "nvidia.version_match",
	Run: runVersionMatch,
}

// libDirs are where distributions and containers put libnvidia-ml.
var libDirs = []string{
	"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
	"/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/wsl/lib",
}

// findNVMLLibrary returns the user-space driver version from the versioned
// libnvidia-ml file and where it was found.
func findNVMLLibrary(e *Env) (version, where string) {
	h := e.Host
	if b, err := h.FS.ReadFile(ldCache); err == nil {
		for _, p := range ParseLDCache(b, "libnvidia-ml.so") {
			if v := libVersion(p, "libnvidia-ml"); v != "" {
				return v, ldCache + " -> " + p
			}
			if t, err := h.FS.Readlink(p); err == nil {
				if v := libVersion(t, "libnvidia-ml"); v != "" {
					return v, p + " -> " + t
				}
				// one more hop: .so -> .so.1 -> .so.<ver>
				if !strings.HasPrefix(t, "/") {
					t = path.Join(path.Dir(p), t)
				}
				if t2, err := h.FS.Readlink(t); err == nil {
					if v := libVersion(t2, "libnvidia-ml"); v != "" {
						return v, t + " -> " + t2
					}
				}
			}
		}
	}
	for _, dir := range libDirs {
		ents, err := h.FS.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			if v := libVersion(ent.Name(), "libnvidia-ml"); v != "" {
				return v, dir + "/" + ent.Name()
			}
		}
	}
	return "", ""
}

func runVersionMatch(ctx context.Context, e *Env) Finding {
	b, err := e.Host.FS.ReadFile(nvVersionFile)
	kernel := ""
	if err == nil {
		kernel = ParseNvidiaVersion(b)
	}
	if kernel == "" {
		if !e.nvidiaPresent() {
			return skip("skip_no_nvidia", nil)
		}
		return skip("no_module", Args{"path": nvVersionFile})
	}
	ev := []Evidence{{nvVersionFile, kernel}}
	lib, where := "", ""
	if nv, _ := e.NVIDIA(ctx); nv != nil && nv.Usable && nv.DriverVersion != "" {
		lib, where = nv.DriverVersion, "NVML SystemGetDriverVersion"
	} else {
		lib, where = findNVMLLibrary(e)
	}
	if lib == "" {
		return Finding{Status: Skip, Msg: "no_library", Args: Args{"kernel": kernel}, Evidence: ev}
	}
	ev = append(ev, Evidence{where, lib})
	if lib != kernel {
		return Finding{Status: Fail, Msg: "mismatch", Args: Args{"kernel": kernel, "library": lib}, Evidence: ev}
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"version": kernel}, Evidence: ev}
}

var checkDeviceNodes = &Check{
	ID:  "nvidia.device_nodes",
	Run: runDeviceNodes,
}

// nvidiaMinors lists the device minors the driver reports per GPU
// (/proc/driver/nvidia/gpus/<bdf>/information "Device Minor: 0"); when the
// file is missing it assumes 0..n-1 for n PCI GPUs.
func nvidiaMinors(e *Env) []int {
	var minors []int
	if ents, err := e.Host.FS.ReadDir(nvGPUsDir); err == nil {
		for _, ent := range ents {
			b, err := e.Host.FS.ReadFile(nvGPUsDir + "/" + ent.Name() + "/information")
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(line, "Device Minor:"); ok {
					if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && n >= 0 && n < 256 {
						minors = append(minors, n)
					}
				}
			}
		}
	}
	if len(minors) == 0 {
		for i := range e.pciOf(VendorNVIDIA, true) {
			minors = append(minors, i)
		}
	}
	sort.Ints(minors)
	return minors
}

// accessible reports whether identity may open a node read/write, from its
// mode bits alone (devctl makes no syscalls against the target): world rw,
// group rw with the user in one of groups, owner rw with uid 0.
func accessible(mode fs.FileMode, uid int, userGroups []string, groups ...string) bool {
	if uid == 0 {
		return true
	}
	p := mode.Perm()
	if p&0o006 == 0o006 {
		return true
	}
	if p&0o060 == 0o060 {
		for _, g := range userGroups {
			for _, want := range groups {
				if g == want {
					return true
				}
			}
		}
	}
	return false
}

func runDeviceNodes(_ context.Context, e *Env) Finding {
	if !e.nvidiaPresent() {
		return skip("skip_no_nvidia", nil)
	}
	if e.Host.Exists("/dev/dxg") {
		return Finding{Status: Skip, Msg: "skip_wsl", Evidence: []Evidence{{"/dev/dxg", "present"}}}
	}
	nodes := []string{"/dev/nvidiactl"}
	for _, m := range nvidiaMinors(e) {
		nodes = append(nodes, fmt.Sprintf("/dev/nvidia%d", m))
	}
	nodes = append(nodes, "/dev/nvidia-uvm")
	id := e.Host.Identity
	for _, n := range nodes {
		st, err := e.Host.FS.Stat(n)
		if err != nil {
			msg := "missing"
			if n == "/dev/nvidia-uvm" {
				msg = "missing_uvm"
			}
			return Finding{Status: Fail, Msg: msg, Args: Args{"node": n}, Evidence: []Evidence{{n, "missing"}}}
		}
		if !accessible(st.Mode(), id.UID, id.Groups, "video", "nvidia") {
			return Finding{Status: Fail, Msg: "no_access", Args: Args{
				"node": n, "mode": st.Mode().Perm().String(), "uid": strconv.Itoa(id.UID), "groups": groupList(id.Groups),
			}, Evidence: []Evidence{{n, st.Mode().Perm().String()}}}
		}
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"nodes": strings.Join(nodes, ", "), "uid": strconv.Itoa(id.UID)}}
}

func groupList(gs []string) string {
	if len(gs) == 0 {
		return "none"
	}
	return strings.Join(gs, ",")
}
