package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

func TestCheckShmSize(t *testing.T) {
	// withFiles is testEnv over a temporary tree holding files.
	withFiles := func(t *testing.T, files map[string]string) *Env {
		root := t.TempDir()
		for name, body := range files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		e := testEnv()
		e.Host.FS = host.DirFS(root)
		return e
	}
	withShm := func(t *testing.T, shmMB int64, gpus int) *Env {
		e := testEnv()
		e.Report = &probe.Report{Host: probe.HostInfo{ShmTotalMB: probe.Ptr(shmMB)}, Summary: probe.Summary{GPUCount: gpus}}
		return e
	}
	tests := []struct {
		name string
		env  func(t *testing.T) *Env
		want Finding
	}{
		{
			name: "2 GiB of shared memory is small for four GPUs, which want 1 GiB each",
			env:  func(t *testing.T) *Env { return withShm(t, 2048, 4) },
			want: Finding{Status: Warn, Msg: "small", Args: Args{"size": "2048 MiB", "gpus": "4", "want": "8g"},
				Evidence: []Evidence{{"probe host.shm_total_mb", "2048"}}},
		},
		{
			name: "2 GiB of shared memory is enough for one GPU",
			env:  func(t *testing.T) *Env { return withShm(t, 2048, 1) },
			want: Finding{Status: Pass, Msg: "pass", Args: Args{"size": "2048 MiB", "gpus": "1", "want": "2g"},
				Evidence: []Evidence{{"probe host.shm_total_mb", "2048"}}},
		},
		{
			name: "a tmpfs mounted without size= is half of MemTotal",
			env: func(t *testing.T) *Env {
				return withFiles(t, map[string]string{
					"proc/mounts":  "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime 0 0\n",
					"proc/meminfo": "MemTotal:         409600 kB\nMemFree:          204800 kB\n",
				})
			},
			want: Finding{Status: Fail, Msg: "tiny", Args: Args{"size": "200 MiB", "gpus": "0", "want": "2g"},
				Evidence: []Evidence{{"memory facts /dev/shm", "no size= (tmpfs default: half of MemTotal)"}}},
		},
		{
			// Synthetic: the case where doctor's own parser drifted from the
			// probe's; both now read it through the memory driver.
			name: "size=25% is a quarter of MemTotal, as the probe reads it",
			env: func(t *testing.T) *Env {
				return withFiles(t, map[string]string{
					"proc/mounts":  "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=25% 0 0\n",
					"proc/meminfo": "MemTotal:        4194304 kB\nMemFree:         2097152 kB\n",
				})
			},
			want: Finding{Status: Pass, Msg: "pass", Args: Args{"size": "1024 MiB", "gpus": "0", "want": "2g"},
				Evidence: []Evidence{{"memory facts /dev/shm", "size= option"}}},
		},
		{
			name: "a tmpfs mounted size=0k has no limit: it is bounded by RAM, not empty",
			env: func(t *testing.T) *Env {
				return withFiles(t, map[string]string{
					"proc/mounts":  "shm /dev/shm tmpfs rw,nosuid,nodev,size=0k 0 0\n",
					"proc/meminfo": "MemTotal:         4194304 kB\nMemFree:          204800 kB\n",
				})
			},
			want: Finding{Status: Pass, Msg: "pass", Args: Args{"size": "4096 MiB", "gpus": "0", "want": "2g"},
				Evidence: []Evidence{{"memory facts /dev/shm", "size=0 (no limit but RAM)"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkShm.Run(context.Background(), tt.env(t))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("host.shm_size (-want +got):\n%s", d)
			}
		})
	}
}

func TestCheckPCIeLinkFallsBackToNVML(t *testing.T) {
	w := func(n int) *int { return &n }
	tests := []struct {
		name string
		devs []NVDevice
		want Finding
	}{
		{
			name: "a GPU trained at x8 in an x16 slot is narrow",
			devs: []NVDevice{{Index: 0, BusID: "00000000:3B:00.0", LinkWidthCur: w(8), LinkWidthMax: w(16)}},
			want: Finding{Status: Warn, Msg: "narrow",
				Args:     Args{"dev": "GPU 0 (00000000:3B:00.0)", "cur": "8", "max": "16", "addr": "00000000:3B:00.0"},
				Evidence: []Evidence{{"DeviceGetCurrPcieLinkWidth(0)", "8"}, {"DeviceGetMaxPcieLinkWidth(0)", "16"}}},
		},
		{
			name: "a GPU at its full width passes",
			devs: []NVDevice{{Index: 0, LinkWidthCur: w(16), LinkWidthMax: w(16)}},
			want: Finding{Status: Pass, Msg: "pass", Args: Args{"count": "1", "gen": ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkPCIeLink.Run(context.Background(), nvEnv(tt.devs...))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("pcie.link_width (-want +got):\n%s", d)
			}
		})
	}
}

// TestPCIeLinkNamesEveryNarrowGPU: two GPUs below their maximum width are
// both reported, not only the first one found (fixture fail-two, marked
// synthetic in testdata/doctor/README.md: the real x8 device copied with a
// second, x4 one).
func TestPCIeLinkNamesEveryNarrowGPU(t *testing.T) {
	e := testEnv()
	e.Host.FS = host.DirFS(filepath.Join(testdataDir, "doctor/pcie.link_width/fail-two/root"))
	f := checkPCIeLink.Run(context.Background(), e)
	want := Args{"n": "2", "of": "2", "list": "0000:17:00.0 x8/x16, 0000:65:00.0 x4/x16"}
	if diff := cmp.Diff(want, f.Args); diff != "" || f.Status != Warn || len(f.Evidence) != 4 {
		t.Errorf("status %s, evidence %d, args (-want +got):\n%s", f.Status, len(f.Evidence), diff)
	}
}

func TestAVX2NamesAnOversizedCpuinfoInsteadOfAMissingOne(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc"), 0o755)
	// Synthetic: a /proc/cpuinfo over the host's 16 MiB read bound.
	big := bytes.Repeat([]byte("flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr\n"), (17<<20)/58)
	if err := os.WriteFile(filepath.Join(root, "proc", "cpuinfo"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	e := testEnv()
	e.Host.FS = host.DirFS(root)
	e.Host.Arch = "amd64"
	got := checkAVX2.Run(context.Background(), e)
	if got.Status != Skip || got.Msg != "skip_unreadable_cpuinfo" || !strings.Contains(got.Args["error"], "larger than") {
		t.Errorf("got %+v; want skip_unreadable_cpuinfo naming the size", got)
	}
}
