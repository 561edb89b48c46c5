package system

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

var hostsDir = filepath.Join("..", "..", "..", "testdata", "hosts")

func TestDetectContainer(t *testing.T) {
	cg := func(s string) []CgroupEvidence { return []CgroupEvidence{{Path: "/proc/1/cgroup", Data: []byte(s)}} }
	tests := []struct {
		name string
		in   Evidence
		kind string
		why  string
	}{
		{"a bare host is no container", Evidence{Cgroups: cg("0::/init.scope\n")}, "none", ""},
		{"the KUBERNETES_SERVICE_HOST variable marks a pod", Evidence{KubernetesEnv: true, DockerEnv: true}, "kubernetes", "KUBERNETES_SERVICE_HOST is set"},
		{"a kubepods cgroup marks a pod even with /.dockerenv", Evidence{DockerEnv: true, Cgroups: cg("0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-1.scope\n")}, "kubernetes", "/proc/1/cgroup names kubepods"},
		{"/.dockerenv marks docker", Evidence{DockerEnv: true}, "docker", "/.dockerenv"},
		{"/run/.containerenv marks podman", Evidence{ContainerEnv: true}, "podman", "/run/.containerenv"},
		{"systemd's container file names lxc", Evidence{SystemdContainer: "lxc\n"}, "lxc", "/run/systemd/container"},
		{"an unknown systemd container kind is reported as written", Evidence{SystemdContainer: "systemd-nspawn"}, "systemd-nspawn", "/run/systemd/container"},
		{"odd systemd container contents are not reported", Evidence{SystemdContainer: "<script>"}, "none", ""},
		{"a docker cgroup v1 path marks docker", Evidence{Cgroups: cg("12:memory:/docker/3f1e9c0d\n")}, "docker", "/proc/1/cgroup"},
		{"a docker systemd scope marks docker", Evidence{Cgroups: cg("0::/system.slice/docker-3f1e.scope\n")}, "docker", "/proc/1/cgroup"},
		{"a libpod cgroup marks podman", Evidence{Cgroups: cg("0::/machine.slice/libpod-3f1e.scope\n")}, "podman", "/proc/1/cgroup"},
		{"an lxc payload cgroup marks lxc", Evidence{Cgroups: cg("0::/lxc.payload.web1\n")}, "lxc", "/proc/1/cgroup"},
		{"a Microsoft kernel marks WSL", Evidence{OSRelease: "5.15.153.1-microsoft-standard-WSL2"}, "wsl", "kernel release 5.15.153.1-microsoft-standard-WSL2"},
		{"docker inside WSL is docker", Evidence{DockerEnv: true, OSRelease: "5.15.153.1-microsoft-standard-WSL2"}, "docker", "/.dockerenv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, why := DetectContainer(tt.in)
			if kind != tt.kind || why != tt.why {
				t.Errorf("DetectContainer = %q (%q), want %q (%q)", kind, why, tt.kind, tt.why)
			}
		})
	}
}

func TestGoArch(t *testing.T) {
	for in, want := range map[string]string{
		"x86_64\n": "amd64", "i686": "386", "aarch64": "arm64", "armv7l": "arm",
		"ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64", "loongarch64": "loong64",
		"": "", "vax": "",
	} {
		if got := GoArch(in); got != want {
			t.Errorf("GoArch(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProbeFixtures(t *testing.T) {
	tests := []struct {
		name string
		tree string
		env  host.MapEnv
		want probe.HostInfo
	}{
		{"the CI machine is an amd64 docker container", "ci-vm-amd64", nil,
			probe.HostInfo{OS: "linux", Arch: "amd64", Kernel: probe.Ptr("6.18.44-fc-v657"), Container: "docker"}},
		{"an arm64 tree is arm64 whatever the runner is", "arm64-axion", nil,
			probe.HostInfo{OS: "linux", Arch: "arm64", Container: "none"}},
		{"a POWER9 tree is ppc64le", "ppc64le-power9", nil,
			probe.HostInfo{OS: "linux", Arch: "ppc64le", Container: "none"}},
		{"an s390x tree is s390x", "s390x-z13", nil,
			probe.HostInfo{OS: "linux", Arch: "s390x", Container: "none"}},
		{"a Kubernetes variable in the environment marks a pod", "arm64-rpi4", host.MapEnv{"KUBERNETES_SERVICE_HOST": "10.0.0.1"},
			probe.HostInfo{OS: "linux", Arch: "arm64", Container: "kubernetes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := host.Local(host.LocalOptions{Sysroot: filepath.Join(hostsDir, tt.tree)})
			if err != nil {
				t.Fatal(err)
			}
			h.Env = tt.env
			if h.Env == nil {
				h.Env = host.MapEnv{}
			}
			r, err := New().Probe(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Devices) != 0 {
				t.Errorf("system driver reported devices")
			}
			if diff := cmp.Diff(&tt.want, r.Host); diff != "" {
				t.Errorf("host (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeEmptyTreeStillAnswers(t *testing.T) {
	h, err := host.Local(host.LocalOptions{Sysroot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h.Env, h.Arch = host.MapEnv{}, "riscv64"
	r, err := New().Probe(context.Background(), h)
	if err != nil {
		t.Fatalf("the system driver must always answer: %v", err)
	}
	want := &probe.HostInfo{OS: "linux", Arch: "riscv64", Container: "none"}
	if diff := cmp.Diff(want, r.Host); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
}

type fakeSysctl map[string]string

func (f fakeSysctl) Get(name string) (string, error) {
	if v, ok := f[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%s: %w", name, host.ErrNotFound)
}

func TestProbeDarwinKernel(t *testing.T) {
	h := &host.Host{OS: "darwin", Arch: "arm64", Sysctl: fakeSysctl{"kern.osrelease": "24.1.0"}, Env: host.MapEnv{}}
	r, err := New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	want := &probe.HostInfo{OS: "darwin", Arch: "arm64", Kernel: probe.Ptr("24.1.0"), Container: "none"}
	if diff := cmp.Diff(want, r.Host); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
}

func FuzzParseCgroupContainer(f *testing.F) {
	f.Add([]byte("12:memory:/docker/abc\n"))
	f.Add([]byte("0::/\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		switch k := ParseCgroupContainer(b); k {
		case ContainerNone, ContainerDocker, ContainerPodman, ContainerKubernetes, ContainerLXC:
		default:
			t.Errorf("unexpected kind %q", k)
		}
	})
}

func TestProbeArchFromKernelArchFile(t *testing.T) {
	// Synthetic: /proc/sys/kernel/arch (uname -m) is read before cpuinfo.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc", "sys", "kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc", "sys", "kernel", "arch"), []byte("aarch64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := host.Local(host.LocalOptions{Sysroot: dir})
	if err != nil {
		t.Fatal(err)
	}
	h.Env = host.MapEnv{}
	r, err := New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if r.Host.Arch != "arm64" {
		t.Errorf("Arch = %q, want arm64", r.Host.Arch)
	}
}
