// Package interrupt is devctl's one signal policy for the commands that do
// not forward signals themselves (every command but run and serve):
//
//   - The first SIGINT, SIGTERM or SIGHUP cancels the command's context,
//     with an *Interrupted as its cause, and kills at once every process
//     group devctl started (procgroup.KillAll: a hung nvidia-smi and its
//     children), so nothing outlives devctl whatever it is doing.
//   - A cancelled command is not a passed one: root.Main exits 128+N for
//     signal N (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), whatever
//     the command returned, and prints one line saying so. A probe that a
//     Ctrl-C cut short never reports its drivers as timed out, and a CI
//     gate (--require, --fail-on) never passes on it.
//   - The handler is removed after the first signal, so a second one acts
//     as it would without devctl's (the shell's Ctrl-C kills it). A
//     command that does not return within Grace of the first signal (one
//     blocked in a read that cannot see the context) is ended the same
//     way: devctl re-raises the signal on itself. A signal devctl was
//     started with ignored (SIGINT and SIGHUP in a shell's background
//     job) would stay ignored when re-raised, so SIGTERM is raised
//     instead, and that command ends with 143.
//   - Every exit path of root.Main kills the groups still tracked.
//   - The handler is installed when the command first starts a program
//     (procgroup.Starting), not before: installing it costs a thread
//     (os/signal's receiver) and half a millisecond of every start-up,
//     and until a program runs there is nothing to end or clean up, so a
//     signal's default action (devctl ends, exit 128+N) is the policy.
//     When devctl starts with one of the signals ignored, the default
//     action would not apply, and the handler is installed at once.
package interrupt

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/devctl/devctl/internal/procgroup"
)

// Grace is how long a command has, after the first signal, to notice its
// cancelled context and return before devctl ends itself by the signal.
const Grace = 3 * time.Second

// ErrInterrupted matches every *Interrupted.
var ErrInterrupted = errors.New("interrupted")

// Interrupted is the cause of a context cancelled by a signal.
type Interrupted struct {
	Signal os.Signal
}

func (e *Interrupted) Error() string {
	if e.Signal == os.Interrupt {
		return "interrupted by SIGINT (Ctrl-C)"
	}
	return "interrupted by " + Name(e.Signal)
}

// Is makes errors.Is(err, ErrInterrupted) hold.
func (e *Interrupted) Is(t error) bool { return t == ErrInterrupted }

// Code is the exit code a shell gives a process ended by the signal:
// 128 + its number.
func (e *Interrupted) Code() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// Name is how devctl's messages name a signal: SIGINT, SIGTERM, SIGHUP,
// SIGKILL, ... (the C name; on Unix for every signal, elsewhere for the
// ones Go defines).
func Name(s os.Signal) string {
	if n := sysName(s); n != "" {
		return n
	}
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.Signal(1):
		return "SIGHUP"
	case os.Kill:
		return "SIGKILL"
	}
	return s.String()
}

// Watch returns a context that the first of Signals cancels, with an
// *Interrupted as its cause, and stop, which removes the handler (call it
// when the command has returned).
func Watch(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ignored := map[os.Signal]bool{}
	for _, sig := range append([]os.Signal{}, Signals...) {
		ignored[sig] = signal.Ignored(sig) // Notify would hide it
	}
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	var mu sync.Mutex
	armed, stopped := false, false
	arm := func() {
		mu.Lock()
		defer mu.Unlock()
		if armed || stopped {
			return
		}
		armed = true
		signal.Notify(ch, Signals...)
		go func() {
			select {
			case sig := <-ch:
				signal.Stop(ch) // a second signal acts as without devctl
				// Cancel before killing: a command that sees its program
				// die must already find the context interrupted, or it
				// reports the cut-short run as finished (exit 0).
				cancel(&Interrupted{Signal: sig})
				procgroup.KillAll()
				select {
				case <-done:
				case <-time.After(Grace):
					procgroup.KillAll()
					reraise(sig, ignored)
				}
			case <-done:
			}
		}()
	}
	procgroup.SetArmHook(arm)
	for _, ign := range ignored {
		if ign {
			// Started with a signal ignored (a shell's background job):
			// its default action would not end devctl, so the policy
			// needs the handler from the start.
			arm()
			break
		}
	}
	return ctx, func() {
		procgroup.SetArmHook(nil)
		mu.Lock()
		stopped = true
		mu.Unlock()
		signal.Stop(ch)
		select {
		case <-done:
		default:
			close(done)
		}
		cancel(nil)
	}
}

// Err returns the *Interrupted that cancelled ctx, or nil: commands check
// it after work that a cancelled context cuts short, so that they return
// it instead of reporting what was cut short as found.
func Err(ctx context.Context) error {
	var in *Interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in
	}
	return nil
}

// From is Err as an *Interrupted, for the exit code.
func From(ctx context.Context) (*Interrupted, bool) {
	var in *Interrupted
	ok := errors.As(context.Cause(ctx), &in)
	return in, ok
}
