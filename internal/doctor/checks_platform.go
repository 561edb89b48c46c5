package doctor

import (
	"context"
	"strconv"
	"strings"
)

const systemVersionPlist = "/System/Library/CoreServices/SystemVersion.plist"

// ParsePlistString returns the <string> value after <key>key</key> in an
// XML property list, or "".
func ParsePlistString(b []byte, key string) string {
	s := string(b)
	i := strings.Index(s, "<key>"+key+"</key>")
	if i < 0 {
		return ""
	}
	s = s[i:]
	j := strings.Index(s, "<string>")
	k := strings.Index(s, "</string>")
	if j < 0 || k < j {
		return ""
	}
	return strings.TrimSpace(s[j+len("<string>") : k])
}

// macOSVersion reads the product version from sysctl or the plist (which a
// snapshot carries).
func macOSVersion(e *Env) (string, string) {
	if e.Host.Sysctl != nil {
		if v, err := e.Host.Sysctl.Get("kern.osproductversion"); err == nil && v != "" {
			return strings.TrimSpace(v), "sysctl kern.osproductversion"
		}
	}
	if b, err := e.Host.FS.ReadFile(systemVersionPlist); err == nil {
		if v := ParsePlistString(b, "ProductVersion"); v != "" {
			return v, systemVersionPlist
		}
	}
	return "", ""
}

func sysctlIs(e *Env, key, want string) bool {
	if e.Host.Sysctl == nil {
		return false
	}
	v, err := e.Host.Sysctl.Get(key)
	return err == nil && strings.TrimSpace(v) == want
}

var checkRosetta = &Check{
	ID:    "apple.rosetta",
	Title: Text{EN: "Not running under Rosetta on Apple silicon", PL: "Brak uruchamiania przez Rosettę na Apple silicon"},
	Messages: map[string]Message{
		"pass":  {Detail: Text{EN: "native {arch} process on {cpu}", PL: "natywny proces {arch} na {cpu}"}},
		"intel": {Detail: Text{EN: "Intel Mac: Rosetta does not apply", PL: "Mac z procesorem Intel: Rosetta nie dotyczy"}},
		"translated": {
			Detail: Text{EN: "{what} runs as x86_64 under Rosetta 2 on Apple silicon: MPS is unusable and CPU code is emulated", PL: "{what} działa jako x86_64 przez Rosettę 2 na Apple silicon: MPS jest niedostępne, a kod CPU jest emulowany"},
			Fix:    Text{EN: "install a native arm64 Python (`arch -arm64 brew install python` or Miniforge for arm64) and recreate the environment", PL: "zainstaluj natywny Python arm64 (`arch -arm64 brew install python` lub Miniforge dla arm64) i utwórz środowisko od nowa"},
		},
	},
	Run: func(_ context.Context, e *Env) Finding {
		h := e.Host
		if h.OS != "darwin" {
			return skip("skip_not_macos", Args{"os": h.OS})
		}
		if sysctlIs(e, "sysctl.proc_translated", "1") {
			return Finding{Status: Fail, Msg: "translated", Args: Args{"what": "devctl"}, Evidence: []Evidence{{"sysctl sysctl.proc_translated", "1"}}}
		}
		if !sysctlIs(e, "hw.optional.arm64", "1") && h.Arch == "amd64" {
			return Finding{Status: Pass, Msg: "intel"}
		}
		// The environment's Python binary: an x86_64-only Mach-O on arm64.
		for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
			prefix, ok := h.LookupEnv(v)
			if !ok || prefix == "" {
				continue
			}
			for _, name := range []string{"/bin/python3", "/bin/python"} {
				b, err := h.FS.ReadFile(prefix + name)
				if err != nil {
					continue
				}
				if MachOArch(b) == "x86_64" {
					return Finding{Status: Fail, Msg: "translated", Args: Args{"what": prefix + name}, Evidence: []Evidence{{prefix + name, "Mach-O x86_64"}}}
				}
				break
			}
		}
		cpu := "Apple silicon"
		if h.Sysctl != nil {
			if s, err := h.Sysctl.Get("machdep.cpu.brand_string"); err == nil && s != "" {
				cpu = s
			}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"arch": h.Arch, "cpu": cpu}}
	},
}

// MachOArch names a Mach-O binary's architecture: "x86_64", "arm64",
// "universal" or "" for anything else.
func MachOArch(b []byte) string {
	if len(b) < 8 {
		return ""
	}
	le := func(i int) uint32 { return uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24 }
	be := func(i int) uint32 { return uint32(b[i+3]) | uint32(b[i+2])<<8 | uint32(b[i+1])<<16 | uint32(b[i])<<24 }
	switch {
	case be(0) == 0xcafebabe:
		return "universal"
	case le(0) == 0xfeedfacf:
		switch le(4) {
		case 0x01000007:
			return "x86_64"
		case 0x0100000c:
			return "arm64"
		}
	}
	return ""
}

var checkMacOS = &Check{
	ID:    "apple.macos_version",
	Title: Text{EN: "macOS new enough for MPS and bf16", PL: "macOS wystarczająco nowy dla MPS i bf16"},
	Messages: map[string]Message{
		"pass":         {Detail: Text{EN: "macOS {version}: MPS with bf16 available", PL: "macOS {version}: MPS z bf16 dostępne"}},
		"skip_unknown": {Detail: Text{EN: "macOS version unknown (no sysctl kern.osproductversion, no SystemVersion.plist)", PL: "nieznana wersja macOS (brak sysctl kern.osproductversion i SystemVersion.plist)"}},
		"no_mps": {
			Detail: Text{EN: "macOS {version} is older than 12.3: PyTorch's MPS backend is not available at all", PL: "macOS {version} jest starszy niż 12.3: backend MPS PyTorch jest całkowicie niedostępny"},
			Fix:    Text{EN: "upgrade macOS to 14 (Sonoma) or later: System Settings → General → Software Update", PL: "zaktualizuj macOS do 14 (Sonoma) lub nowszego: Ustawienia systemowe → Ogólne → Uaktualnienia"},
		},
		"no_bf16": {
			Detail: Text{EN: "macOS {version} is older than 14: MPS has no bfloat16 (\"MPS BFloat16 is only supported on MacOS 14 or newer\") and current PyTorch releases require macOS 14", PL: "macOS {version} jest starszy niż 14: MPS nie obsługuje bfloat16 (\"MPS BFloat16 is only supported on MacOS 14 or newer\"), a aktualne wersje PyTorch wymagają macOS 14"},
			Fix:    Text{EN: "upgrade to macOS 14 or later, or use float16 (`--precision fp16`)", PL: "zaktualizuj do macOS 14 lub nowszego albo używaj float16 (`--precision fp16`)"},
		},
	},
	Run: func(_ context.Context, e *Env) Finding {
		if e.Host.OS != "darwin" {
			return skip("skip_not_macos", Args{"os": e.Host.OS})
		}
		v, src := macOSVersion(e)
		if v == "" {
			return Finding{Status: Skip, Msg: "skip_unknown"}
		}
		ev := []Evidence{{src, v}}
		ma, mi := splitCUDA(v) // same "major.minor" shape
		if _, _, ok := ParseCUDAVersion(v); !ok {
			ma, _ = strconv.Atoi(v)
			mi = 0
		}
		switch {
		case ma < 12 || (ma == 12 && mi < 3):
			return Finding{Status: Fail, Msg: "no_mps", Args: Args{"version": v}, Evidence: ev}
		case ma < 14:
			return Finding{Status: Warn, Msg: "no_bf16", Args: Args{"version": v}, Evidence: ev}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"version": v}, Evidence: ev}
	},
}

var checkMPSWatermark = &Check{
	ID:    "apple.mps_watermark",
	Title: Text{EN: "PYTORCH_MPS_*_WATERMARK_RATIO values are safe", PL: "Wartości PYTORCH_MPS_*_WATERMARK_RATIO są bezpieczne"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "{summary}", PL: "{summary}"}},
		"zero": {
			Detail: Text{EN: "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 removes MPS's memory limit: a large job swaps the whole machine or crashes it", PL: "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 usuwa limit pamięci MPS: duże zadanie wpędzi maszynę w swap albo ją zawiesi"},
			Fix:    Text{EN: "set a bounded pair instead: `export PYTORCH_MPS_HIGH_WATERMARK_RATIO=1.0 PYTORCH_MPS_LOW_WATERMARK_RATIO=0.8`", PL: "ustaw ograniczoną parę: `export PYTORCH_MPS_HIGH_WATERMARK_RATIO=1.0 PYTORCH_MPS_LOW_WATERMARK_RATIO=0.8`"},
		},
		"below_low": {
			Detail: Text{EN: "PYTORCH_MPS_HIGH_WATERMARK_RATIO={high} is below the low watermark {low}{lowsrc}: PyTorch refuses to start the MPS allocator (\"invalid low watermark ratio\")", PL: "PYTORCH_MPS_HIGH_WATERMARK_RATIO={high} jest poniżej niskiego progu {low}{lowsrc}: PyTorch nie uruchomi alokatora MPS (\"invalid low watermark ratio\")"},
			Fix:    Text{EN: "set both, low ≤ high: `export PYTORCH_MPS_HIGH_WATERMARK_RATIO={high} PYTORCH_MPS_LOW_WATERMARK_RATIO={suggest}`", PL: "ustaw obie, niski ≤ wysoki: `export PYTORCH_MPS_HIGH_WATERMARK_RATIO={high} PYTORCH_MPS_LOW_WATERMARK_RATIO={suggest}`"},
		},
		"too_high": {
			Detail: Text{EN: "PYTORCH_MPS_HIGH_WATERMARK_RATIO={high} is above 2.0, the largest PyTorch accepts", PL: "PYTORCH_MPS_HIGH_WATERMARK_RATIO={high} przekracza 2.0, największą wartość akceptowaną przez PyTorch"},
			Fix:    Text{EN: "`export PYTORCH_MPS_HIGH_WATERMARK_RATIO=1.7` (the default) or lower", PL: "`export PYTORCH_MPS_HIGH_WATERMARK_RATIO=1.7` (domyślna) lub niższa"},
		},
	},
	Run: func(_ context.Context, e *Env) Finding {
		if e.Host.OS != "darwin" {
			return skip("skip_not_macos", Args{"os": e.Host.OS})
		}
		hs, hSet := e.Host.LookupEnv("PYTORCH_MPS_HIGH_WATERMARK_RATIO")
		ls, lSet := e.Host.LookupEnv("PYTORCH_MPS_LOW_WATERMARK_RATIO")
		if !hSet && !lSet {
			return Finding{Status: Pass, Msg: "pass", Args: Args{"summary": "PyTorch defaults (high 1.7, low 1.4 on unified memory)"}}
		}
		high, low, lowSrc := 1.7, 1.4, " (the default)"
		ev := []Evidence{}
		if hSet {
			f, err := strconv.ParseFloat(strings.TrimSpace(hs), 64)
			if err != nil {
				return skip("pass", Args{"summary": "unparsable; see env.pytorch"})
			}
			high = f
			ev = append(ev, Evidence{"env PYTORCH_MPS_HIGH_WATERMARK_RATIO", hs})
		}
		if lSet {
			f, err := strconv.ParseFloat(strings.TrimSpace(ls), 64)
			if err != nil {
				return skip("pass", Args{"summary": "unparsable; see env.pytorch"})
			}
			low, lowSrc = f, ""
			ev = append(ev, Evidence{"env PYTORCH_MPS_LOW_WATERMARK_RATIO", ls})
		}
		fmtF := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
		switch {
		case hSet && high == 0:
			return Finding{Status: Warn, Msg: "zero", Evidence: ev}
		case high > 2.0:
			return Finding{Status: Fail, Msg: "too_high", Args: Args{"high": fmtF(high)}, Evidence: ev}
		case low > high:
			return Finding{Status: Fail, Msg: "below_low", Args: Args{"high": fmtF(high), "low": fmtF(low), "lowsrc": lowSrc, "suggest": fmtF(high * 0.8)}, Evidence: ev}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"summary": "high " + fmtF(high) + ", low " + fmtF(low)}, Evidence: ev}
	},
}

var checkWSL = &Check{
	ID:    "platform.wsl2",
	Title: Text{EN: "WSL2 GPU setup", PL: "Konfiguracja GPU w WSL2"},
	Messages: map[string]Message{
		"skip_not_wsl": {Detail: Text{EN: "not WSL2 (no /dev/dxg)", PL: "to nie WSL2 (brak /dev/dxg)"}},
		"pass":         {Detail: Text{EN: "WSL2: GPU through /dev/dxg, NVML from {lib}; note that some NVML queries (ECC, clocks, processes) are not supported under WSL", PL: "WSL2: karta przez /dev/dxg, NVML z {lib}; część zapytań NVML (ECC, zegary, procesy) nie działa w WSL"}},
		"no_lib": {
			Detail: Text{EN: "WSL2 (/dev/dxg) but no /usr/lib/wsl/lib/libnvidia-ml.so.1: the Windows NVIDIA driver does not expose CUDA to this distribution", PL: "WSL2 (/dev/dxg), ale brak /usr/lib/wsl/lib/libnvidia-ml.so.1: sterownik NVIDIA dla Windows nie udostępnia CUDA tej dystrybucji"},
			Fix:    Text{EN: "install the current NVIDIA driver on Windows (not inside WSL), then `wsl --shutdown` and reopen", PL: "zainstaluj aktualny sterownik NVIDIA w Windows (nie w WSL), potem `wsl --shutdown` i otwórz ponownie"},
		},
		"linux_driver": {
			Detail: Text{EN: "WSL2 with a Linux NVIDIA driver installed inside the distribution ({where}): it shadows the Windows driver's libraries and breaks CUDA", PL: "WSL2 z linuksowym sterownikiem NVIDIA zainstalowanym w dystrybucji ({where}): przesłania biblioteki sterownika Windows i psuje CUDA"},
			Fix:    Text{EN: "remove it: `sudo apt purge 'nvidia-driver-*' 'libnvidia-compute-*'`; only the CUDA toolkit (not a driver) belongs inside WSL", PL: "usuń go: `sudo apt purge 'nvidia-driver-*' 'libnvidia-compute-*'`; w WSL instaluje się tylko CUDA toolkit (bez sterownika)"},
		},
	},
	Run: func(_ context.Context, e *Env) Finding {
		h := e.Host
		if !h.Exists("/dev/dxg") {
			return skip("skip_not_wsl", nil)
		}
		const lib = "/usr/lib/wsl/lib/libnvidia-ml.so.1"
		ev := []Evidence{{"/dev/dxg", "present"}}
		if h.Exists(nvVersionFile) {
			return Finding{Status: Fail, Msg: "linux_driver", Args: Args{"where": nvVersionFile}, Evidence: append(ev, Evidence{nvVersionFile, "present"})}
		}
		for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64"} {
			ents, err := h.FS.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, ent := range ents {
				if libVersion(ent.Name(), "libnvidia-ml") != "" {
					p := dir + "/" + ent.Name()
					return Finding{Status: Fail, Msg: "linux_driver", Args: Args{"where": p}, Evidence: append(ev, Evidence{p, "present"})}
				}
			}
		}
		if !h.Exists(lib) {
			return Finding{Status: Warn, Msg: "no_lib", Evidence: append(ev, Evidence{lib, "missing"})}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"lib": lib}, Evidence: ev}
	},
}

var checkJetson = &Check{
	ID:    "platform.jetson",
	Title: Text{EN: "Jetson (Tegra) setup", PL: "Konfiguracja Jetson (Tegra)"},
	Messages: map[string]Message{
		"skip_not_jetson": {Detail: Text{EN: "not a Jetson (no /etc/nv_tegra_release, /sys/devices/soc0/family not tegra)", PL: "to nie Jetson (brak /etc/nv_tegra_release, /sys/devices/soc0/family to nie tegra)"}},
		"pass":            {Detail: Text{EN: "Jetson {release}: there is no NVML on Tegra (use `tegrastats` for load and memory); the GPU shares system RAM", PL: "Jetson {release}: na Tegrze nie ma NVML (obciążenie i pamięć pokazuje `tegrastats`); karta dzieli RAM z systemem"}},
		"cpu_torch": {
			Detail: Text{EN: "Jetson {release} with {pkg} from PyPI, built without CUDA: it cannot use the Jetson GPU", PL: "Jetson {release} z {pkg} z PyPI, zbudowanym bez CUDA: nie użyje karty Jetsona"},
			Fix:    Text{EN: "install NVIDIA's Jetson build for your JetPack (https://developer.nvidia.com/embedded/downloads, or `pip install torch --index-url https://pypi.jetson-ai-lab.dev/jp6/cu126`)", PL: "zainstaluj wersję NVIDIA dla Jetsona zgodną z JetPack (https://developer.nvidia.com/embedded/downloads lub `pip install torch --index-url https://pypi.jetson-ai-lab.dev/jp6/cu126`)"},
		},
	},
	Run: func(_ context.Context, e *Env) Finding {
		h := e.Host
		release := ""
		ev := []Evidence{}
		if s, err := h.ReadString("/etc/nv_tegra_release"); err == nil {
			line := strings.SplitN(s, "\n", 2)[0]
			release = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			if i := strings.Index(release, ", GCID"); i > 0 {
				release = release[:i]
			}
			ev = append(ev, Evidence{"/etc/nv_tegra_release", release})
		} else if fam, err := h.ReadString("/sys/devices/soc0/family"); err == nil && strings.HasPrefix(strings.ToLower(fam), "tegra") {
			release = fam
			ev = append(ev, Evidence{"/sys/devices/soc0/family", fam})
		} else {
			return skip("skip_not_jetson", nil)
		}
		for _, sp := range sitePackages(e) {
			if b, err := h.FS.ReadFile(sp + "/torch/version.py"); err == nil {
				ver, cuda, _ := ParseTorchVersionPy(b)
				if cuda == "" {
					return Finding{Status: Warn, Msg: "cpu_torch", Args: Args{"release": release, "pkg": "torch " + ver},
						Evidence: append(ev, Evidence{sp + "/torch/version.py", "cuda = None"})}
				}
			}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"release": release}, Evidence: ev}
	},
}
