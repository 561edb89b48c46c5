package system

import (
	"strings"
)

// Container values in the report. An unrecognised /run/systemd/container
// value (e.g. "systemd-nspawn") is reported as written rather than folded
// into one of these: "none" would be false and a guess would be invented.
const (
	ContainerNone       = "none"
	ContainerDocker     = "docker"
	ContainerPodman     = "podman"
	ContainerKubernetes = "kubernetes"
	ContainerLXC        = "lxc"
	ContainerWSL        = "wsl"
)

// Evidence is everything DetectContainer looks at, gathered from a Host.
type Evidence struct {
	DockerEnv     bool // /.dockerenv exists
	ContainerEnv  bool // /run/.containerenv exists (podman, buildah)
	KubernetesEnv bool // KUBERNETES_SERVICE_HOST is set
	// SystemdContainer is /run/systemd/container, which systemd-aware
	// runtimes write ("docker", "podman", "lxc", "systemd-nspawn").
	SystemdContainer string
	// OSRelease is /proc/sys/kernel/osrelease; WSL kernels carry
	// "microsoft" in it ("5.15.153.1-microsoft-standard-WSL2").
	OSRelease string
	Cgroups   []CgroupEvidence
}

// CgroupEvidence is the contents of /proc/1/cgroup or /proc/self/cgroup.
type CgroupEvidence struct {
	Path string
	Data []byte
}

// DetectContainer decides the container kind and names the evidence.
// Kubernetes wins over the runtime it uses (a pod is also a docker or
// containerd container); explicit marker files win over cgroup path
// patterns; WSL is last because a container can run inside WSL.
func DetectContainer(e Evidence) (kind, evidence string) {
	if e.KubernetesEnv {
		return ContainerKubernetes, "KUBERNETES_SERVICE_HOST is set"
	}
	for _, c := range e.Cgroups {
		if k := ParseCgroupContainer(c.Data); k == ContainerKubernetes {
			return k, c.Path + " names kubepods"
		}
	}
	if e.DockerEnv {
		return ContainerDocker, "/.dockerenv"
	}
	if e.ContainerEnv {
		return ContainerPodman, "/run/.containerenv"
	}
	if s := strings.ToLower(strings.TrimSpace(e.SystemdContainer)); s != "" && isToken(s) {
		switch {
		case s == "docker", s == "podman", s == "kubernetes":
			return s, "/run/systemd/container"
		case strings.HasPrefix(s, "lxc"):
			return ContainerLXC, "/run/systemd/container"
		case s == "wsl":
			return ContainerWSL, "/run/systemd/container"
		default:
			return s, "/run/systemd/container"
		}
	}
	for _, c := range e.Cgroups {
		if k := ParseCgroupContainer(c.Data); k != ContainerNone {
			return k, c.Path
		}
	}
	if r := strings.ToLower(e.OSRelease); strings.Contains(r, "microsoft") || strings.Contains(r, "wsl") {
		return ContainerWSL, "kernel release " + e.OSRelease
	}
	return ContainerNone, ""
}

// ParseCgroupContainer recognises the cgroup paths container runtimes
// create: /kubepods..., /docker/<id> or docker-<id>.scope, libpod-<id>
// (podman), /lxc/<name> or lxc.payload.<name>. Under cgroup v2 with a
// private cgroup namespace the file says only "0::/" and this finds
// nothing; the marker files cover that case.
func ParseCgroupContainer(b []byte) string {
	s := string(b)
	if len(s) > 1<<16 {
		s = s[:1<<16]
	}
	switch {
	case strings.Contains(s, "kubepods"):
		return ContainerKubernetes
	case strings.Contains(s, "/docker/"), strings.Contains(s, "docker-") && strings.Contains(s, ".scope"):
		return ContainerDocker
	case strings.Contains(s, "libpod"):
		return ContainerPodman
	case strings.Contains(s, "/lxc/"), strings.Contains(s, "lxc.payload"):
		return ContainerLXC
	}
	return ContainerNone
}

// isToken keeps odd file contents out of the report.
func isToken(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
