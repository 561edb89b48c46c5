package doctor

import (
	"context"
	"strings"

	"github.com/devctl/devctl/internal/probe/nvidia"
)

// inContainer names the container runtime the host runs in, or "".
func inContainer(e *Env) string {
	h := e.Host
	if e.Report != nil && e.Report.Host.Container != "" && e.Report.Host.Container != "none" {
		return e.Report.Host.Container
	}
	switch {
	case h.Exists("/.dockerenv"):
		return "docker"
	case h.Exists("/run/.containerenv"):
		return "podman"
	}
	if _, ok := h.LookupEnv("KUBERNETES_SERVICE_HOST"); ok {
		return "kubernetes"
	}
	if b, err := h.FS.ReadFile("/proc/1/cgroup"); err == nil {
		s := string(b)
		for _, k := range []string{"kubepods", "docker", "containerd", "libpod", "lxc"} {
			if strings.Contains(s, k) {
				return k
			}
		}
	}
	return ""
}

var checkContainerGPU = &Check{
	ID:  "container.gpu_access",
	Run: runContainerGPU,
}

func runContainerGPU(ctx context.Context, e *Env) Finding {
	kind := inContainer(e)
	if kind == "" {
		return skip("skip_no_container", nil)
	}
	visible, asked := e.Host.LookupEnv("NVIDIA_VISIBLE_DEVICES")
	asked = asked && visible != "" && visible != "void" && visible != "none"
	hasCtl := e.Host.Exists("/dev/nvidiactl")
	ev := []Evidence{{"container", kind}}
	if !hasCtl {
		if asked {
			ev = append(ev, Evidence{"NVIDIA_VISIBLE_DEVICES", visible}, Evidence{"/dev/nvidiactl", "missing"})
			return Finding{Status: Fail, Msg: "not_passed", Args: Args{"kind": kind, "visible": visible}, Evidence: ev}
		}
		return skip("skip_no_gpu", Args{"kind": kind})
	}
	nv, _ := e.NVIDIA(ctx)
	if nv == nil || !nv.InitTried {
		return Finding{Status: Pass, Msg: "pass_nodes", Args: Args{"kind": kind}, Evidence: ev}
	}
	if nv.InitTried && !nv.InitOK && (nv.InitReturn == nvidia.ErrUnknown.Name() || nv.InitReturn == nvidia.ErrNoPermission.Name()) {
		ev = append(ev, Evidence{"nvmlInit_v2", nv.InitReturn})
		return Finding{Status: Fail, Msg: "lost", Args: Args{"kind": kind, "ret": nv.InitReturn}, Evidence: ev}
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"kind": kind}, Evidence: ev}
}
