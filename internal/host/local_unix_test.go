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
	tests := []struct{ name, path, want string }{
		{"a FIFO does not block the read", "/proc/cpuinfo", "not a regular file"},
		{"a link to /dev/zero stays in the tree, where there is none", "/proc/meminfo", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := h.FS.ReadFile(tt.path); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v, want %s", err, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("ReadFile blocked")
			}
		})
	}
}

// TestSysrootLinksResolveInsideTheTree plants links that would leave the
// tree (absolute, "../..", chained, through a linked directory) next to a
// host file they aim at, and checks that every read, stat, listing and
// link lookup stays inside the tree.
func TestSysrootLinksResolveInsideTheTree(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("HOST FILE"), 0o644)
	os.MkdirAll(filepath.Join(outside, "dir"), 0o755)
	os.WriteFile(filepath.Join(outside, "dir", "x"), []byte("HOST DIR FILE"), 0o644)
	root := t.TempDir()
	mk := func(p, content string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(content), 0o644)
	}
	ln := func(target, p string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("etc/os-release", "IN TREE")
	mk("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x10de")
	ln(filepath.Join(outside, "secret"), "proc/abs")                             // absolute, to the host
	ln("../../../../../../../../.."+filepath.Join(outside, "secret"), "proc/up") // ../ past the top
	ln("/etc/os-release", "proc/intree")                                         // absolute, meant for the tree
	ln("../proc/up", "proc/chain")                                               // a link to a link
	ln(outside, "proc/dirlink")                                                  // a directory outside
	ln("../../../devices/pci0000:00/0000:00:01.0", "sys/bus/pci/devices/0000:00:01.0")
	ln("loop2", "proc/loop1")
	ln("loop1", "proc/loop2")
	fsys := DirFS(root)

	for _, p := range []string{"/proc/abs", "/proc/up", "/proc/chain", "/proc/dirlink/secret", "/proc/dirlink/dir/x", "/proc/loop1"} {
		b, err := fsys.ReadFile(p)
		if err == nil || strings.Contains(string(b), "HOST") {
			t.Errorf("ReadFile(%s) = %q, %v; want an error and nothing from the host", p, b, err)
		}
		if fi, err := fsys.Stat(p); err == nil {
			t.Errorf("Stat(%s) found %v outside the tree", p, fi.Name())
		}
	}
	if es, err := fsys.ReadDir("/proc/dirlink"); err == nil {
		t.Errorf("ReadDir(/proc/dirlink) listed the host directory: %d entries", len(es))
	}
	if b, err := fsys.ReadFile("/proc/intree"); err != nil || string(b) != "IN TREE" {
		t.Errorf("an absolute link resolves against the tree: %q, %v", b, err)
	}
	if b, err := fsys.ReadFile("/sys/bus/pci/devices/0000:00:01.0/vendor"); err != nil || string(b) != "0x10de" {
		t.Errorf("a relative sysfs link resolves: %q, %v", b, err)
	}
	if target, err := fsys.Readlink("/proc/abs"); err != nil || target != filepath.Join(outside, "secret") {
		t.Errorf("Readlink returns the stored target: %q, %v", target, err)
	}
	if b, err := fsys.ReadFile("/../../proc/../etc/os-release"); err != nil || string(b) != "IN TREE" {
		t.Errorf(".. stops at the top of the tree: %q, %v", b, err)
	}
}
