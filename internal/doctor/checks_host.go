package doctor

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
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
	b, err := e.Host.FS.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	kb, ok := ParseMemTotalKB(b)
	return kb * 1024, ok
}

func mib(b int64) string { return strconv.FormatInt(b>>20, 10) + " MiB" }

var checkShm = &Check{
	ID:    "host.shm_size",
	Title: Text{EN: "/dev/shm large enough for DataLoader workers and NCCL", PL: "/dev/shm wystarczająco duży dla wątków DataLoader i NCCL"},
	Messages: map[string]Message{
		"pass":        {Detail: Text{EN: "/dev/shm is {size}", PL: "/dev/shm ma {size}"}},
		"skip_no_shm": {Detail: Text{EN: "no /dev/shm mount in /proc/mounts", PL: "brak montowania /dev/shm w /proc/mounts"}},
		"tiny": {
			Detail: Text{EN: "/dev/shm is only {size} (Docker's default is 64 MiB): PyTorch DataLoader workers die with \"Bus error ... out of shared memory\" and NCCL fails", PL: "/dev/shm ma tylko {size} (domyślnie w Dockerze 64 MiB): wątki DataLoader PyTorch kończą się błędem \"Bus error ... out of shared memory\", a NCCL zawodzi"},
			Fix:    Text{EN: "run the container with `--shm-size={want}` (or `--ipc=host`); on Kubernetes mount an emptyDir with medium: Memory at /dev/shm", PL: "uruchom kontener z `--shm-size={want}` (lub `--ipc=host`); w Kubernetes zamontuj emptyDir z medium: Memory w /dev/shm"},
		},
		"small": {
			Detail: Text{EN: "/dev/shm is {size}, under the 1 GiB per GPU multi-worker loading and NCCL want ({gpus} GPU(s))", PL: "/dev/shm ma {size}, mniej niż 1 GiB na kartę potrzebny przy wielu wątkach ładowania i NCCL (kart: {gpus})"},
			Fix:    Text{EN: "enlarge it: `--shm-size={want}` for containers, or `sudo mount -o remount,size={want} /dev/shm`", PL: "powiększ go: `--shm-size={want}` dla kontenerów albo `sudo mount -o remount,size={want} /dev/shm`"},
		},
	},
	Run: func(_ context.Context, e *Env) Finding {
		var size int64
		ev := []Evidence{}
		if e.Report != nil && e.Report.Host.ShmTotalMB != nil {
			size = *e.Report.Host.ShmTotalMB << 20
			ev = append(ev, Evidence{"probe host.shm_total_mb", strconv.FormatInt(*e.Report.Host.ShmTotalMB, 10)})
		} else {
			opt, src, found := "", "", false
			for _, p := range []string{"/proc/self/mountinfo", "/proc/mounts", "/proc/self/mounts"} {
				b, err := e.Host.FS.ReadFile(p)
				if err != nil {
					continue
				}
				if p == "/proc/self/mountinfo" {
					_, opt, found = ParseMountinfoOption(b, "/dev/shm", "size")
				} else {
					_, opt, found = ParseMountOption(b, "/dev/shm", "size")
				}
				if found {
					src = p
					break
				}
			}
			if !found {
				return skip("skip_no_shm", nil)
			}
			if s, ok := ParseSize(opt); ok {
				size = s
				ev = append(ev, Evidence{src + " /dev/shm", "size=" + opt})
			} else if total, ok := memTotal(e); ok {
				size = total / 2 // tmpfs default: half of RAM
				ev = append(ev, Evidence{src + " /dev/shm", "no size= (tmpfs default: half of MemTotal)"})
			} else {
				return skip("skip_no_shm", nil)
			}
		}
		gpus := e.gpuCount()
		want := int64(max(1, gpus)) << 30
		wantS := fmt.Sprintf("%dg", max(2, 2*gpus))
		args := Args{"size": mib(size), "gpus": strconv.Itoa(gpus), "want": wantS}
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

// ParseCPUMax reads cgroup v2 cpu.max ("max 100000" or "200000 100000").
func ParseCPUMax(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 || f[0] == "max" {
		return 0, len(f) > 0
	}
	q, err1 := strconv.ParseFloat(f[0], 64)
	period := 100000.0
	var err2 error
	if len(f) > 1 {
		period, err2 = strconv.ParseFloat(f[1], 64)
	}
	if err1 != nil || err2 != nil || q <= 0 || period <= 0 {
		return 0, false
	}
	return q / period, true
}

// readCgroupLimits follows /proc/self/cgroup to the cgroup directory and
// walks up to the root, taking the tightest limits (cgroup v2, then v1).
func readCgroupLimits(e *Env) CgroupLimits {
	var l CgroupLimits
	h := e.Host
	rel := "/"
	if b, err := h.FS.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if p, ok := strings.CutPrefix(line, "0::"); ok {
				rel = path.Clean("/" + strings.TrimSpace(p))
			}
		}
	}
	take := func(mem int64, memSrc string, cpu float64, cpuSrc string) {
		if mem > 0 && (l.MemoryBytes == 0 || mem < l.MemoryBytes) {
			l.MemoryBytes, l.MemorySrc = mem, memSrc
		}
		if cpu > 0 && (l.CPUQuota == 0 || cpu < l.CPUQuota) {
			l.CPUQuota, l.CPUSrc = cpu, cpuSrc
		}
	}
	if h.Exists("/sys/fs/cgroup/cgroup.controllers") {
		for dir := rel; ; dir = path.Dir(dir) {
			base := path.Join("/sys/fs/cgroup", dir)
			var mem int64
			var cpu float64
			if s, err := h.ReadString(base + "/memory.max"); err == nil && s != "max" {
				mem, _ = strconv.ParseInt(s, 10, 64)
			}
			if s, err := h.ReadString(base + "/cpu.max"); err == nil {
				cpu, _ = ParseCPUMax(s)
			}
			take(mem, base+"/memory.max", cpu, base+"/cpu.max")
			if dir == "/" {
				break
			}
		}
		return l
	}
	// cgroup v1: the container's own hierarchy is mounted at the root.
	if s, err := h.ReadString("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err == nil {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 && n < 1<<62 {
			take(n, "/sys/fs/cgroup/memory/memory.limit_in_bytes", 0, "")
		}
	}
	q, err1 := h.ReadString("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
	p, err2 := h.ReadString("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
	if err1 == nil && err2 == nil {
		qn, e1 := strconv.ParseFloat(q, 64)
		pn, e2 := strconv.ParseFloat(p, 64)
		if e1 == nil && e2 == nil && qn > 0 && pn > 0 {
			take(0, "", qn/pn, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
		}
	}
	return l
}

var checkCgroup = &Check{
	ID:    "host.cgroup_limits",
	Title: Text{EN: "cgroup memory and CPU limits match the host", PL: "Limity pamięci i CPU w cgroup odpowiadają hostowi"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "no cgroup memory or CPU limit below the host's ({mem} RAM, {cpus} CPUs)", PL: "brak limitów cgroup poniżej zasobów hosta ({mem} RAM, {cpus} CPU)"}},
		"limited": {
			Detail: Text{EN: "this process may use {what}, less than the host's {host}: sizing by the host's figures gets the job OOM-killed or oversubscribed", PL: "ten proces może użyć {what}, mniej niż host ({host}): planowanie według zasobów hosta skończy się zabiciem przez OOM lub przeciążeniem"},
			Fix:    Text{EN: "size the job to the limit (e.g. DataLoader num_workers ≤ {workers}), or raise it: `docker run --memory=... --cpus=...` / the pod's resources.limits", PL: "dopasuj zadanie do limitu (np. num_workers w DataLoader ≤ {workers}) albo go podnieś: `docker run --memory=... --cpus=...` / resources.limits poda"},
		},
	},
	Run: func(_ context.Context, e *Env) Finding {
		l := readCgroupLimits(e)
		total, haveMem := memTotal(e)
		cpus := 0
		if b, err := e.Host.FS.ReadFile("/proc/cpuinfo"); err == nil {
			cpus, _, _ = ParseCPUInfo(b)
		}
		args := Args{"mem": "?", "cpus": strconv.Itoa(cpus)}
		if haveMem {
			args["mem"] = mib(total)
		}
		var what, hostS []string
		var ev []Evidence
		if l.MemoryBytes > 0 && haveMem && l.MemoryBytes < total {
			what = append(what, mib(l.MemoryBytes)+" of memory")
			hostS = append(hostS, mib(total))
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
	ID:    "cpu.avx2",
	Title: Text{EN: "CPU has AVX2 (prebuilt wheels assume it)", PL: "Procesor obsługuje AVX2 (gotowe pakiety tego wymagają)"},
	Messages: map[string]Message{
		"pass":            {Detail: Text{EN: "CPU flags include avx2 and fma", PL: "flagi procesora zawierają avx2 i fma"}},
		"skip_no_cpuinfo": {Detail: Text{EN: "no /proc/cpuinfo and no CPU feature sysctl to read", PL: "brak /proc/cpuinfo i sysctl z cechami procesora"}},
		"no_avx": {
			Detail: Text{EN: "CPU has no AVX at all: jaxlib, TensorFlow and most PyTorch CPU kernels crash with \"Illegal instruction\"", PL: "procesor w ogóle nie obsługuje AVX: jaxlib, TensorFlow i większość jąder CPU PyTorch kończą się błędem \"Illegal instruction\""},
			Fix:    Text{EN: "use a machine (or VM CPU model) with AVX2: for QEMU/KVM set `-cpu host`; otherwise build the framework from source without AVX", PL: "użyj maszyny (lub modelu CPU w VM) z AVX2: w QEMU/KVM ustaw `-cpu host`; w przeciwnym razie zbuduj framework ze źródeł bez AVX"},
		},
		"no_avx2": {
			Detail: Text{EN: "CPU has AVX but not AVX2: wheels built for AVX2 (llama.cpp, recent TensorFlow, many CPU kernels) crash with \"Illegal instruction\" or run slowly", PL: "procesor ma AVX, ale nie AVX2: pakiety budowane dla AVX2 (llama.cpp, nowy TensorFlow, wiele jąder CPU) kończą się \"Illegal instruction\" albo działają wolno"},
			Fix:    Text{EN: "in a VM expose the host CPU (`-cpu host`, or a CPU model with AVX2); otherwise install builds without AVX2", PL: "w VM udostępnij procesor hosta (`-cpu host` lub model CPU z AVX2); w przeciwnym razie instaluj wersje bez AVX2"},
		},
	},
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
		b, err := h.FS.ReadFile("/proc/cpuinfo")
		if err != nil {
			if h.Arch != "amd64" && h.Arch != "386" {
				return skip("skip_not_x86", Args{"arch": h.Arch})
			}
			return skip("skip_no_cpuinfo", nil)
		}
		_, flags, x86 := ParseCPUInfo(b)
		if !x86 {
			arch := h.Arch
			if len(flags) > 0 {
				arch = "arm (Features line)"
			}
			return skip("skip_not_x86", Args{"arch": arch})
		}
		switch {
		case !flags["avx"]:
			return Finding{Status: Fail, Msg: "no_avx", Evidence: []Evidence{{"/proc/cpuinfo flags", "no avx"}}}
		case !flags["avx2"]:
			return Finding{Status: Warn, Msg: "no_avx2", Evidence: []Evidence{{"/proc/cpuinfo flags", "avx without avx2"}}}
		}
		return Finding{Status: Pass, Msg: "pass", Evidence: []Evidence{{"/proc/cpuinfo flags", "avx2"}}}
	},
}

var checkP2P = &Check{
	ID:    "multi_gpu.p2p_iommu",
	Title: Text{EN: "IOMMU/P2P settings will not hang NCCL", PL: "Ustawienia IOMMU/P2P nie zawieszą NCCL"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "{count} GPUs; {iommu}", PL: "kart: {count}; {iommu}"}},
		"translated": {
			Detail: Text{EN: "{count} GPUs with the IOMMU in translated mode ({cmdline}): GPU peer-to-peer traffic is redirected through the root complex and NCCL all-reduce can hang", PL: "{count} kart przy IOMMU w trybie translacji ({cmdline}): ruch peer-to-peer jest kierowany przez root complex i all-reduce NCCL może się zawiesić"},
			Fix:    Text{EN: "add `iommu=pt` to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then `sudo update-grub && sudo reboot`), or disable VT-d/IOMMU and PCIe ACS in the BIOS; `NCCL_P2P_DISABLE=1` is only a slow workaround", PL: "dodaj `iommu=pt` do parametrów jądra (GRUB_CMDLINE_LINUX w /etc/default/grub, potem `sudo update-grub && sudo reboot`) albo wyłącz VT-d/IOMMU i PCIe ACS w BIOS; `NCCL_P2P_DISABLE=1` to tylko wolne obejście"},
		},
		"p2p_disabled": {
			Detail: Text{EN: "NCCL_P2P_DISABLE={value} on a {count}-GPU machine: GPU-to-GPU traffic goes through host memory (several times slower)", PL: "NCCL_P2P_DISABLE={value} na maszynie z {count} kartami: ruch między kartami idzie przez pamięć hosta (kilka razy wolniej)"},
			Fix:    Text{EN: "fix the cause instead (IOMMU/ACS, see above) and `unset NCCL_P2P_DISABLE`", PL: "usuń przyczynę (IOMMU/ACS) i wykonaj `unset NCCL_P2P_DISABLE`"},
		},
	},
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
	ID:    "pcie.link_width",
	Title: Text{EN: "Accelerator PCIe links run at full width", PL: "Łącza PCIe akceleratorów działają z pełną szerokością"},
	Messages: map[string]Message{
		"skip_no_link": {Detail: Text{EN: "no accelerator with PCIe link information", PL: "brak akceleratora z informacją o łączu PCIe"}},
		"pass":         {Detail: Text{EN: "{count} accelerator link(s) at full width{gen}", PL: "łącza akceleratorów ({count}) mają pełną szerokość{gen}"}},
		"narrow": {
			Detail: Text{EN: "{dev} link is x{cur} of a possible x{max}: host↔device transfers run at a fraction of their bandwidth", PL: "łącze {dev} ma x{cur} z możliwych x{max}: transfery host↔urządzenie mają ułamek przepustowości"},
			Fix:    Text{EN: "reseat the card in a full-width slot (check the riser and the slot's electrical width in the board manual); `sudo lspci -vv -s {addr} | grep -i lnk` shows LnkCap vs LnkSta", PL: "osadź kartę ponownie w gnieździe o pełnej szerokości (sprawdź riser i szerokość elektryczną gniazda w instrukcji płyty); `sudo lspci -vv -s {addr} | grep -i lnk` pokaże LnkCap i LnkSta"},
		},
	},
	Run: func(ctx context.Context, e *Env) Finding {
		count := 0
		genNote := ""
		for _, d := range e.PCI() {
			accel := (d.IsDisplay() && (d.Vendor == VendorNVIDIA || d.Vendor == VendorAMD || d.Vendor == VendorIntel)) ||
				d.Vendor == VendorGoogle || (d.Vendor == VendorAmazon && d.Class>>16 != 0x02)
			if !accel || d.MaxWidth <= 0 || d.CurWidth <= 0 {
				continue
			}
			count++
			if d.CurWidth < d.MaxWidth {
				src := pciRoot + "/" + d.Address
				return Finding{Status: Warn, Msg: "narrow", Args: Args{"dev": d.Address, "cur": strconv.Itoa(d.CurWidth), "max": strconv.Itoa(d.MaxWidth), "addr": d.Address},
					Evidence: []Evidence{{src + "/current_link_width", strconv.Itoa(d.CurWidth)}, {src + "/max_link_width", strconv.Itoa(d.MaxWidth)}}}
			}
			if d.CurSpeed != "" && d.MaxSpeed != "" && d.CurSpeed != d.MaxSpeed {
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
					return Finding{Status: Warn, Msg: "narrow", Args: Args{"dev": devName(d), "cur": strconv.Itoa(*d.LinkWidthCur), "max": strconv.Itoa(*d.LinkWidthMax), "addr": d.BusID},
						Evidence: []Evidence{{"DeviceGetCurrPcieLinkWidth(" + idx + ")", strconv.Itoa(*d.LinkWidthCur)}, {"DeviceGetMaxPcieLinkWidth(" + idx + ")", strconv.Itoa(*d.LinkWidthMax)}}}
				}
			}
		}
		if count == 0 {
			return skip("skip_no_link", nil)
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(count), "gen": genNote}}
	},
}
