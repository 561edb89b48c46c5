package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mkdirWrite(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

func TestParseCacheSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"32768K", 32 << 20, false}, {"1M", 1 << 20, false}, {"512", 512, false}, {" 2G\n", 2 << 30, false},
		{"", 0, true}, {"K", 0, true}, {"-1K", 0, true}, {"99999999999999999999G", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseCacheSize(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseCacheSize(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want int
		bad  bool
	}{
		{"0", 1, false}, {"0-7", 8, false}, {"0-7,64-71", 16, false}, {"", 0, false},
		{"3-1", 0, true}, {"a", 0, true}, {"0-", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseCPUList(%q) = %d, %v", tt.in, got, err)
		}
	}
}

func TestParseCPUMax(t *testing.T) {
	q, err := ParseCPUMax([]byte("max 100000\n"))
	if err != nil || q != nil {
		t.Errorf("unlimited: %v, %v", q, err)
	}
	q, err = ParseCPUMax([]byte("250000 100000"))
	if err != nil || q == nil || *q != 2.5 {
		t.Errorf("2.5 CPUs: %v, %v", q, err)
	}
	for _, bad := range []string{"", "x 1", "1 0", "-5 100", "1 2 3"} {
		if _, err := ParseCPUMax([]byte(bad)); err == nil {
			t.Errorf("ParseCPUMax(%q) accepted", bad)
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	arm := "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nCPU part\t: 0xd40\n"
	got := ParseCPUInfo([]byte(arm))
	want := CPUInfo{ID: CPUID{Implementer: 0x41, Part: 0xd0c}, Processors: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestParseMeminfo(t *testing.T) {
	total, avail := ParseMeminfo([]byte("MemTotal: 1024 kB\nMemFree: 5 kB\nMemAvailable: 512 kB\nbad\n"))
	if total != 1<<20 || avail != 512<<10 {
		t.Errorf("got %d %d", total, avail)
	}
}

func FuzzParseCacheSize(f *testing.F) {
	f.Add("32768K")
	f.Add("1M")
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseCacheSize(s); err == nil && n < 0 {
			t.Fatalf("negative size %d", n)
		}
	})
}

func FuzzParseCPUList(f *testing.F) {
	f.Add("0-7,64-71")
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseCPUList(s); err == nil && n < 0 {
			t.Fatalf("negative count %d", n)
		}
	})
}

func FuzzParseCPUMax(f *testing.F) {
	f.Add([]byte("150000 100000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := ParseCPUMax(b); err == nil && q != nil && !(*q > 0) {
			t.Fatalf("non-positive quota %v", *q)
		}
	})
}

func FuzzParseCPUInfo(f *testing.F) {
	f.Add([]byte("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"))
	f.Fuzz(func(t *testing.T, b []byte) { ParseCPUInfo(b) })
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte("MemTotal: 1024 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if total, avail := ParseMeminfo(b); total < 0 || avail < 0 {
			t.Fatal("negative")
		}
	})
}
