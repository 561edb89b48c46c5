//go:build unix

package userfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestAFIFOWithNoWriterReadsEmptyAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(p, 100); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Read = %v, want an empty read", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked on a FIFO with no writer")
	}
}

func TestASilentWriterEndsAtTheDeadline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	// Hold the FIFO open for writing without writing.
	w, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, _, err := OpenWithin(p, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	_, err = io.ReadAll(f)
	if !errors.Is(Bare(err), ErrTimeout) || time.Since(start) > 5*time.Second {
		t.Fatalf("read = %v after %v, want ErrTimeout soon", err, time.Since(start))
	}
}

func TestLimitStopsAStreamThatNeverEnds(t *testing.T) {
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	n, err := io.Copy(io.Discard, Limit(f, 1<<20))
	var big *TooLargeError
	if !errors.As(err, &big) || n > 1<<20+1 {
		t.Fatalf("copied %d bytes, err %v; want a TooLargeError after 1 MiB", n, err)
	}
	if b, err := io.ReadAll(Limit(strings.NewReader("short"), 5)); err != nil || string(b) != "short" {
		t.Fatalf("a stream within the limit: %q, %v", b, err)
	}
}
