package bench

import (
	"os"
	"path/filepath"
	"testing"
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

func FuzzParseCacheSize(f *testing.F) {
	f.Add("32768K")
	f.Add("1M")
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseCacheSize(s); err == nil && n < 0 {
			t.Fatalf("negative size %d", n)
		}
	})
}
