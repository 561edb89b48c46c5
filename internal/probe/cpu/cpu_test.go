package cpu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

var hostsDir = filepath.Join("..", "..", "..", "testdata", "hosts")

func readFixture(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hostsDir, p))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCountTopology(t *testing.T) {
	tests := []struct {
		name string
		in   []TopologyRecord
		want Topology
	}{
		{"two packages of two cores with two threads each", []TopologyRecord{
			{"0", "0"}, {"0", "0"}, {"0", "1"}, {"0", "1"}, {"1", "0"}, {"1", "0"}, {"1", "1"}, {"1", "1"},
		}, Topology{Sockets: 2, Cores: 4}},
		{"an unknown package id leaves sockets unknown", []TopologyRecord{{"-1", "0"}, {"-1", "1"}}, Topology{Cores: 2}},
		{"no records know nothing", nil, Topology{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CountTopology(tt.in)); diff != "" {
				t.Errorf("CountTopology (-want +got):\n%s", diff)
			}
		})
	}
}

func sysroot(t *testing.T, tree string) *host.Host {
	t.Helper()
	h, err := host.Local(host.LocalOptions{Sysroot: filepath.Join(hostsDir, tree)})
	if err != nil {
		t.Fatal(err)
	}
	h.Env = host.MapEnv{}
	return h
}

// deviceView is the part of the device the tests pin down.
type deviceView struct {
	Vendor, Name, Arch  string
	Logical, Cores, Skt int
	MaxMHz              float64
	TotalMB, FreeMB     int64
	FP16, BF16, Int8    bool
	Quota               float64
}

func view(r probe.Result) deviceView {
	d := r.Devices[0]
	v := deviceView{Vendor: d.Vendor, Name: d.Name, FP16: d.SupportsFP16, BF16: d.SupportsBF16, Int8: d.Supports8Bit}
	deref := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	v.Logical, v.Cores, v.Skt = deref(d.LogicalCPUs), deref(d.Cores), deref(d.Sockets)
	if d.Architecture != nil {
		v.Arch = *d.Architecture
	}
	if d.MaxFreqMHz != nil {
		v.MaxMHz = *d.MaxFreqMHz
	}
	if d.TotalMemoryMB != nil {
		v.TotalMB = *d.TotalMemoryMB
	}
	if d.FreeMemoryMB != nil {
		v.FreeMB = *d.FreeMemoryMB
	}
	if r.Host != nil && r.Host.CPUQuota != nil {
		v.Quota = *r.Host.CPUQuota
	}
	return v
}

func TestProbeFixtures(t *testing.T) {
	tests := []struct {
		name string
		tree string
		want deviceView
	}{
		{"Sapphire Rapids supports fp16, bf16 and int8 through AMX and AVX-512", "x86-sapphire-rapids",
			deviceView{Vendor: "Intel", Name: "Intel(R) Xeon(R) Platinum 8488C", Arch: "amd64", Logical: 16, Cores: 8, Skt: 1, MaxMHz: 2400, FP16: true, BF16: true, Int8: true}},
		{"EPYC Genoa supports bf16 and int8 but not fp16", "x86-epyc-genoa",
			deviceView{Vendor: "AMD", Name: "AMD EPYC 9654 96-Core Processor", Arch: "amd64", Logical: 96, Cores: 96, Skt: 1, MaxMHz: 3700, BF16: true, Int8: true}},
		{"AmpereOne supports fp16 (fphp+asimdhp), bf16 and i8mm", "arm64-ampere1a",
			deviceView{Vendor: "Ampere", Name: "Ampere-1a", Arch: "arm64", Logical: 1, FP16: true, BF16: true, Int8: true}},
		{"Raspberry Pi 4 supports none of the reduced precisions", "arm64-rpi4",
			deviceView{Vendor: "ARM", Name: "Cortex-A72", Arch: "arm64", Logical: 1}},
		{"POWER9 has no cpuinfo features and so no reduced precisions", "ppc64le-power9",
			deviceView{Vendor: "IBM", Name: "POWER9, altivec supported", Arch: "ppc64le", Logical: 1, MaxMHz: 2300}},
		{"s390x z13 has four CPUs at 5 GHz", "s390x-z13",
			deviceView{Vendor: "IBM", Name: "IBM z13 (2964)", Arch: "s390x", Logical: 4, Cores: 4, MaxMHz: 5000}},
		{"a cpuset of four CPUs and a parent's 1.5-CPU quota limit a nested cgroup v2 job", "synthetic-cgroup2-nested",
			deviceView{Vendor: "Intel", Name: "Intel(R) Xeon(R) Platinum 8488C", Arch: "amd64", Logical: 4, Cores: 8, Skt: 1, MaxMHz: 2400,
				TotalMB: 2048, FreeMB: 2048, FP16: true, BF16: true, Int8: true, Quota: 1.5}},
		{"a Slurm job's v1 quota and cpuset apply to its step", "synthetic-cgroup1-slurm",
			deviceView{Vendor: "Intel", Name: "Intel(R) Xeon(R) Platinum 8488C", Arch: "amd64", Logical: 4, Cores: 8, Skt: 1, MaxMHz: 2400,
				TotalMB: 4096, FreeMB: 4096, FP16: true, BF16: true, Int8: true, Quota: 2}},
		{"the CI machine is a 2-CPU EPYC VM with all its RAM", "ci-vm-amd64",
			deviceView{Vendor: "AMD", Name: "AMD EPYC", Arch: "amd64", Logical: 2, Cores: 2, Skt: 1, MaxMHz: 2596.1,
				TotalMB: 24105, FreeMB: 23400, BF16: true, Int8: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New().Probe(context.Background(), sysroot(t, tt.tree))
			if err != nil {
				t.Fatal(err)
			}
			d := r.Devices[0]
			if d.ID != "cpu" || d.Backend != "cpu" || d.DeviceType != "cpu" || d.PytorchDevice != "cpu" || d.JAXPlatform != "cpu" {
				t.Errorf("identity fields wrong: %+v", d)
			}
			if diff := cmp.Diff(tt.want, view(r)); diff != "" {
				t.Errorf("device (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbeArmTopologyFromSysfs(t *testing.T) {
	// Synthetic: arm64 cpuinfo has no topology keys, so sockets and cores
	// come from sysfs; the big cluster's cpufreq maximum wins.
	files := map[string]string{
		"proc/cpuinfo":                  readFixtureString(t, "arm64-axion/proc/cpuinfo"),
		"sys/devices/system/cpu/online": "0-3\n",
		"sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq": "1800000\n",
		"sys/devices/system/cpu/cpufreq/policy2/cpuinfo_max_freq": "3000000\n",
	}
	for c, pc := range [][2]string{{"0", "0"}, {"0", "1"}, {"1", "0"}, {"1", "1"}} {
		base := fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/", c)
		files[base+"physical_package_id"] = pc[0] + "\n"
		files[base+"core_id"] = pc[1] + "\n"
	}
	h, err := host.Local(host.LocalOptions{Sysroot: fakehost.Tree(t, files)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	got := view(r)
	want := deviceView{Vendor: "ARM", Name: "Neoverse-V2", Arch: "arm64", Logical: 4, Cores: 4, Skt: 2, MaxMHz: 3000, FP16: true, BF16: true, Int8: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("device (-want +got):\n%s", diff)
	}
}

func readFixtureString(t *testing.T, p string) string { return string(readFixture(t, p)) }

func TestProbeWithoutCPUInfoIsAbsent(t *testing.T) {
	h, err := host.Local(host.LocalOptions{Sysroot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New().Probe(context.Background(), h)
	if !errors.Is(err, probe.ErrAbsent) {
		t.Errorf("err = %v, want ErrAbsent", err)
	}
}

// fakeSysctl answers from a "key: value" dump (sysctl -a format).
type fakeSysctl map[string]string

func (f fakeSysctl) Get(name string) (string, error) {
	if v, ok := f[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("sysctl %s: %w", name, host.ErrNotFound)
}

func loadSysctl(t *testing.T, p string) fakeSysctl {
	t.Helper()
	f := fakeSysctl{}
	sc := bufio.NewScanner(bytes.NewReader(readFixture(t, p)))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(": "))
		if ok {
			f[string(k)] = string(v)
		}
	}
	return f
}

func TestProbeDarwin(t *testing.T) {
	tests := []struct {
		name     string
		dump     string
		want     deviceView
		features []string
		extra    map[string]any
	}{
		{
			name:     "an M4 Max maps FEAT_* to Linux names and counts P and E cores",
			dump:     "darwin-m4-max/sysctl.txt",
			want:     deviceView{Vendor: "Apple", Name: "Apple M4 Max", Arch: "arm64", Logical: 16, Cores: 16, Skt: 1, TotalMB: 65536, FP16: true, BF16: true, Int8: true},
			features: []string{"asimd", "asimddp", "asimdhp", "bf16", "fphp", "i8mm", "sme2"},
			extra:    map[string]any{"performance_cores": 12, "efficiency_cores": 4},
		},
		{
			name:     "an Intel Mac's AVX1.0 and SSE4.2 become avx and sse4_2",
			dump:     "darwin-i7-6700k/sysctl.txt",
			want:     deviceView{Vendor: "Intel", Name: "Intel(R) Core(TM) i7-6700K CPU @ 4.00GHz", Arch: "amd64"},
			features: []string{"avx", "avx2", "fma", "sse4_2", "lm"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &host.Host{OS: "darwin", Arch: "arm64", Sysctl: loadSysctl(t, tt.dump), Env: host.MapEnv{}}
			r, err := New().Probe(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, view(r)); diff != "" {
				t.Errorf("device (-want +got):\n%s", diff)
			}
			d := r.Devices[0]
			for _, f := range tt.features {
				if !slices.Contains(d.Features, f) {
					t.Errorf("feature %q missing from %v", f, d.Features)
				}
			}
			for k, v := range tt.extra {
				if d.Extra[k] != v {
					t.Errorf("extra[%s] = %v, want %v", k, d.Extra[k], v)
				}
			}
		})
	}
}
