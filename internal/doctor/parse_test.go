package doctor

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/hw/kernfs"
	"github.com/devctl/devctl/internal/hw/meminfo"
)

func TestParseNvidiaVersion(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"the proprietary module line gives its version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\nGCC version:  gcc version 12.3.0\n", "550.90.07"},
		{"the open module line gives its version", "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 23:09:56 UTC 2025\n", "570.86.15"},
		{"a two-part version is accepted", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104  Sat Aug 19 2023\n", "535.104"},
		{"text without an NVRM line gives nothing", "GCC version: 12.3.0\n", ""},
		{"empty input gives nothing", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseNvidiaVersion([]byte(tt.in)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseLDCache(t *testing.T) {
	in := "glibc-ld.so.cache1.1\x00\x00\x00libnvidia-ml.so.1\x00/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\x00libc.so.6\x00/lib/x86_64-linux-gnu/libc.so.6\x00\x01\x02/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\x00"
	got := ParseLDCache([]byte(in), "libnvidia-ml.so")
	if d := cmp.Diff([]string{"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseAllocConf(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"the documented expandable segments setting is valid", "expandable_segments:True", true},
		{"several options with a bracketed list are valid", "max_split_size_mb:512,roundup_power2_divisions:[256:1,512:2,>:8],garbage_collection_threshold:0.6", true},
		{"the async backend is valid", "backend:cudaMallocAsync", true},
		{"an equals sign is refused", "expandable_segments=True", false},
		{"lower-case true is refused", "expandable_segments:true", false},
		{"a split size of 20 MiB or less is refused", "max_split_size_mb:20", false},
		{"an unknown option is refused", "max_split_mb:512", false},
		{"a garbage threshold of 1 is refused", "garbage_collection_threshold:1", false},
		{"a non-power-of-two division is refused", "roundup_power2_divisions:3", false},
		{"a power-of-two count of pinned register threads is valid", "pinned_num_register_threads:8", true},
		{"a count of pinned register threads that is not a power of two is refused", "pinned_num_register_threads:6", false},
		{"an empty value is valid", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ParseAllocConf(tt.in); (err == nil) != tt.ok {
				t.Errorf("ParseAllocConf(%q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
		})
	}
}

func TestCheckVisibleDevices(t *testing.T) {
	msgs := func(ps []VisibleProblem) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Msg)
		}
		return out
	}
	tests := []struct {
		name, value string
		count       int
		want        []string
	}{
		{"an empty value hides every GPU", "", 2, []string{"hidden"}},
		{"NoDevFiles hides every GPU", "NoDevFiles", 2, []string{"hidden"}},
		{"valid indices are fine", "1,0", 2, nil},
		{"an index beyond the count is reported", "0,2", 2, []string{"out_of_range"}},
		{"a word is an invalid entry", "0,gpu1", 2, []string{"bad_entry"}},
		{"a duplicate is reported", "0,0", 2, []string{"duplicate"}},
		{"two MIG devices are reported", "MIG-a,MIG-b", 2, []string{"multi_mig"}},
		{"indices mixed with UUIDs are reported", "0,GPU-abc", -1, []string{"mixed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, msgs(CheckVisibleDevices("CUDA_VISIBLE_DEVICES", tt.value, tt.count, nil))); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestCUDAForDriver(t *testing.T) {
	for in, want := range map[string]string{"550.90.07": "12.4", "525.60.11": "11.8", "525.60.13": "12.0", "580.65.06": "13.0", "390.1": ""} {
		if got := CUDAForDriver(in); got != want {
			t.Errorf("CUDAForDriver(%s) = %q, want %q", in, got, want)
		}
	}
}

// The shm and cgroup checks use the probe's parsers; these are the values
// they rely on.
func TestParseSizesAndMounts(t *testing.T) {
	if n, err := meminfo.ParseSize("65536k", 0); err != nil || n != 64<<20 {
		t.Errorf("ParseSize(65536k) = %d %v", n, err)
	}
	if _, err := meminfo.ParseSize("12x", 0); err == nil {
		t.Error("ParseSize accepted 12x")
	}
	mi := "618 614 0:54 / /dev/shm rw,nosuid,nodev,noexec,relatime - tmpfs shm rw,size=65536k,inode64\n"
	m, ok := kernfs.FindMount(kernfs.ParseMountInfo([]byte(mi)), "/dev/shm")
	if v, _ := m.Option("size"); !ok || m.FSType != "tmpfs" || v != "65536k" {
		t.Errorf("mountinfo /dev/shm = %+v %v", m, ok)
	}
	if q, lim, err := kernfs.ParseCPUMax([]byte("150000 100000")); err != nil || !lim || q != 1.5 {
		t.Errorf("ParseCPUMax = %v %v %v", q, lim, err)
	}
}

func TestMachOArch(t *testing.T) {
	x86 := []byte{0xcf, 0xfa, 0xed, 0xfe, 0x07, 0x00, 0x00, 0x01}
	arm := []byte{0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01}
	fat := []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}
	for in, want := range map[string]string{string(x86): "x86_64", string(arm): "arm64", string(fat): "universal", "#!/bin/sh": ""} {
		if got := MachOArch([]byte(in)); got != want {
			t.Errorf("MachOArch = %q, want %q", got, want)
		}
	}
}

func FuzzParseNvidiaVersion(f *testing.F) {
	f.Add([]byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v := ParseNvidiaVersion(b); v != "" && !isDriverVersion(v) {
			t.Errorf("returned a non-version %q", v)
		}
	})
}

func FuzzParseLDCache(f *testing.F) {
	f.Add([]byte("ld.so-1.7.0\x00/usr/lib/libnvidia-ml.so.1\x00"))
	f.Fuzz(func(t *testing.T, b []byte) { _ = ParseLDCache(b, "libnvidia-ml.so") })
}

func FuzzParseAllocConf(f *testing.F) {
	f.Add("expandable_segments:True,roundup_power2_divisions:[256:1,>:8]")
	f.Fuzz(func(t *testing.T, s string) { _ = ParseAllocConf(s) })
}

func FuzzParsePlistAndMachO(f *testing.F) {
	f.Add([]byte("<key>ProductVersion</key>\n<string>14.5</string>\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = ParsePlistString(b, "ProductVersion")
		_ = MachOArch(b)
	})
}

func FuzzCheckVisibleDevices(f *testing.F) {
	f.Add("0,1,MIG-x,GPU-y")
	f.Fuzz(func(t *testing.T, s string) { _ = CheckVisibleDevices("CUDA_VISIBLE_DEVICES", s, 2, []string{"GPU-y"}) })
}
