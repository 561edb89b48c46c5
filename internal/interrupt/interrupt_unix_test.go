//go:build unix

package interrupt

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/procgroup"
)

// TestASignalCancelsAndKillsEveryGroup sends this process SIGTERM while a
// real `sleep` runs in a tracked group of its own: the watched context is
// cancelled with the signal as its cause (exit 143), and the group is
// killed at once, before the command has even noticed.
func TestASignalCancelsAndKillsEveryGroup(t *testing.T) {
	cmd := exec.Command("sleep", "100")
	cmd.SysProcAttr = procgroup.Attr()
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	release := procgroup.Track(cmd.Process)
	defer release()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	ctx, stop := Watch(context.Background())
	defer stop()
	procgroup.Starting() // the program above started before the watch
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context was not cancelled")
	}
	in, ok := From(ctx)
	if !ok || in.Code() != 143 || !errors.Is(Err(ctx), ErrInterrupted) || in.Error() != "interrupted by SIGTERM" {
		t.Fatalf("cause %v, code %d", context.Cause(ctx), in.Code())
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("sleep ended with %v, want SIGKILL", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tracked group outlived the signal")
	}
}

func TestNoSignalNoCause(t *testing.T) {
	ctx, stop := Watch(context.Background())
	stop()
	if Err(ctx) != nil {
		t.Errorf("a stopped watch has cause %v", Err(ctx))
	}
	if _, ok := From(ctx); ok {
		t.Error("From reports an interruption")
	}
	if c := (&Interrupted{Signal: syscall.SIGINT}).Code(); c != 130 {
		t.Errorf("SIGINT code %d", c)
	}
	if c := (&Interrupted{Signal: syscall.SIGHUP}).Code(); c != 129 {
		t.Errorf("SIGHUP code %d", c)
	}
}
