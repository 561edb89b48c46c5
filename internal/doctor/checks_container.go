package doctor

import (
	"context"
	"strings"
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
	ID:    "container.gpu_access",
	Title: Text{EN: "Container has access to its GPUs", PL: "Kontener ma dostęp do swoich kart GPU"},
	Messages: map[string]Message{
		"skip_no_container": {Detail: Text{EN: "not running in a container", PL: "nie działa w kontenerze"}},
		"skip_no_gpu":       {Detail: Text{EN: "{kind} container without GPUs requested (no NVIDIA_VISIBLE_DEVICES, no /dev/nvidia*)", PL: "kontener {kind} bez żądanych kart (brak NVIDIA_VISIBLE_DEVICES i /dev/nvidia*)"}},
		"pass":              {Detail: Text{EN: "{kind} container sees the GPU device nodes and NVML works", PL: "kontener {kind} widzi pliki urządzeń GPU i NVML działa"}},
		"pass_nodes":        {Detail: Text{EN: "{kind} container sees /dev/nvidiactl (NVML answers not available to confirm)", PL: "kontener {kind} widzi /dev/nvidiactl (brak odpowiedzi NVML do potwierdzenia)"}},
		"not_passed": {
			Detail: Text{EN: "{kind} container asks for GPUs (NVIDIA_VISIBLE_DEVICES={visible}) but has no /dev/nvidiactl: it was started without the NVIDIA runtime", PL: "kontener {kind} żąda kart (NVIDIA_VISIBLE_DEVICES={visible}), ale nie ma /dev/nvidiactl: uruchomiono go bez środowiska NVIDIA"},
			Fix:    Text{EN: "start it with GPUs: `docker run --gpus all ...` (needs nvidia-container-toolkit on the host; Kubernetes: request nvidia.com/gpu)", PL: "uruchom go z kartami: `docker run --gpus all ...` (wymaga nvidia-container-toolkit na hoście; Kubernetes: zażądaj nvidia.com/gpu)"},
		},
		"lost": {
			Detail: Text{EN: "{kind} container has /dev/nvidia* but NVML returns {ret}: the container lost its device cgroup access (a systemd daemon-reload on the host drops the `c 195:* rwm` rule)", PL: "kontener {kind} ma /dev/nvidia*, ale NVML zwraca {ret}: kontener stracił dostęp do urządzeń w cgroup (systemd daemon-reload na hoście usuwa regułę `c 195:* rwm`)"},
			Fix:    Text{EN: "restart the container; to prevent it, the host admin runs `sudo nvidia-ctk system create-dev-char-symlinks --create-all` or moves to CDI (`nvidia-ctk cdi generate`)", PL: "uruchom kontener ponownie; aby temu zapobiec, administrator hosta wykonuje `sudo nvidia-ctk system create-dev-char-symlinks --create-all` albo przechodzi na CDI (`nvidia-ctk cdi generate`)"},
		},
	},
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
	if nv.InitTried && !nv.InitOK && (nv.InitReturn == "ERROR_UNKNOWN" || nv.InitReturn == "ERROR_NO_PERMISSION") {
		ev = append(ev, Evidence{"nvmlInit_v2", nv.InitReturn})
		return Finding{Status: Fail, Msg: "lost", Args: Args{"kind": kind, "ret": nv.InitReturn}, Evidence: ev}
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"kind": kind}, Evidence: ev}
}
