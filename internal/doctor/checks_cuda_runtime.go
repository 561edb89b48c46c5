package doctor

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/software"
)

// FrameworkRuntime is a CUDA runtime a Python package ships, found without
// running Python.
type FrameworkRuntime struct {
	Package string // "torch 2.3.1+cu121", "nvidia-cuda-runtime-cu12", "jax_cuda12_plugin"
	CUDA    string // "12.1"; a major only ("12") for plugins that name just the major
	Source  string // the file or directory it was read from
}

// environments are the probe's Python environments, the active ones
// (VIRTUAL_ENV, CONDA_PREFIX) first.
func environments(ctx context.Context, e *Env) []probe.PythonEnv {
	sw := e.Software(ctx)
	if sw == nil {
		return nil
	}
	envs := append([]probe.PythonEnv(nil), sw.Environments...)
	sort.SliceStable(envs, func(i, j int) bool { return envs[i].Active && !envs[j].Active })
	return envs
}

// FindFrameworkRuntimes lists the CUDA runtimes the probe found in the
// Python environments, newest first.
func FindFrameworkRuntimes(ctx context.Context, e *Env) []FrameworkRuntime {
	var out []FrameworkRuntime
	for _, env := range environments(ctx, e) {
		for _, rt := range env.CUDARuntimes {
			out = append(out, FrameworkRuntime{Package: rt.Package, CUDA: rt.CUDA, Source: rt.Source})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return software.CUDALess(out[j].CUDA, out[i].CUDA) })
	return out
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
	envs := environments(ctx, e)
	if len(envs) == 0 {
		return skip("skip_no_env", nil)
	}
	rts := FindFrameworkRuntimes(ctx, e)
	if len(rts) == 0 {
		var where []string
		for _, env := range envs {
			where = append(where, env.Prefix)
		}
		return skip("skip_no_runtime", Args{"where": strings.Join(where, ", ")})
	}
	rt := rts[0] // the newest runtime decides
	ev := []Evidence{{rt.Source, "CUDA " + rt.CUDA}}
	if !e.nvidiaPresent() {
		return skip("skip_no_nvidia", nil)
	}
	maxCUDA, driver, src := driverMaxCUDA(ctx, e)
	args := Args{"pkg": rt.Package, "runtime": rt.CUDA, "max": maxCUDA, "driver": orUnknown(driver)}
	// The newest PyTorch build not newer than the driver's CUDA: PyTorch
	// publishes no build for most versions (no cu114, no cu122).
	if cmd, ok := explain.TorchInstall(maxCUDA); ok {
		args["torch_install"] = cmd
	}
	if maxCUDA == "" {
		return Finding{Status: Skip, Msg: "skip_no_driver", Args: args, Evidence: ev}
	}
	ev = append(ev, Evidence{src, "CUDA " + maxCUDA})
	rMa, _ := splitCUDA(rt.CUDA)
	dMa, _ := splitCUDA(maxCUDA)
	switch {
	case rMa > dMa:
		return Finding{Status: Fail, Msg: "major", Args: args, Evidence: ev}
	case software.CUDALess(maxCUDA, rt.CUDA):
		return Finding{Status: Warn, Msg: "minor", Args: args, Evidence: ev}
	}
	return Finding{Status: Pass, Msg: "pass", Args: args, Evidence: ev}
}
