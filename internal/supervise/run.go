package supervise

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultGrace is how long a child may take to exit after a forwarded
// termination signal before the whole group is killed (systemd's
// TimeoutStopSec plays the same part).
const DefaultGrace = 10 * time.Second

// drainDelay bounds the wait for the output pipes after the group is gone:
// a process that left the group (setsid) may still hold them open.
const drainDelay = 2 * time.Second

// copyBuf is the read size of the passthrough, the size of the pipes
// (pipeSize): large reads keep the number of system calls and wake-ups per
// gigabyte low.
const copyBuf = 1 << 20

// Spec describes one run of a command.
type Spec struct {
	// Path is the program (looked up in PATH by exec rules) and Args its
	// arguments, without the program name.
	Path string
	Args []string
	// Env is the child's whole environment (KEY=VALUE).
	Env []string
	Dir string

	// Stdin is the child's stdin: a file (the terminal) is passed as it
	// is, nil is /dev/null, another reader is copied in through a pipe.
	// When it is devctl's controlling terminal and devctl is in its
	// foreground, the child's process group gets the foreground (Linux).
	Stdin          io.Reader
	Stdout, Stderr io.Writer

	// Signals are forwarded to the child's process group (notify
	// ForwardedSignals). The first interrupt or termination signal starts
	// the grace period; a second interrupt (os.Interrupt) kills the job
	// at once.
	Signals <-chan os.Signal
	// Grace is the time the group gets to exit after a forwarded signal
	// before it is killed (0: DefaultGrace).
	Grace time.Duration
	// TailBytes bounds the output kept for diagnosis (0: DefaultTailBytes,
	// negative: none).
	TailBytes int
	// Subreaper makes the calling process the reaper of the child's
	// orphans (Linux; a process-wide setting, meant for a supervisor such
	// as devctl run): they are reaped as they die, so no zombie piles up
	// even in a container whose init does not reap, and at the end every
	// descendant of the job is ended, a setsid daemon included. While Run
	// runs with it, Run reaps every dead child of the process that was
	// born after the job's child, unless Cgroup gave the job a cgroup (then
	// only those in it): do not wait for other children of your own
	// meanwhile without a cgroup.
	Subreaper bool
	// Cgroup runs the job in a cgroup v2 group of its own, made under
	// devctl's when devctl may write there (Linux; a delegated or
	// writable group): the end of the run then ends everything in it, and
	// the subreaper tells the job's orphans from other children exactly.
	// Without one Run falls back to the subreaper's view.
	Cgroup bool
}

// Result is how one run ended.
type Result struct {
	// ExitCode is the child's exit status, or 128+N when signal N ended it.
	ExitCode int `json:"exit_code"`
	// Signal names the signal that ended the child ("" when it exited).
	Signal   string        `json:"signal,omitempty"`
	Duration time.Duration `json:"-"`
	// Interrupted is true when a signal was forwarded to the child, or
	// when the child held the terminal and Ctrl-C, Ctrl-\ or a hang-up
	// ended it (those reach the job, not devctl).
	Interrupted bool `json:"interrupted,omitempty"`
	// Killed is true when devctl killed the group: a second interrupt, or
	// a child that outlived the grace period.
	Killed bool `json:"killed,omitempty"`
	// Tail is the end of stdout and stderr as they interleaved, at most
	// TailBytes; TailTruncated says older output was dropped.
	Tail          []byte `json:"-"`
	TailTruncated bool   `json:"-"`
	// StderrOpenLine is true when the child's stderr did not end with a
	// newline: a message printed after it should start on a new line.
	StderrOpenLine bool `json:"-"`
}

// Run starts the command, passes its output through, forwards signals and
// waits for the child and what it left running to finish. A context
// cancellation is treated like a forwarded termination signal; a context
// already done starts nothing (ErrCanceled). A program that cannot be
// started is a *StartError.
func Run(ctx context.Context, s Spec) (Result, error) {
	if s.Path == "" {
		return Result{}, fmt.Errorf("%w: no program given", ErrStart)
	}
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx))
	}
	path := s.Path
	// A relative path with a slash is the child's to resolve when it
	// starts in another directory.
	if s.Dir == "" || filepath.IsAbs(path) || !strings.ContainsRune(path, os.PathSeparator) {
		var err error
		if path, err = LookPath(s.Path); err != nil {
			return Result{}, err
		}
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	max := s.TailBytes
	if max == 0 {
		max = DefaultTailBytes
	}
	tl := newTail(max, copyBuf)

	var pipes []*os.File
	var wg sync.WaitGroup
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	for _, dst := range []io.Writer{s.Stdout, s.Stderr} {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(pipes)
			return Result{}, fmt.Errorf("output pipe: %w", err)
		}
		growPipe(w)
		growOutput(dst)
		pipes = append(pipes, r, w)
	}
	stdin, closeChildStdin, stdinDone, err := childStdin(s.Stdin)
	if err != nil {
		closeAll(pipes)
		return Result{}, fmt.Errorf("stdin: %w", err)
	}
	defer stdinDone()

	start := time.Now()
	// The child leads a new process group, so a signal reaches every
	// process it started (dumb-init, systemd's control-group kill mode).
	j, err := startJob(s, path, []*os.File{stdin, pipes[1], pipes[3]})
	closeChildStdin()
	if err != nil {
		closeAll(pipes)
		return Result{}, err
	}
	defer j.close()
	// The child holds the write ends now; closing ours lets EOF arrive
	// when the last process of the group closes them.
	pipes[1].Close()
	pipes[3].Close()
	readers := []*os.File{pipes[0], pipes[2]}
	var lastErr byte = '\n'
	for i, w := range []io.Writer{s.Stdout, s.Stderr} {
		wg.Add(1)
		go func(r *os.File, w io.Writer, last *byte, toTerminal bool) {
			defer wg.Done()
			if toTerminal {
				defer blockTTOU()()
			}
			if !teePump(r, w, tl, last) {
				pump(r, w, tl, last)
			}
		}(readers[i], w, []*byte{nil, &lastErr}[i], j.handedTo(w))
	}

	var res Result
	var graceC <-chan time.Time
	var graceT *time.Timer
	startGrace := func() {
		if graceT == nil {
			graceT = time.NewTimer(grace)
			graceC = graceT.C
		}
	}
	interrupts := 0
	ctxDone := ctx.Done()
	for !j.poll() {
		select {
		case <-j.wake():
		case sig := <-s.Signals:
			res.Interrupted = true
			if sig == os.Interrupt {
				interrupts++
			}
			if interrupts >= 2 {
				res.Killed = true
				j.kill()
				continue
			}
			j.signal(sig)
			if isTermination(sig) {
				startGrace()
			}
		case <-ctxDone:
			ctxDone = nil
			res.Interrupted = true
			j.terminate()
			startGrace()
		case <-graceC:
			res.Killed = true
			j.kill()
		}
	}
	if graceT != nil {
		graceT.Stop()
	}
	if j.terminalInterrupt() {
		res.Interrupted = true
	}
	j.releaseTerminal()
	// The child is reaped. Anything of the job still running (workers,
	// data loaders, a server it started) is ended the same way: it would
	// hold the device's memory into the next attempt.
	if j.leftovers() {
		j.endLeftovers(false)
		deadline := time.Now().Add(grace)
		for j.leftovers() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		// SIGKILL cannot be refused: repeat it (a process forking as it
		// is killed) and wait (briefly) to reap what it ended.
		for end := time.Now().Add(2 * time.Second); j.leftovers() && time.Now().Before(end); {
			j.endLeftovers(true)
			time.Sleep(5 * time.Millisecond)
		}
	}
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainDelay):
		// Closing interrupts a copying reader; one blocked in tee(2) ends
		// only when the last writer goes, so it is not waited for.
		closeAll(readers)
		select {
		case <-drained:
		case <-time.After(100 * time.Millisecond):
		}
	}
	closeAll(readers)
	res.Duration = time.Since(start)
	res.Tail, res.TailTruncated = tl.Bytes()
	res.StderrOpenLine = lastErr != '\n'
	var werr error
	res.ExitCode, res.Signal, werr = j.status()
	if res.ExitCode < 0 {
		return res, fmt.Errorf("waiting for %s: %w", s.Path, werr)
	}
	return res, nil
}

// pump copies r to w as bytes arrive and hands each read to the tail
// (which keeps large reads without copying them), noting the last byte in
// last when it is not nil. When w fails (the
// reader of devctl's stdout went away), it stops reading so the child
// gets EPIPE or SIGPIPE as if it wrote to the closed pipe itself.
func pump(r *os.File, w io.Writer, tl *tail, last *byte) {
	buf := tl.buffer()
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if last != nil {
				*last = buf[n-1]
			}
			if w != nil {
				if _, werr := w.Write(buf[:n]); werr != nil {
					r.Close()
					return
				}
			}
			buf = tl.keep(buf[:n])
		}
		if err != nil {
			return
		}
	}
}
