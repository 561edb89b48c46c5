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
	"github.com/devctl/devctl/internal/probe/system/kernfs"
)

var hostsDir = filepath.Join("..", "..", "..", "testdata", "hosts")

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Meminfo
		wantErr error
	}{
		{
			name: "a modern kernel states MemAvailable",
			in:   "MemTotal:       24684092 kB\nMemFree:        23456824 kB\nMemAvailable:   24225204 kB\nSwapTotal:       1000 kB\nSwapFree:         500 kB\nHugePages_Total:       0\n",
			want: Meminfo{Total: 24684092 << 10, Available: 24225204 << 10, Free: 23456824 << 10, SwapTotal: 1000 << 10, SwapFree: 500 << 10},
		},
		{
			name: "a kernel before 3.14 gets MemFree+Buffers+Cached as an estimate",
			in:   "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\n",
			want: Meminfo{Total: 1000 << 10, Available: 310 << 10, AvailableEstimated: true, Free: 100 << 10},
		},
		{
			name: "malformed lines are skipped",
			in:   "MemTotal: 1000 kB\nMemAvailable: lots\nSwapTotal: 1 2 3\nBroken\n",
			want: Meminfo{Total: 1000 << 10, AvailableEstimated: true},
		},
		{
			name:    "a file without MemTotal is an error",
			in:      "MemFree: 100 kB\n",
			wantErr: ErrNoMemTotal,
		},
		{
			name: "a value too big for bytes is skipped, not wrapped",
			in:   "MemTotal: 99999999999999999 kB\nMemTotal: 10 kB\n",
			want: Meminfo{Total: 10 << 10, AvailableEstimated: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMeminfo([]byte(tt.in))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseMeminfo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		ram   int64
		want  int64
		isErr bool
	}{
		{"docker's default is 65536k", "65536k", 0, 64 << 20, false},
		{"gigabytes", "8g", 0, 8 << 30, false},
		{"plain bytes", "1048576", 0, 1 << 20, false},
		{"a percentage of RAM", "50%", 16 << 30, 8 << 30, false},
		{"a percentage without known RAM is an error", "50%", 0, 0, true},
		{"a huge value saturates", "9999999999e", 0, 1<<63 - 1, false},
		{"text is an error", "big", 0, 0, true},
		{"empty is an error", "", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSize(tt.in, tt.ram)
			if (err != nil) != tt.isErr || got != tt.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d, err %v", tt.in, got, err, tt.want, tt.isErr)
			}
		})
	}
}

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

func FuzzParseMeminfo(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(hostsDir, "ci-vm-amd64", "proc", "meminfo")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("MemTotal: 1 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeminfo(b)
		if err == nil && (m.Total < 0 || m.Available < 0) {
			t.Errorf("negative: %+v", m)
		}
	})
}

func FuzzParseSize(f *testing.F) {
	f.Add("65536k", int64(0))
	f.Add("50%", int64(1<<34))
	f.Fuzz(func(t *testing.T, s string, ram int64) {
		if n, err := ParseSize(s, ram); err == nil && n < 0 {
			t.Errorf("ParseSize(%q) = %d", s, n)
		}
	})
}

func TestAnUnlimitedShmIsBoundedByRAMNotZero(t *testing.T) {
	// Synthetic: the kernel prints an unlimited tmpfs (mount -o size=0) as
	// size=0k in mountinfo.
	mounts := kernfs.ParseMountInfo([]byte("618 614 0:54 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=0k,inode64\n"))
	got, defaulted, unlimited := shmSize(mounts, 64<<30)
	if got == nil || *got != 64<<30 || defaulted || !unlimited {
		t.Fatalf("shmSize = %v, %v, %v; want RAM, unlimited", got, defaulted, unlimited)
	}
	for _, tt := range []struct {
		opt       string
		want      int64
		unlimited bool
	}{{"0k", 1 << 30, true}, {"0", 1 << 30, true}, {"65536k", 64 << 20, false}, {"50%", 512 << 20, false}} {
		n, unl, err := TmpfsSize(tt.opt, 1<<30)
		if err != nil || n != tt.want || unl != tt.unlimited {
			t.Errorf("TmpfsSize(%q) = %d, %v, %v; want %d, %v", tt.opt, n, unl, err, tt.want, tt.unlimited)
		}
	}
}
