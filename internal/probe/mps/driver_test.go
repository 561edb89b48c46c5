package mps_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/mps"
)

func macFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "accel", "mac", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeSysctl answers from a "key: value" file.
type fakeSysctl map[string]string

func (f fakeSysctl) Get(name string) (string, error) {
	if v, ok := f[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("sysctl %s: %w", name, host.ErrNotFound)
}

func sysctlFrom(t *testing.T, name string) fakeSysctl {
	f := fakeSysctl{}
	for _, line := range strings.Split(string(macFile(t, name)), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			f[k] = v
		}
	}
	return f
}

// fakeRunner answers programs from recorded outputs keyed by the command line.
type fakeRunner map[string][]byte

func (f fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	if out, ok := f[strings.Join(append([]string{name}, args...), " ")]; ok {
		return out, nil
	}
	return nil, fmt.Errorf("%s: %w", name, host.ErrNotFound)
}

func (f fakeRunner) LookPath(name string) (string, error) { return "", host.ErrNotFound }

func macHost(sys fakeSysctl, run fakeRunner, arch string) *host.Host {
	return &host.Host{OS: "darwin", Arch: arch, Sysctl: sys, Runner: run, Env: host.MapEnv{}, Now: time.Now}
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name       string
		sysctl     string
		runner     map[string]string
		arch       string
		wantName   string
		wantMemMB  int64
		wantBF16   bool
		wantExtras map[string]any
	}{
		{
			name:     "an M4 on macOS 15 has bf16 and an estimated GPU budget",
			sysctl:   "sysctl-m4-macos15.txt",
			runner:   map[string]string{"ioreg -rc AGXAccelerator": "ioreg-m4.txt"},
			arch:     "arm64",
			wantName: "Apple M4", wantMemMB: 10977, wantBF16: true,
			wantExtras: map[string]any{"gpu_cores": 10, "performance_cores": 4, "efficiency_cores": 6, "gpu_budget_estimated": true, "rosetta": false, "unified_memory_mb": int64(16384)},
		},
		{
			name:     "an M1 under Rosetta on macOS 13 with a wired limit: no bf16, exact budget, Rosetta flagged",
			sysctl:   "sysctl-m1-rosetta-macos13.txt",
			runner:   map[string]string{"ioreg -rc AGXAccelerator": "ioreg-m1.txt"},
			arch:     "amd64",
			wantName: "Apple M1", wantMemMB: 6144, wantBF16: false,
			wantExtras: map[string]any{"gpu_cores": 8, "gpu_budget_estimated": false, "rosetta": true, "iogpu_wired_limit_mb": uint64(6144)},
		},
		{
			name:     "an Intel Mac with an AMD GPU on macOS 14 has fp16 but not bf16",
			sysctl:   "sysctl-intel-amd-macos14.txt",
			runner:   map[string]string{"system_profiler SPDisplaysDataType -json": "system_profiler-intel-amd.json"},
			arch:     "amd64",
			wantName: "AMD Radeon Pro 5500M", wantMemMB: 8192, wantBF16: false,
			wantExtras: map[string]any{"unified_memory": false, "rosetta": false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := fakeRunner{}
			for cmd, file := range tt.runner {
				run[cmd] = macFile(t, file)
			}
			res, err := mps.New().Probe(context.Background(), macHost(sysctlFrom(t, tt.sysctl), run, tt.arch))
			if err != nil {
				t.Fatal(err)
			}
			d := res.Devices[0]
			if d.ID != "mps" || d.PytorchDevice != "mps" || d.JAXPlatform != "metal" || d.Name != tt.wantName ||
				*d.TotalMemoryMB != tt.wantMemMB || d.SupportsBF16 != tt.wantBF16 || !d.SupportsFP16 {
				t.Errorf("device = %+v (mem %d)", d, *d.TotalMemoryMB)
			}
			for k, want := range tt.wantExtras {
				if diff := cmp.Diff(want, d.Extra[k]); diff != "" {
					t.Errorf("extra[%s] (-want +got):\n%s", k, diff)
				}
			}
		})
	}
}

func TestProbeAbsence(t *testing.T) {
	tests := []struct {
		name string
		h    func(t *testing.T) *host.Host
		want string
	}{
		{"Linux is not macOS", func(t *testing.T) *host.Host { return &host.Host{OS: "linux"} }, "not macOS: absent"},
		{"macOS 12.2 is too old", func(t *testing.T) *host.Host {
			s := sysctlFrom(t, "sysctl-m4-macos15.txt")
			s["kern.osproductversion"] = "12.2"
			return macHost(s, fakeRunner{}, "arm64")
		}, `macOS "12.2": PyTorch MPS needs macOS 12.3 or newer: absent`},
		{"an Intel Mac with only Intel graphics", func(t *testing.T) *host.Host {
			return macHost(sysctlFrom(t, "sysctl-intel-only-macos14.txt"),
				fakeRunner{"system_profiler SPDisplaysDataType -json": macFile(t, "system_profiler-intel-only.json")}, "amd64")
		}, "Intel Mac without an AMD GPU: MPS unavailable: absent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mps.New().Probe(context.Background(), tt.h(t))
			if !errors.Is(err, probe.ErrAbsent) || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestProbeFallsBackToSwVers(t *testing.T) {
	s := sysctlFrom(t, "sysctl-m4-macos15.txt")
	delete(s, "kern.osproductversion")
	res, err := mps.New().Probe(context.Background(), macHost(s, fakeRunner{"sw_vers -productVersion": []byte("14.4\n")}, "arm64"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Devices[0].Extra["macos_version"] != "14.4" || res.Devices[0].Extra["gpu_cores"] != nil {
		t.Errorf("extra = %v", res.Devices[0].Extra)
	}
}

func TestParseIoreg(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want mps.IoregGPU
		ok   bool
	}{
		{"an M4 entry", "      \"model\" = \"Apple M4\"\n      \"gpu-core-count\" = 10\n", mps.IoregGPU{Model: "Apple M4", Cores: 10}, true},
		{"an ioreg -l tree with pipes", "    | |   \"gpu-core-count\" = 14\n", mps.IoregGPU{Cores: 14}, true},
		{"no accelerator", "+-o Root\n", mps.IoregGPU{}, false},
		{"a non-number", "\"gpu-core-count\" = many\n", mps.IoregGPU{}, false},
		{"only the first count counts", "\"gpu-core-count\" = 8\n\"gpu-core-count\" = 40\n", mps.IoregGPU{Cores: 8}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mps.ParseIoreg([]byte(tt.in))
			if ok != tt.ok || got != tt.want {
				t.Errorf("ParseIoreg = %+v, %v", got, ok)
			}
		})
	}
}

func TestParseDisplays(t *testing.T) {
	got, err := mps.ParseDisplays(macFile(t, "system_profiler-intel-amd.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].IsAMD || !got[1].IsAMD || got[1].VRAMMiB != 8192 || got[1].Model != "AMD Radeon Pro 5500M" {
		t.Errorf("displays = %+v", got)
	}
	if _, err := mps.ParseDisplays([]byte("{not json")); err == nil {
		t.Error("broken JSON gave no error")
	}
	got, err = mps.ParseDisplays([]byte(`{"SPDisplaysDataType":["text", null, {"sppci_model":"Apple M2 Pro","sppci_cores":"19","spdisplays_vendor":"sppci_vendor_Apple"}]}`))
	if err != nil || len(got) != 1 || got[0].Cores != 19 || !got[0].IsApple {
		t.Errorf("displays = %+v, %v", got, err)
	}
}

func TestParseSizeAndEstimate(t *testing.T) {
	for in, want := range map[string]int64{"8 GB": 8192, "1536 MB": 1536, "1 TB": 1 << 20, "lots": 0, "-1 GB": 0, "": 0} {
		if got := mps.ParseSize(in); got != want {
			t.Errorf("ParseSize(%q) = %d, want %d", in, got, want)
		}
	}
	if got := mps.WorkingSetEstimate(16 << 30); got != (16<<30)/100*67 {
		t.Errorf("16 GiB estimate %d", got)
	}
	if got := mps.WorkingSetEstimate(128 << 30); got != 96<<30 {
		t.Errorf("128 GiB estimate %d", got)
	}
}

func FuzzParseIoreg(f *testing.F) {
	f.Add([]byte("\"gpu-core-count\" = 10\n\"model\" = \"Apple M4\""))
	f.Fuzz(func(t *testing.T, b []byte) {
		if g, ok := mps.ParseIoreg(b); ok && g.Cores <= 0 {
			t.Errorf("ok with %d cores", g.Cores)
		}
	})
}

func FuzzParseDisplays(f *testing.F) {
	f.Add([]byte(`{"SPDisplaysDataType":[{"spdisplays_vram":"8 GB","spdisplays_vendor":"AMD (0x1002)"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, _ := mps.ParseDisplays(b)
		for _, d := range ds {
			if d.VRAMMiB < 0 {
				t.Errorf("negative VRAM %d", d.VRAMMiB)
			}
		}
	})
}

func FuzzParseSize(f *testing.F) {
	f.Add("8 GB")
	f.Fuzz(func(t *testing.T, s string) {
		if v := mps.ParseSize(s); v < 0 {
			t.Errorf("ParseSize(%q) = %d", s, v)
		}
	})
}
