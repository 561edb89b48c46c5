//go:build linux || darwin

package host

import (
	"context"
	"errors"
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

// gone reports whether pid has exited (absent, or a zombie nobody reaped
// yet: in a container PID 1 may not reap).
func gone(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// TestExecRunnerLeavesNoDescendants runs a hung wrapper that started a
// `sleep 1000` (as a hung nvidia-smi wrapper did) and a program that
// answered and exited while a background child still held its stdout.
func TestExecRunnerLeavesNoDescendants(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
		return p
	}
	pidOf := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return strings.TrimSpace(string(b))
	}
	r := &ExecRunner{
		Paths: map[string]string{
			"hung":       script("hung", "sleep 1000 & echo $! > "+dir+"/hung.pid; wait"),
			"background": script("background", "sleep 1000 & echo $! > "+dir+"/bg.pid; echo complete answer"),
		},
		Timeout: 500 * time.Millisecond,
	}
	ctx := context.Background()

	if _, err := r.Run(ctx, "hung"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung: %v", err)
	}
	start := time.Now()
	out, err := r.Run(ctx, "background")
	if err != nil || string(out) != "complete answer\n" {
		t.Errorf("background: %q, %v; want the complete answer", out, err)
	}
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Errorf("background: took %v; the answer was complete when the program exited", d)
	}
	for _, name := range []string{"hung.pid", "bg.pid"} {
		pid := pidOf(name)
		if pid == "" {
			t.Fatalf("%s: the script did not start its child", name)
		}
		deadline := time.Now().Add(2 * time.Second)
		for !gone(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !gone(pid) {
			t.Errorf("%s: sleep (pid %s) outlived the run", name, pid)
			syscall.Kill(-mustAtoi(pid), syscall.SIGKILL)
		}
	}
}

func mustAtoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
