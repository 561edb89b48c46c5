package supervise

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"sync"
)

// ErrStart wraps a failure to start the program (not found, not
// executable): the command never ran.
var ErrStart = errors.New("cannot start")

// ErrCanceled is returned, with the context's cause, when the context was
// done before the program was started: nothing was started. (A shell
// reports an interrupt before the command ran as 130.)
var ErrCanceled = errors.New("cancelled before the command started")

// StartError is a program that could not be started, with the exit code a
// shell gives that failure: 127 when there is no such program (not in
// PATH, no file at the path given, or a script whose interpreter is
// missing), 126 when the file exists but cannot be executed (no execute
// permission, a directory, an unknown format). bash decides the same way
// from execve's error: ENOENT is 127, anything else 126.
type StartError struct {
	Path string
	Code int
	Err  error
}

func (e *StartError) Error() string { return fmt.Sprintf("%v %s: %v", ErrStart, e.Path, e.Err) }

// Unwrap lets errors.Is find ErrStart and the underlying error.
func (e *StartError) Unwrap() []error { return []error{ErrStart, e.Err} }

// LookPath finds the program as Run will (exec.LookPath: PATH when the
// name has no slash), so a caller can refuse a missing program before any
// work. The error is a *StartError with the shell's exit code.
func LookPath(file string) (string, error) {
	p, err := exec.LookPath(file)
	if err != nil {
		return "", startError(file, err)
	}
	return p, nil
}

// startError classifies a failure of exec.LookPath or of starting the
// process.
func startError(path string, err error) *StartError {
	code := 126
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		code = 127
	}
	// The innermost error reads best: "executable file not found in
	// $PATH", "no such file or directory", "permission denied".
	inner := err
	var ee *exec.Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &ee):
		inner = ee.Err
		if errors.As(inner, &pe) {
			inner = pe.Err
		}
	case errors.As(err, &pe):
		inner = pe.Err
	}
	return &StartError{Path: path, Code: code, Err: inner}
}

// childStdin returns the file the child reads as its stdin: r itself when
// it is a file (a terminal stays the child's terminal), /dev/null for nil,
// and otherwise a pipe fed from r. closeChild is called once the child has
// started; done when Run ends.
func childStdin(r io.Reader) (f *os.File, closeChild, done func(), err error) {
	nop := func() {}
	switch r := r.(type) {
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, nil, err
		}
		return f, func() { f.Close() }, nop, nil
	case *os.File:
		if r != nil {
			return r, nop, nop, nil
		}
		f, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, nil, err
		}
		return f, func() { f.Close() }, nop, nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	var once sync.Once
	closeW := func() { once.Do(func() { pw.Close() }) }
	go func() {
		// Ends when r does, or when the child is gone (EPIPE) or Run ended.
		_, _ = io.Copy(pw, r)
		closeW()
	}()
	return pr, func() { pr.Close() }, closeW, nil
}
