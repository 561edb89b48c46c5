//go:build linux || darwin

package host

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDirFSRefusesFilesThatAreNotRegular(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(root, "proc", "cpuinfo"), 0o644); err != nil {
		t.Skip(err)
	}
	os.Symlink("/dev/zero", filepath.Join(root, "proc", "meminfo"))
	h, err := Local(LocalOptions{Sysroot: root})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path string }{
		{"a FIFO does not block the read", "/proc/cpuinfo"},
		{"a link to a character device is not read", "/proc/meminfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := h.FS.ReadFile(tt.path); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("err = %v, want not a regular file", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ReadFile blocked")
			}
		})
	}
}
