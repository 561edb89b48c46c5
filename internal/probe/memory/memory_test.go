package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

var hostsDir = filepath.Join("..", "..", "..", "testdata", "hosts")

func mb(v int64) *int64 { return &v }

func TestProbeFixtures(t *testing.T) {
	tests := []struct {
		name string
		tree string
		want probe.HostInfo
	}{
		{
			name: "the CI machine has no effective memory limit and a /dev/shm as big as RAM",
			tree: "ci-vm-amd64",
			want: probe.HostInfo{MemoryTotalMB: mb(24105), MemoryAvailMB: mb(23400), SwapTotalMB: mb(0), ShmTotalMB: mb(24105)},
		},
		{
			name: "a parent cgroup's 2 GiB limit binds and /dev/shm without size= is half of RAM",
			tree: "synthetic-cgroup2-nested",
			want: probe.HostInfo{MemoryTotalMB: mb(64000), MemoryAvailMB: mb(60546), SwapTotalMB: mb(8191), MemoryLimitMB: mb(2048), ShmTotalMB: mb(32000)},
		},
		{
			name: "a cgroup v1 job limit of 4 GiB binds its step",
			tree: "synthetic-cgroup1-slurm",
			want: probe.HostInfo{MemoryTotalMB: mb(64000), MemoryAvailMB: mb(60546), SwapTotalMB: mb(8191), MemoryLimitMB: mb(4096), ShmTotalMB: mb(8192)},
		},
		{
			name: "docker's default /dev/shm is 64 MiB",
			tree: "synthetic-docker-shm",
			want: probe.HostInfo{MemoryTotalMB: mb(64000), MemoryAvailMB: mb(60546), SwapTotalMB: mb(8191), MemoryLimitMB: mb(2048), ShmTotalMB: mb(64)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := host.Local(host.LocalOptions{Sysroot: filepath.Join(hostsDir, tt.tree)})
			if err != nil {
				t.Fatal(err)
			}
			r, err := New().Probe(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Devices) != 0 {
				t.Errorf("memory driver reported devices: %v", r.Devices)
			}
			if diff := cmp.Diff(&tt.want, r.Host); diff != "" {
				t.Errorf("host (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeWithoutMeminfoIsAbsent(t *testing.T) {
	h, err := host.Local(host.LocalOptions{Sysroot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New().Probe(context.Background(), h); !errors.Is(err, probe.ErrAbsent) {
		t.Errorf("err = %v, want ErrAbsent", err)
	}
}

func TestProbeMalformedMeminfoIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc", "meminfo"), []byte("nonsense\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := host.Local(host.LocalOptions{Sysroot: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New().Probe(context.Background(), h)
	if err == nil || errors.Is(err, probe.ErrAbsent) {
		t.Errorf("err = %v, want a driver error", err)
	}
}

type fakeSysctl map[string]string

func (f fakeSysctl) Get(name string) (string, error) {
	if v, ok := f[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("sysctl %s: %w", name, host.ErrNotFound)
}

func TestProbeDarwin(t *testing.T) {
	// hw.memsize of the M4 Max dump (testdata/hosts/darwin-m4-max).
	h := &host.Host{OS: "darwin", Sysctl: fakeSysctl{"hw.memsize": "68719476736"}}
	r, err := New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&probe.HostInfo{MemoryTotalMB: mb(65536)}, r.Host); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
	h = &host.Host{OS: "darwin", Sysctl: fakeSysctl{}} // a Host remembers what it read: a new one
	if _, err := New().Probe(context.Background(), h); !errors.Is(err, probe.ErrAbsent) {
		t.Errorf("without hw.memsize: err = %v, want ErrAbsent", err)
	}
}
