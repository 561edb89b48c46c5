package doctor

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// FrameworkRuntime is a CUDA runtime a Python package ships, found without
// running Python.
type FrameworkRuntime struct {
	Package string // "torch 2.3.1+cu121", "nvidia-cuda-runtime-cu12", "jax_cuda12_plugin"
	CUDA    string // "12.1"; a major only ("12") for plugins that name just the major
	Source  string // the file or directory it was read from
}

// sitePackages lists site-packages directories of the active environment:
// $VIRTUAL_ENV first, then $CONDA_PREFIX.
func sitePackages(e *Env) []string {
	var out []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		prefix, ok := e.Host.LookupEnv(v)
		if !ok || !strings.HasPrefix(prefix, "/") {
			continue
		}
		prefix = path.Clean(prefix)
		if ents, err := e.Host.FS.ReadDir(prefix + "/lib"); err == nil {
			for _, ent := range ents {
				if strings.HasPrefix(ent.Name(), "python3") {
					out = append(out, prefix+"/lib/"+ent.Name()+"/site-packages")
				}
			}
		}
		if e.Host.Exists(prefix + "/Lib/site-packages") {
			out = append(out, prefix+"/Lib/site-packages")
		}
	}
	return out
}

// FindFrameworkRuntimes scans the active environment's site-packages.
func FindFrameworkRuntimes(e *Env) []FrameworkRuntime {
	var out []FrameworkRuntime
	for _, sp := range sitePackages(e) {
		if b, err := e.Host.FS.ReadFile(sp + "/torch/version.py"); err == nil {
			ver, cuda, _ := ParseTorchVersionPy(b)
			if cuda != "" {
				out = append(out, FrameworkRuntime{Package: "torch " + ver, CUDA: cuda, Source: sp + "/torch/version.py"})
			}
		}
		ents, err := e.Host.FS.ReadDir(sp)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			name := ent.Name()
			base, ok := strings.CutSuffix(name, ".dist-info")
			if !ok {
				continue
			}
			pkg, ver, ok := strings.Cut(base, "-")
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(pkg, "nvidia_cuda_runtime"):
				if ma, mi, ok := ParseCUDAVersion(ver); ok {
					out = append(out, FrameworkRuntime{Package: strings.ReplaceAll(pkg, "_", "-") + " " + ver, CUDA: fmt.Sprintf("%d.%d", ma, mi), Source: sp + "/" + name})
				}
			case strings.HasPrefix(pkg, "jax_cuda") && strings.HasSuffix(pkg, "_plugin"):
				major := strings.TrimSuffix(strings.TrimPrefix(pkg, "jax_cuda"), "_plugin")
				if _, err := strconv.Atoi(major); err == nil {
					out = append(out, FrameworkRuntime{Package: pkg + " " + ver, CUDA: major, Source: sp + "/" + name})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return cudaLess(out[j].CUDA, out[i].CUDA) })
	return out
}

// cudaLess compares "12.4" < "12.6"; a bare major ("12") means x.0.
func cudaLess(a, b string) bool {
	am, an := splitCUDA(a)
	bm, bn := splitCUDA(b)
	if am != bm {
		return am < bm
	}
	return an < bn
}

func splitCUDA(s string) (int, int) {
	if ma, mi, ok := ParseCUDAVersion(s); ok {
		return ma, mi
	}
	ma, _ := strconv.Atoi(strings.TrimSpace(s))
	return ma, 0
}

// driverCUDA is the newest CUDA each driver branch supports: the minimum
// Linux driver of each CUDA release (NVIDIA's CUDA Toolkit release notes,
// table "CUDA Toolkit and Corresponding Driver Versions").
var driverCUDA = []struct {
	driver string
	cuda   string
}{
	{"580.65.06", "13.0"}, {"575.51.03", "12.9"}, {"570.26", "12.8"}, {"560.28.03", "12.6"},
	{"555.42.02", "12.5"}, {"550.54.14", "12.4"}, {"545.23.06", "12.3"}, {"535.54.03", "12.2"},
	{"530.30.02", "12.1"}, {"525.60.13", "12.0"}, {"520.61.05", "11.8"}, {"515.43.04", "11.7"},
	{"510.39.01", "11.6"}, {"495.29.05", "11.5"}, {"470.42.01", "11.4"}, {"465.19.01", "11.3"},
	{"460.27.03", "11.2"}, {"455.23", "11.1"}, {"450.36.06", "11.0"}, {"440.33", "10.2"},
	{"418.39", "10.1"}, {"410.48", "10.0"},
}

// CUDAForDriver estimates the newest CUDA a driver version supports.
func CUDAForDriver(driver string) string {
	for _, d := range driverCUDA {
		if !versionLess(driver, d.driver) {
			return d.cuda
		}
	}
	return ""
}

// versionLess compares dotted numeric versions.
func versionLess(a, b string) bool {
	ap, bp := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(ap) || i < len(bp); i++ {
		var x, y int
		if i < len(ap) {
			x, _ = strconv.Atoi(ap[i])
		}
		if i < len(bp) {
			y, _ = strconv.Atoi(bp[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// driverMaxCUDA returns the newest CUDA the installed driver supports, the
// driver version and where the answer came from.
func driverMaxCUDA(ctx context.Context, e *Env) (cuda, driver, source string) {
	if nv, _ := e.NVIDIA(ctx); nv != nil && nv.Usable && nv.CUDADriverVersion > 0 {
		v := nv.CUDADriverVersion
		return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10), nv.DriverVersion, "NVML SystemGetCudaDriverVersion_v2"
	}
	if e.Report != nil && e.Report.Summary.Backend == "cuda" && e.Report.Summary.CUDAVersion != nil {
		d := ""
		if e.Report.Summary.DriverVersion != nil {
			d = *e.Report.Summary.DriverVersion
		}
		return *e.Report.Summary.CUDAVersion, d, "probe summary"
	}
	if b, err := e.Host.FS.ReadFile(nvVersionFile); err == nil {
		if d := ParseNvidiaVersion(b); d != "" {
			if c := CUDAForDriver(d); c != "" {
				return c, d, nvVersionFile + " (driver branch table)"
			}
		}
	}
	return "", "", ""
}

var checkFrameworkRuntime = &Check{
	ID:  "cuda.framework_runtime",
	Run: runFrameworkRuntime,
}

func runFrameworkRuntime(ctx context.Context, e *Env) Finding {
	sps := sitePackages(e)
	if len(sps) == 0 {
		return skip("skip_no_env", nil)
	}
	rts := FindFrameworkRuntimes(e)
	if len(rts) == 0 {
		return skip("skip_no_runtime", Args{"where": strings.Join(sps, ", ")})
	}
	rt := rts[0] // the newest runtime decides
	ev := []Evidence{{rt.Source, "CUDA " + rt.CUDA}}
	if !e.nvidiaPresent() {
		return skip("skip_no_nvidia", nil)
	}
	maxCUDA, driver, src := driverMaxCUDA(ctx, e)
	args := Args{"pkg": rt.Package, "runtime": rt.CUDA, "max": maxCUDA, "driver": orUnknown(driver), "maxnodot": strings.ReplaceAll(maxCUDA, ".", "")}
	if maxCUDA == "" {
		return Finding{Status: Skip, Msg: "skip_no_driver", Args: args, Evidence: ev}
	}
	ev = append(ev, Evidence{src, "CUDA " + maxCUDA})
	rMa, _ := splitCUDA(rt.CUDA)
	dMa, _ := splitCUDA(maxCUDA)
	switch {
	case rMa > dMa:
		return Finding{Status: Fail, Msg: "major", Args: args, Evidence: ev}
	case cudaLess(maxCUDA, rt.CUDA):
		return Finding{Status: Warn, Msg: "minor", Args: args, Evidence: ev}
	}
	return Finding{Status: Pass, Msg: "pass", Args: args, Evidence: ev}
}
