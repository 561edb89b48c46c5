package host

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestDirFSServesMachinePathsFromTheRoot(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc"), 0o755)
	os.WriteFile(filepath.Join(root, "proc", "cpuinfo"), []byte("processor : 0\n"), 0o644)
	os.Symlink("cpuinfo", filepath.Join(root, "proc", "link"))
	h, err := Local(LocalOptions{Sysroot: root})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := h.ReadString("/proc/cpuinfo"); err != nil || s != "processor : 0" {
		t.Fatalf("ReadString = %q, %v", s, err)
	}
	if s, _ := h.ReadString("/proc/link"); s != "processor : 0" {
		t.Errorf("a relative link inside the tree should resolve, got %q", s)
	}
	if target, _ := h.FS.Readlink("/proc/link"); target != "cpuinfo" {
		t.Errorf("Readlink = %q", target)
	}
	if _, err := h.FS.ReadFile("/proc/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file err = %v", err)
	}
	if _, err := h.FS.ReadFile("relative"); err == nil {
		t.Error("a relative path must be refused")
	}
	if _, err := h.FS.ReadFile("/../../etc/passwd"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dot-dot must stay inside the root, got %v", err)
	}
	if h.Exists("/proc") != true || h.Exists("/sys") != false {
		t.Error("Exists is wrong")
	}
}

func TestSysrootMustBeADirectory(t *testing.T) {
	if _, err := Local(LocalOptions{Sysroot: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("a missing sysroot must be refused")
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := Local(LocalOptions{Sysroot: f}); err == nil {
		t.Fatal("a file as sysroot must be refused")
	}
}

func TestSysrootTurnsProgramsOff(t *testing.T) {
	h, err := Local(LocalOptions{Sysroot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Runner.Run(context.Background(), "nvidia-smi"); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v", err)
	}
	if h.NVML != nil {
		t.Error("NVML must be off under a sysroot")
	}
}

func TestExecRunner(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
		return p
	}
	r := &ExecRunner{
		Allow:   []string{"definitely-not-installed-xyz"},
		Paths:   map[string]string{"ok": script("ok", "echo hello"), "fail": script("fail", "echo broken >&2; exit 3"), "hang": script("hang", "exec sleep 30")},
		Timeout: 200 * time.Millisecond,
	}
	ctx := context.Background()
	if out, err := r.Run(ctx, "ok"); err != nil || string(out) != "hello\n" {
		t.Errorf("ok: %q, %v", out, err)
	}
	if _, err := r.Run(ctx, "fail"); err == nil || err.Error() != "fail: exit status 3: broken" {
		t.Errorf("fail: %v", err)
	}
	start := time.Now()
	if _, err := r.Run(ctx, "hang"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hang: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Error("the timeout did not stop the program")
	}
	if _, err := r.Run(ctx, "rm"); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("rm: %v", err)
	}
	if _, err := r.Run(ctx, "definitely-not-installed-xyz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

func TestParseGroupFile(t *testing.T) {
	got := ParseGroupFile([]byte("root:x:0:\n# comment\nvideo:x:44:alice,bob\nbroken\nrender:x:nope:\nrender:x:105:\n"))
	want := map[int]string{0: "root", 44: "video", 105: "render"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("gid %d = %q, want %q", k, got[k], v)
		}
	}
}

func FuzzParseGroupFile(f *testing.F) {
	f.Add([]byte("video:x:44:alice\n"))
	f.Fuzz(func(t *testing.T, data []byte) { ParseGroupFile(data) })
}

// chunky reads at most n bytes per call, as pipes and some procfs files do,
// and fails with err once its data is gone (nil: io.EOF).
type chunky struct {
	data []byte
	n    int
	err  error
}

func (c *chunky) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

func TestReadAllReturnsExactlyWhatWasThere(t *testing.T) {
	const limit = 10000
	for _, size := range []int{0, 1, 200, 4095, 4096, 4097, 9000, limit, limit + 1, 3 * limit} {
		for _, chunk := range []int{1, 7, 4096, 1 << 20} {
			data := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
			got, err := readAll(&chunky{data: data, n: chunk}, limit)
			if err != nil {
				t.Fatalf("size %d chunk %d: %v", size, chunk, err)
			}
			want := data
			if size > limit {
				want = data[:limit+1] // just past the limit: the caller refuses it
			}
			if !bytes.Equal(got, want) || got == nil {
				t.Fatalf("size %d chunk %d: got %d bytes (nil %v), want %d", size, chunk, len(got), got == nil, len(want))
			}
		}
	}
	// A reused buffer must never leak one file's bytes into the next.
	a, _ := readAll(&chunky{data: []byte("first file, longer"), n: 4096}, limit)
	b, _ := readAll(&chunky{data: []byte("second"), n: 4096}, limit)
	if string(a) != "first file, longer" || string(b) != "second" {
		t.Errorf("got %q then %q", a, b)
	}
	boom := errors.New("boom")
	if _, err := readAll(&chunky{data: []byte("partial"), n: 3, err: boom}, limit); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
}
