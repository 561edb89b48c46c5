//go:build unix

package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestAKilledWriterLeavesNoTempFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	// Writers that compact on every append spend most of their time with a
	// temp file open; kill them at varied moments.
	for i := 0; i < 5; i++ {
		cmd := writerCmd(t, path, i, 0, 1)
		cmd.Stderr = nil
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(30+17*i) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	// A stale temp from a killed compaction, planted for certain.
	os.WriteFile(filepath.Join(dir, ".tmp-history.jsonl-123"), []byte("x"), 0o600)
	if err := Append(path, rec{-1}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	got, _ := Read[rec](path)
	if len(got) == 0 || got[len(got)-1].N != -1 {
		t.Errorf("last record after kills: %v", got[max(0, len(got)-1):])
	}
}

func TestAFIFOAtTheStatePathIsRefusedNotWaitedOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 2)
	go func() { _, err := Read[rec](path); done <- err }()
	go func() { done <- Append(path, rec{1}) }()
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("err = %v, want ErrNotRegular", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("blocked on a FIFO")
		}
	}
}

// TestASymlinkAtTheStatePathIsNotFollowed: history.jsonl as a symbolic
// link was followed (issue 22), so a record landed in whatever file it
// named. Appending, reading and clearing all refuse it; the link's target
// and the link stay as they were. A symlinked lock file is refused too.
func TestASymlinkAtTheStatePathIsNotFollowed(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "history.jsonl")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, rec{1}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Append through a link: %v", err)
	}
	if _, err := Read[rec](path); err == nil {
		t.Error("Read followed the link")
	}
	if err := Clear(path); err == nil {
		t.Error("Clear followed the link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the link's target changed: %q", b)
	}
	other := filepath.Join(dir, "bench.jsonl")
	if err := os.Symlink(victim, other+".lock"); err != nil {
		t.Fatal(err)
	}
	if err := Append(other, rec{1}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Append with a linked lock file: %v", err)
	}
}
