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
	"github.com/google/go-cmp/cmp/cmpopts"

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

func TestParseCPUInfo(t *testing.T) {
	// Features are checked separately (they are long); here only a few
	// that matter to the capability rules.
	// Features are checked below; the identity numbers in
	// TestParseCPUInfoKeepsTheFirstProcessorsIdentity.
	ignoreFeatures := cmpopts.IgnoreFields(CPUInfo{}, "Features", "Family", "ModelNumber", "Implementer", "Part")
	tests := []struct {
		name     string
		file     string // fixture tree, or "" to use text
		text     string
		want     CPUInfo
		features []string // must all be present
		absent   []string // must not be present
	}{
		{
			name: "a Sapphire Rapids dump cut to one entry still counts its package's siblings",
			file: "x86-sapphire-rapids",
			want: CPUInfo{Arch: "amd64", Vendor: "Intel", VendorID: "GenuineIntel", Model: "Intel(R) Xeon(R) Platinum 8488C",
				Processors: 16, Sockets: 1, Cores: 8, MaxMHz: 2400, MHzKey: "cpu MHz"},
			features: []string{"avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8", "amx_tile", "avx512_vnni", "avx_vnni"},
		},
		{
			name: "an EPYC Genoa has avx512_bf16 but no AMX",
			file: "x86-epyc-genoa",
			want: CPUInfo{Arch: "amd64", Vendor: "AMD", VendorID: "AuthenticAMD", Model: "AMD EPYC 9654 96-Core Processor",
				Processors: 96, Sockets: 1, Cores: 96, MaxMHz: 3699.993, MHzKey: "cpu MHz"},
			features: []string{"avx512_bf16", "avx512_vnni"},
			absent:   []string{"amx_bf16", "avx512_fp16"},
		},
		{
			name: "the CI machine's full dump counts both processors",
			file: "ci-vm-amd64",
			want: CPUInfo{Arch: "amd64", Vendor: "AMD", VendorID: "AuthenticAMD", Model: "AMD EPYC",
				Processors: 2, Sockets: 1, Cores: 2, MaxMHz: 2596.1, MHzKey: "cpu MHz"},
			features: []string{"avx2", "avx512_bf16"},
		},
		{
			name:     "an AmpereOne is named from its implementer and part",
			file:     "arm64-ampere1a",
			want:     CPUInfo{Arch: "arm64", Vendor: "Ampere", VendorID: "0xc0", Model: "Ampere-1a", Processors: 1},
			features: []string{"asimd", "asimddp", "asimdhp", "fphp", "i8mm", "bf16"},
			absent:   []string{"sve"},
		},
		{
			name:     "a Google Axion is a Neoverse-V2 with SVE2",
			file:     "arm64-axion",
			want:     CPUInfo{Arch: "arm64", Vendor: "ARM", VendorID: "0x41", Model: "Neoverse-V2", Processors: 1},
			features: []string{"sve", "sve2", "bf16", "i8mm"},
		},
		{
			name:     "a Raspberry Pi 4 is a Cortex-A72 without dot product",
			file:     "arm64-rpi4",
			want:     CPUInfo{Arch: "arm64", Vendor: "ARM", VendorID: "0x41", Model: "Cortex-A72", Processors: 1},
			features: []string{"asimd"},
			absent:   []string{"asimddp", "fphp"},
		},
		{
			name: "a POWER9 is named by its cpu line and clocked by clock",
			file: "ppc64le-power9",
			want: CPUInfo{Arch: "ppc64le", Vendor: "IBM", Model: "POWER9, altivec supported", Processors: 1, MaxMHz: 2300, MHzKey: "clock"},
		},
		{
			name: "an s390x z13 lists processors on one line each and declares the count",
			file: "s390x-z13",
			want: CPUInfo{Arch: "s390x", Vendor: "IBM", VendorID: "IBM/S390", Model: "IBM z13 (2964)", Processors: 4, Cores: 4,
				MaxMHz: 5000, MHzKey: "cpu MHz static"},
			features: []string{"vx", "zarch"},
		},
		{
			name: "an old arm32 kernel's Processor line is the model name",
			text: "Processor : ARMv7 Processor rev 5 (v7l)\nprocessor : 0\nprocessor : 1\nFeatures : swp half thumb neon vfpv4\nCPU implementer : 0x41\nCPU architecture: 7\nCPU part : 0xc07\n",
			want: CPUInfo{Arch: "arm", Vendor: "ARM", VendorID: "0x41", Model: "ARMv7 Processor rev 5 (v7l)", Processors: 2},
		},
		{
			name: "a 32-bit x86 has no lm flag",
			text: "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Pentium III\nflags\t\t: fpu vme sse\n",
			want: CPUInfo{Arch: "386", Vendor: "Intel", VendorID: "GenuineIntel", Model: "Pentium III", Processors: 1},
		},
		{
			name: "a RISC-V board is known by its isa line",
			text: "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc_zicsr\nmmu\t\t: sv39\n",
			want: CPUInfo{Arch: "riscv64", Processors: 1},
		},
		{
			name: "an unknown arm64 part is named by number",
			text: "processor : 0\nFeatures : fp asimd\nCPU implementer : 0x41\nCPU architecture: 8\nCPU part : 0xfff\n",
			want: CPUInfo{Arch: "arm64", Vendor: "ARM", VendorID: "0x41", Model: "ARM part 0xfff", Processors: 1},
		},
		{
			name: "an empty file says nothing",
			text: "",
			want: CPUInfo{},
		},
		{
			name: "garbage lines are ignored",
			text: "::::\nprocessor : x\ncpu MHz : fast\nphysical id :\n\x00\xff:\xfe",
			want: CPUInfo{Sockets: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.text)
			if tt.file != "" {
				in = readFixture(t, tt.file+"/proc/cpuinfo")
			}
			got := ParseCPUInfo(in)
			if diff := cmp.Diff(tt.want, got, ignoreFeatures); diff != "" {
				t.Errorf("ParseCPUInfo (-want +got):\n%s", diff)
			}
			for _, f := range tt.features {
				if !slices.Contains(got.Features, f) {
					t.Errorf("feature %q missing from %v", f, got.Features)
				}
			}
			for _, f := range tt.absent {
				if slices.Contains(got.Features, f) {
					t.Errorf("feature %q should be absent", f)
				}
			}
			if !slices.IsSorted(got.Features) {
				t.Errorf("features are not sorted: %v", got.Features)
			}
		})
	}
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

func FuzzParseCPUInfo(f *testing.F) {
	for _, tree := range []string{"x86-sapphire-rapids", "arm64-axion", "ppc64le-power9", "s390x-z13", "ci-vm-amd64"} {
		if b, err := os.ReadFile(filepath.Join(hostsDir, tree, "proc", "cpuinfo")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info := ParseCPUInfo(b)
		if info.Processors < 0 || info.Cores < 0 || info.Sockets < 0 || info.MaxMHz < 0 {
			t.Errorf("negative count: %+v", info)
		}
	})
}

func TestParseCPUInfoKeepsTheFirstProcessorsIdentity(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want [4]int // family, model number, implementer, part
	}{
		{
			name: "an arm64 big.LITTLE file gives the first core's MIDR",
			in:   "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nCPU part\t: 0xd40\n",
			want: [4]int{0, 0, 0x41, 0xd0c},
		},
		{
			name: "an x86 file gives cpu family and model, not the model name",
			in:   "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\nflags\t\t: fpu lm\n\nprocessor\t: 1\ncpu family\t: 25\nmodel\t\t: 17\n",
			want: [4]int{26, 2, 0, 0},
		},
	}
	for _, fx := range []struct {
		file string
		want [4]int
	}{
		{"x86-sapphire-rapids", [4]int{6, 143, 0, 0}}, // Sapphire Rapids is family 6 model 0x8f
		{"x86-epyc-genoa", [4]int{25, 17, 0, 0}},      // Zen 4 Genoa: family 0x19 model 0x11
		{"ci-vm-amd64", [4]int{26, 2, 0, 0}},          // Zen 5: family 0x1a
		{"arm64-ampere1a", [4]int{0, 0, 0xc0, 0xac4}}, // Ampere, AmpereOne
		{"arm64-axion", [4]int{0, 0, 0x41, 0xd4f}},    // Arm Neoverse-V2
		{"arm64-rpi4", [4]int{0, 0, 0x41, 0xd08}},     // Arm Cortex-A72
	} {
		tests = append(tests, struct {
			name string
			in   string
			want [4]int
		}{"the real " + fx.file + " dump", string(readFixture(t, fx.file+"/proc/cpuinfo")), fx.want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseCPUInfo([]byte(tt.in))
			if g := [4]int{got.Family, got.ModelNumber, got.Implementer, got.Part}; g != tt.want {
				t.Errorf("got %v, want %v", g, tt.want)
			}
		})
	}
}
