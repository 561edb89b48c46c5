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
	ID:    "nvidia.driver_loaded",
	Title: Text{EN: "NVIDIA kernel driver bound to every GPU", PL: "Sterownik jądra NVIDIA obsługuje każdą kartę"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "{count} NVIDIA GPU(s) bound to the nvidia driver, kernel module {version}", PL: "{count} kart(y) NVIDIA obsługiwanych przez sterownik nvidia, moduł jądra {version}"}},
		"nouveau": {
			Detail: Text{EN: "GPU {addr} is bound to nouveau, the open-source display driver: CUDA cannot use it", PL: "karta {addr} jest obsługiwana przez nouveau (otwarty sterownik grafiki): CUDA nie może jej użyć"},
			Fix:    Text{EN: "install the NVIDIA driver and blacklist nouveau: `sudo apt install nvidia-driver-550 && echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot`", PL: "zainstaluj sterownik NVIDIA i zablokuj nouveau: `sudo apt install nvidia-driver-550 && echo 'blacklist nouveau' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot`"},
		},
		"vfio": {
			Detail: Text{EN: "GPU {addr} is bound to vfio-pci (passed through to a virtual machine), not to nvidia", PL: "karta {addr} jest przypisana do vfio-pci (przekazana do maszyny wirtualnej), a nie do nvidia"},
			Fix:    Text{EN: "if this host should use the GPU, unbind it from vfio-pci (remove it from vfio-pci.ids in /etc/modprobe.d) and reboot", PL: "jeśli ten host ma używać karty, odłącz ją od vfio-pci (usuń z vfio-pci.ids w /etc/modprobe.d) i uruchom ponownie"},
		},
		"no_driver": {
			Detail: Text{EN: "GPU {addr} is on the PCI bus but no NVIDIA kernel module is loaded ({why})", PL: "karta {addr} jest na magistrali PCI, ale moduł jądra NVIDIA nie jest załadowany ({why})"},
			Fix:    Text{EN: "load the module: `sudo modprobe nvidia`; if it fails, (re)install the driver: `sudo apt install --reinstall nvidia-driver-550` (or `sudo ubuntu-drivers install`) and reboot", PL: "załaduj moduł: `sudo modprobe nvidia`; jeśli to nie działa, (prze)instaluj sterownik: `sudo apt install --reinstall nvidia-driver-550` (lub `sudo ubuntu-drivers install`) i uruchom ponownie"},
		},
		"secure_boot": {
			Detail: Text{EN: "GPU {addr} has no NVIDIA kernel module loaded and Secure Boot is on: an unsigned DKMS module is refused at load", PL: "karta {addr} nie ma załadowanego modułu NVIDIA, a Secure Boot jest włączony: niepodpisany moduł DKMS zostaje odrzucony"},
			Fix:    Text{EN: "enrol the DKMS signing key (`sudo mokutil --import /var/lib/shim-signed/mok/MOK.der`, then reboot and confirm) or disable Secure Boot in the firmware", PL: "zarejestruj klucz podpisu DKMS (`sudo mokutil --import /var/lib/shim-signed/mok/MOK.der`, restart i potwierdzenie) albo wyłącz Secure Boot w firmware"},
		},
	},
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

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

var checkVersionMatch = &Check{
	ID:    "nvidia.version_match",
	Title: Text{EN: "NVIDIA kernel module and user-space library versions match", PL: "Wersje modułu jądra NVIDIA i biblioteki użytkownika są zgodne"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "kernel module and libnvidia-ml are both {version}", PL: "moduł jądra i libnvidia-ml mają tę samą wersję {version}"}},
		"mismatch": {
			Detail: Text{EN: "kernel module {kernel} but user-space library {library}: NVML and CUDA fail with \"Driver/library version mismatch\" (typically after an unattended driver upgrade)", PL: "moduł jądra {kernel}, ale biblioteka użytkownika {library}: NVML i CUDA zgłoszą \"Driver/library version mismatch\" (zwykle po automatycznej aktualizacji sterownika)"},
			Fix:    Text{EN: "reboot to load the new module (`sudo reboot`), or without rebooting: stop GPU processes, then `sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`", PL: "uruchom ponownie, aby załadować nowy moduł (`sudo reboot`), albo bez restartu: zatrzymaj procesy GPU i wykonaj `sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia`"},
		},
		"no_module":  {Detail: Text{EN: "no kernel module version ({path} missing): nothing to compare", PL: "brak wersji modułu jądra (brak {path}): nie ma czego porównać"}},
		"no_library": {Detail: Text{EN: "kernel module {kernel}, no libnvidia-ml.so.<version> found in the ld cache or library directories", PL: "moduł jądra {kernel}, nie znaleziono libnvidia-ml.so.<wersja> w pamięci ld ani w katalogach bibliotek"}},
	},
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
	ID:    "nvidia.device_nodes",
	Title: Text{EN: "NVIDIA device nodes exist and are accessible", PL: "Pliki urządzeń NVIDIA istnieją i są dostępne"},
	Messages: map[string]Message{
		"skip_wsl": {Detail: Text{EN: "WSL2 (/dev/dxg): the GPU is reached through /dev/dxg, not /dev/nvidia*", PL: "WSL2 (/dev/dxg): karta jest dostępna przez /dev/dxg, a nie /dev/nvidia*"}},
		"pass":     {Detail: Text{EN: "{nodes} present and read/write for uid {uid}", PL: "{nodes} istnieją i są do odczytu/zapisu dla uid {uid}"}},
		"missing": {
			Detail: Text{EN: "{node} is missing: CUDA cannot open the GPU", PL: "brak {node}: CUDA nie może otworzyć karty"},
			Fix:    Text{EN: "create the nodes: `sudo nvidia-modprobe -c=0 -u` (or `sudo nvidia-smi` once as root); in a container, start it with `--gpus all` / the NVIDIA runtime", PL: "utwórz pliki urządzeń: `sudo nvidia-modprobe -c=0 -u` (lub raz `sudo nvidia-smi`); w kontenerze uruchom go z `--gpus all` / środowiskiem NVIDIA"},
		},
		"missing_uvm": {
			Detail: Text{EN: "{node} is missing: CUDA fails with \"unknown error\" (999), typically after suspend/resume or when nvidia_uvm did not load", PL: "brak {node}: CUDA zgłasza \"unknown error\" (999), zwykle po uśpieniu/wybudzeniu albo gdy nvidia_uvm się nie załadował"},
			Fix:    Text{EN: "load the unified-memory module: `sudo nvidia-modprobe -u -c=0` (or `sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm`)", PL: "załaduj moduł pamięci zunifikowanej: `sudo nvidia-modprobe -u -c=0` (lub `sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm`)"},
		},
		"no_access": {
			Detail: Text{EN: "{node} is {mode}: uid {uid} (groups {groups}) cannot open it read/write", PL: "{node} ma uprawnienia {mode}: uid {uid} (grupy {groups}) nie może go otworzyć do odczytu i zapisu"},
			Fix:    Text{EN: "add yourself to the device group and log in again: `sudo usermod -aG video $USER`, or make the nodes world-accessible via NVreg_DeviceFileMode=0666 in /etc/modprobe.d/nvidia.conf", PL: "dodaj się do grupy urządzeń i zaloguj ponownie: `sudo usermod -aG video $USER`, albo ustaw NVreg_DeviceFileMode=0666 w /etc/modprobe.d/nvidia.conf"},
		},
	},
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
