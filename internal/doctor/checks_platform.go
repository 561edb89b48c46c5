package doctor

import (
	"context"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/probe/mps"
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

var checkRosetta = &Check{
	ID: "apple.rosetta",
	Run: func(ctx context.Context, e *Env) Finding {
		h := e.Host
		if h.OS != "darwin" {
			return skip("skip_not_macos", Args{"os": h.OS})
		}
		// The probe's facts decide, so probe and doctor agree on Rosetta.
		f := e.macFacts(ctx)
		if f != nil && f.Rosetta {
			return Finding{Status: Fail, Msg: "translated", Args: Args{"what": "devctl"}, Evidence: []Evidence{{"probe mps rosetta (sysctl.proc_translated)", "1"}}}
		}
		if (f == nil || !f.AppleSilicon) && h.Arch == "amd64" {
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
	ID: "apple.macos_version",
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
		// macOS is new enough; bf16 also needs Apple silicon (an AMD GPU
		// in an Intel Mac has none), which the probe's rules already decided.
		for _, d := range e.Devices("mps") {
			if !d.SupportsBF16 {
				return Finding{Status: Pass, Msg: "pass_no_bf16_hw", Args: Args{"version": v, "gpu": d.Name}, Evidence: ev}
			}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"version": v}, Evidence: ev}
	},
}

var checkMPSWatermark = &Check{
	ID: "apple.mps_watermark",
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
	ID: "platform.wsl2",
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
	ID: "platform.jetson",
	Run: func(ctx context.Context, e *Env) Finding {
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
		for _, env := range environments(ctx, e) {
			if t := env.Torch; t != nil && t.Accelerator == "cpu" {
				return Finding{Status: Warn, Msg: "cpu_torch", Args: Args{"release": release, "pkg": "torch " + t.Version},
					Evidence: append(ev, Evidence{t.Source, "cpu build"})}
			}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"release": release}, Evidence: ev}
	},
}

// macFacts are the mps probe driver's facts: from the probe run when there
// was one, else read once with the driver's own Collect.
func (e *Env) macFacts(ctx context.Context) *mps.Facts {
	if e.Outcome("mps") != nil {
		if f, ok := mps.Read(e.Host); ok {
			return f
		}
	}
	f, _ := mps.Collect(ctx, e.Host)
	return f
}
