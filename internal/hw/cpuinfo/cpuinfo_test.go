package cpuinfo

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
	// Features are checked below; the identity numbers in
	// TestParseCPUInfoKeepsTheFirstProcessorsIdentity.
	ignoreFeatures := cmpopts.IgnoreFields(Info{}, "Features", "Family", "ModelNumber", "Implementer", "Part")
	tests := []struct {
		name     string
		file     string // fixture tree, or "" to use text
		text     string
		want     Info
		features []string // must all be present
		absent   []string // must not be present
	}{
		{
			name: "a Sapphire Rapids dump cut to one entry still counts its package's siblings",
			file: "x86-sapphire-rapids",
			want: Info{Arch: "amd64", Vendor: "Intel", VendorID: "GenuineIntel", Model: "Intel(R) Xeon(R) Platinum 8488C",
				Processors: 16, Sockets: 1, Cores: 8, MaxMHz: 2400, MHzKey: "cpu MHz"},
			features: []string{"avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8", "amx_tile", "avx512_vnni", "avx_vnni"},
		},
		{
			name: "an EPYC Genoa has avx512_bf16 but no AMX",
			file: "x86-epyc-genoa",
			want: Info{Arch: "amd64", Vendor: "AMD", VendorID: "AuthenticAMD", Model: "AMD EPYC 9654 96-Core Processor",
				Processors: 96, Sockets: 1, Cores: 96, MaxMHz: 3699.993, MHzKey: "cpu MHz"},
			features: []string{"avx512_bf16", "avx512_vnni"},
			absent:   []string{"amx_bf16", "avx512_fp16"},
		},
		{
			name: "the CI machine's full dump counts both processors",
			file: "ci-vm-amd64",
			want: Info{Arch: "amd64", Vendor: "AMD", VendorID: "AuthenticAMD", Model: "AMD EPYC",
				Processors: 2, Sockets: 1, Cores: 2, MaxMHz: 2596.1, MHzKey: "cpu MHz"},
			features: []string{"avx2", "avx512_bf16"},
		},
		{
			name:     "an AmpereOne is named from its implementer and part",
			file:     "arm64-ampere1a",
			want:     Info{Arch: "arm64", Vendor: "Ampere", VendorID: "0xc0", Model: "Ampere-1a", Processors: 1},
			features: []string{"asimd", "asimddp", "asimdhp", "fphp", "i8mm", "bf16"},
			absent:   []string{"sve"},
		},
		{
			name:     "a Google Axion is a Neoverse-V2 with SVE2",
			file:     "arm64-axion",
			want:     Info{Arch: "arm64", Vendor: "ARM", VendorID: "0x41", Model: "Neoverse-V2", Processors: 1},
			features: []string{"sve", "sve2", "bf16", "i8mm"},
		},
		{
			name:     "a Raspberry Pi 4 is a Cortex-A72 without dot product",
			file:     "arm64-rpi4",
			want:     Info{Arch: "arm64", Vendor: "ARM", VendorID: "0x41", Model: "Cortex-A72", Processors: 1},
			features: []string{"asimd"},
			absent:   []string{"asimddp", "fphp"},
		},
		{
			name: "a POWER9 is named by its cpu line and clocked by clock",
			file: "ppc64le-power9",
			want: Info{Arch: "ppc64le", Vendor: "IBM", Model: "POWER9, altivec supported", Processors: 1, MaxMHz: 2300, MHzKey: "clock"},
		},
		{
			name: "an s390x z13 lists processors on one line each and declares the count",
			file: "s390x-z13",
			want: Info{Arch: "s390x", Vendor: "IBM", VendorID: "IBM/S390", Model: "IBM z13 (2964)", Processors: 4, Cores: 4,
				MaxMHz: 5000, MHzKey: "cpu MHz static"},
			features: []string{"vx", "zarch"},
		},
		{
			name: "an old arm32 kernel's Processor line is the model name",
			text: "Processor : ARMv7 Processor rev 5 (v7l)\nprocessor : 0\nprocessor : 1\nFeatures : swp half thumb neon vfpv4\nCPU implementer : 0x41\nCPU architecture: 7\nCPU part : 0xc07\n",
			want: Info{Arch: "arm", Vendor: "ARM", VendorID: "0x41", Model: "ARMv7 Processor rev 5 (v7l)", Processors: 2},
		},
		{
			name: "a 32-bit x86 has no lm flag",
			text: "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Pentium III\nflags\t\t: fpu vme sse\n",
			want: Info{Arch: "386", Vendor: "Intel", VendorID: "GenuineIntel", Model: "Pentium III", Processors: 1},
		},
		{
			name: "a RISC-V board is known by its isa line",
			text: "processor\t: 0\nhart\t\t: 1\nisa\t\t: rv64imafdc_zicsr\nmmu\t\t: sv39\n",
			want: Info{Arch: "riscv64", Processors: 1},
		},
		{
			name: "an unknown arm64 part is named by number",
			text: "processor : 0\nFeatures : fp asimd\nCPU implementer : 0x41\nCPU architecture: 8\nCPU part : 0xfff\n",
			want: Info{Arch: "arm64", Vendor: "ARM", VendorID: "0x41", Model: "ARM part 0xfff", Processors: 1},
		},
		{
			name: "an empty file says nothing",
			text: "",
			want: Info{},
		},
		{
			name: "garbage lines are ignored",
			text: "::::\nprocessor : x\ncpu MHz : fast\nphysical id :\n\x00\xff:\xfe",
			want: Info{Sockets: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.text)
			if tt.file != "" {
				in = readFixture(t, tt.file+"/proc/cpuinfo")
			}
			got := Parse(in)
			if diff := cmp.Diff(tt.want, got, ignoreFeatures); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
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

func FuzzParseCPUInfo(f *testing.F) {
	for _, tree := range []string{"x86-sapphire-rapids", "arm64-axion", "ppc64le-power9", "s390x-z13", "ci-vm-amd64"} {
		if b, err := os.ReadFile(filepath.Join(hostsDir, tree, "proc", "cpuinfo")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info := Parse(b)
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
			got := Parse([]byte(tt.in))
			if g := [4]int{got.Family, got.ModelNumber, got.Implementer, got.Part}; g != tt.want {
				t.Errorf("got %v, want %v", g, tt.want)
			}
		})
	}
}

// BenchmarkParseCPUInfo128 parses the CI machine's processor block
// repeated as 128 processors: the size of /proc/cpuinfo on a two-socket
// server, where a parser that copies every line shows.
func BenchmarkParseCPUInfo128(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(hostsDir, "ci-vm-amd64", "proc", "cpuinfo"))
	if err != nil {
		b.Fatal(err)
	}
	block, _, _ := bytes.Cut(data, []byte("\n\n"))
	var big []byte
	for i := 0; i < 128; i++ {
		big = append(big, bytes.Replace(block, []byte("processor\t: 0"), []byte("processor\t: "+strconv.Itoa(i)), 1)...)
		big = append(big, "\n\n"...)
	}
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		if info := Parse(big); info.Processors != 128 {
			b.Fatalf("%d processors", info.Processors)
		}
	}
}
