package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/hw/pci"
)

const kfdTopology = "/sys/class/kfd/kfd/topology/nodes"

// amdGPUs counts KFD nodes with SIMDs (JAX's rule), or AMD display
// functions on the PCI bus when KFD is absent.
func amdGPUs(e *Env) (int, bool) {
	n := 0
	kfd := false
	if ents, err := e.Host.FS.ReadDir(kfdTopology); err == nil {
		kfd = true
		for _, ent := range ents {
			b, err := e.Host.FS.ReadFile(kfdTopology + "/" + ent.Name() + "/properties")
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "simd_count" && f[1] != "0" {
					n++
				}
			}
		}
	}
	if n == 0 {
		n = len(e.pciOf(VendorAMD, true))
	}
	return n, kfd
}

var checkROCm = &Check{
	ID: "rocm.kfd_access",
	Run: func(_ context.Context, e *Env) Finding {
		n, _ := amdGPUs(e)
		if n == 0 {
			return skip("skip_no_amd", nil)
		}
		id := e.Host.Identity
		st, err := e.Host.FS.Stat("/dev/kfd")
		if err != nil {
			return Finding{Status: Fail, Msg: "no_kfd", Args: Args{"count": strconv.Itoa(n)}, Evidence: []Evidence{{"/dev/kfd", "missing"}}}
		}
		nodes := []string{"/dev/kfd"}
		check := func(node string, mode string, ok bool) *Finding {
			if ok {
				return nil
			}
			return &Finding{Status: Fail, Msg: "no_access", Args: Args{"node": node, "mode": mode, "uid": strconv.Itoa(id.UID), "groups": groupList(id.Groups)},
				Evidence: []Evidence{{node, mode}, {"identity groups", groupList(id.Groups)}}}
		}
		if f := check("/dev/kfd", st.Mode().Perm().String(), accessible(st.Mode(), id.UID, id.Groups, "render", "video")); f != nil {
			return *f
		}
		if ents, err := e.Host.FS.ReadDir("/dev/dri"); err == nil {
			for _, ent := range ents {
				if !strings.HasPrefix(ent.Name(), "renderD") {
					continue
				}
				p := "/dev/dri/" + ent.Name()
				st, err := e.Host.FS.Stat(p)
				if err != nil {
					continue
				}
				nodes = append(nodes, p)
				if f := check(p, st.Mode().Perm().String(), accessible(st.Mode(), id.UID, id.Groups, "render", "video")); f != nil {
					return *f
				}
			}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(n), "nodes": strings.Join(nodes, ", "), "uid": strconv.Itoa(id.UID)}}
	},
}

// TPU generations by PCI device id (jax hardware_utils, tpu-info, torch_xla).
var tpuGen = map[uint16]string{0x0027: "v2/v3", 0x0056: "v4lite", 0x005e: "v4", 0x0062: "v5p", 0x0063: "v5e", 0x006f: "v6e", 0x0076: "7x"}

// tpuModern reports a generation that wants transparent hugepages (v5e+).
func tpuModern(id uint16) bool {
	switch id {
	case 0x0062, 0x0063, 0x006f, 0x0076:
		return true
	}
	return false
}

// tpuChips returns the TPU chips on the PCI bus, or the skip finding to
// return when there are none (as nvml does for the NVIDIA checks).
func tpuChips(e *Env) ([]pci.Device, *Finding) {
	tpus := e.pciOf(VendorGoogle, false)
	if len(tpus) == 0 {
		f := skip("skip_no_tpu", nil)
		return nil, &f
	}
	return tpus, nil
}

var checkTPUInUse = &Check{
	ID: "tpu.in_use",
	Run: func(_ context.Context, e *Env) Finding {
		tpus, sk := tpuChips(e)
		if sk != nil {
			return *sk
		}
		gen := tpuGen[tpus[0].Device]
		if gen == "" {
			gen = fmt.Sprintf("device 0x%04x", tpus[0].Device)
		}
		nodes := map[string]bool{}
		if ents, err := e.Host.FS.ReadDir("/dev"); err == nil {
			for _, ent := range ents {
				if strings.HasPrefix(ent.Name(), "accel") {
					nodes["/dev/"+ent.Name()] = true
				}
			}
		}
		if ents, err := e.Host.FS.ReadDir("/dev/vfio"); err == nil {
			for _, ent := range ents {
				if isDigits(ent.Name()) {
					nodes["/dev/vfio/"+ent.Name()] = true
				}
			}
		}
		var names []string
		for n := range nodes {
			names = append(names, n)
		}
		procs, _ := e.Host.FS.ReadDir("/proc")
		denied := 0
		for _, p := range procs {
			if !isDigits(p.Name()) {
				continue
			}
			fds, err := e.Host.FS.ReadDir("/proc/" + p.Name() + "/fd")
			if err != nil {
				denied++
				continue
			}
			for _, fd := range fds {
				t, err := e.Host.FS.Readlink("/proc/" + p.Name() + "/fd/" + fd.Name())
				if err == nil && nodes[t] {
					comm, _ := e.Host.ReadString("/proc/" + p.Name() + "/comm")
					return Finding{Status: Fail, Msg: "busy", Args: Args{"pid": p.Name(), "comm": orUnknown(comm), "node": t},
						Evidence: []Evidence{{"/proc/" + p.Name() + "/fd/" + fd.Name(), t}}}
				}
			}
		}
		note := ""
		if denied > 0 {
			note = fmt.Sprintf(" (could not inspect %d processes; run as root to see all)", denied)
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(len(tpus)), "gen": gen, "nodes": orNone(strings.Join(sortStrings(names), ", ")), "note": note}}
	},
}

func sortStrings(ss []string) []string {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j] < ss[j-1]; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
	return ss
}

const thpFile = "/sys/kernel/mm/transparent_hugepage/enabled"

var checkTPUHugepages = &Check{
	ID: "tpu.hugepages",
	Run: func(_ context.Context, e *Env) Finding {
		tpus, sk := tpuChips(e)
		if sk != nil {
			return *sk
		}
		gen := tpuGen[tpus[0].Device]
		if !tpuModern(tpus[0].Device) {
			return skip("skip_old", Args{"gen": orUnknown(gen)})
		}
		v, err := e.Host.ReadString(thpFile)
		if err != nil {
			v = "missing"
		}
		ev := []Evidence{{thpFile, v}}
		if !strings.Contains(v, "[always]") {
			return Finding{Status: Warn, Msg: "off", Args: Args{"gen": gen, "value": v}, Evidence: ev}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"gen": gen, "value": v}, Evidence: ev}
	},
}

var tpuBoundsVars = []string{"TPU_PROCESS_BOUNDS", "TPU_CHIPS_PER_PROCESS_BOUNDS", "TPU_HOST_BOUNDS", "TPU_CHIPS_PER_HOST_BOUNDS"}

// validBounds accepts "1,1,1"-style triples of positive integers.
func validBounds(v string) bool {
	parts := strings.Split(strings.TrimSpace(v), ",")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return false
		}
	}
	return true
}

// validAcceleratorType accepts ^v\d+[a-zA-Z]*-\d+$ (v4-16, v5litepod-8).
func validAcceleratorType(v string) bool {
	if len(v) < 4 || v[0] != 'v' {
		return false
	}
	i := 1
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 1 {
		return false
	}
	for i < len(v) && ((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z')) {
		i++
	}
	if i >= len(v) || v[i] != '-' || i+1 >= len(v) {
		return false
	}
	return isDigits(v[i+1:])
}

var checkTPUEnv = &Check{
	ID: "tpu.env_bounds",
	Run: func(_ context.Context, e *Env) Finding {
		h := e.Host
		var set []string
		for _, name := range tpuBoundsVars {
			if v, ok := h.LookupEnv(name); ok {
				set = append(set, name)
				if !validBounds(v) {
					return Finding{Status: Fail, Msg: "bad_bounds", Args: Args{"var": name, "value": v}, Evidence: []Evidence{{"env " + name, v}}}
				}
			}
		}
		addr, haveAddr := h.LookupEnv("TPU_PROCESS_ADDRESSES")
		if haveAddr {
			set = append(set, "TPU_PROCESS_ADDRESSES")
		}
		if v, ok := h.LookupEnv("TPU_VISIBLE_CHIPS"); ok {
			set = append(set, "TPU_VISIBLE_CHIPS")
			_ = v
		}
		tpus := e.pciOf(VendorGoogle, false)
		if len(set) > 0 && len(tpus) == 0 {
			return Finding{Status: Warn, Msg: "stray", Args: Args{"vars": strings.Join(set, " ")}, Evidence: []Evidence{{pciRoot, "no 0x1ae0 device"}}}
		}
		if haveAddr {
			n := len(strings.Split(addr, ","))
			hosts, _ := h.LookupEnv("TPU_WORKER_HOSTNAMES")
			single := hosts == "" || !strings.Contains(hosts, ",")
			if n > 1 && single {
				return Finding{Status: Warn, Msg: "addresses", Args: Args{"n": strconv.Itoa(n)}, Evidence: []Evidence{{"env TPU_PROCESS_ADDRESSES", addr}, {"env TPU_WORKER_HOSTNAMES", orNone(hosts)}}}
			}
		}
		if v, ok := h.LookupEnv("TPU_ACCELERATOR_TYPE"); ok && !validAcceleratorType(v) {
			return Finding{Status: Warn, Msg: "bad_type", Args: Args{"value": v}, Evidence: []Evidence{{"env TPU_ACCELERATOR_TYPE", v}}}
		}
		summary := "no TPU topology variables set"
		if len(set) > 0 {
			summary = "set and consistent: " + strings.Join(set, ", ")
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"summary": summary}}
	},
}
