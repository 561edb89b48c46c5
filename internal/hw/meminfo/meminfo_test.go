package meminfo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/devctl/devctl/internal/hw/kernfs"
	"github.com/google/go-cmp/cmp"
)

var hostsDir = filepath.Join("..", "..", "..", "testdata", "hosts")

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Values
		wantErr error
	}{
		{
			name: "a modern kernel states MemAvailable",
			in:   "MemTotal:       24684092 kB\nMemFree:        23456824 kB\nMemAvailable:   24225204 kB\nSwapTotal:       1000 kB\nSwapFree:         500 kB\nHugePages_Total:       0\n",
			want: Values{Total: 24684092 << 10, Available: 24225204 << 10, Free: 23456824 << 10, SwapTotal: 1000 << 10, SwapFree: 500 << 10},
		},
		{
			name: "a kernel before 3.14 gets MemFree+Buffers+Cached as an estimate",
			in:   "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 10 kB\nCached: 200 kB\n",
			want: Values{Total: 1000 << 10, Available: 310 << 10, AvailableEstimated: true, Free: 100 << 10},
		},
		{
			name: "malformed lines are skipped",
			in:   "MemTotal: 1000 kB\nMemAvailable: lots\nSwapTotal: 1 2 3\nBroken\n",
			want: Values{Total: 1000 << 10, AvailableEstimated: true},
		},
		{
			name:    "a file without MemTotal is an error",
			in:      "MemFree: 100 kB\n",
			wantErr: ErrNoMemTotal,
		},
		{
			name: "a value too big for bytes is skipped, not wrapped",
			in:   "MemTotal: 99999999999999999 kB\nMemTotal: 10 kB\n",
			want: Values{Total: 10 << 10, AvailableEstimated: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
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

func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(hostsDir, "ci-vm-amd64", "proc", "meminfo")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("MemTotal: 1 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
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
