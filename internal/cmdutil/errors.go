package cmdutil

import (
	"errors"
	"fmt"
)

// Exit codes, documented in the README.
const (
	ExitOK      = 0
	ExitRuntime = 1 // something failed while running
	ExitUsage   = 2 // a bad flag, config value, input file or environment variable
	ExitFound   = 3 // doctor found a problem, bench saw a regression
)

// ErrUsage marks errors caused by user input. Wrap it, or use Usagef.
var ErrUsage = errors.New("usage error")

// Usagef returns a usage error (exit 2) with a message. Like fmt.Errorf,
// a %w verb wraps its operand, so callers can still ask errors.Is/As about
// the cause.
func Usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

type usageError struct{ err error }

func (e *usageError) Error() string   { return e.err.Error() }
func (e *usageError) Unwrap() error   { return errors.Unwrap(e.err) }
func (e *usageError) Is(t error) bool { return t == ErrUsage }

// FlagError is a flag-parsing error; the CLI prints the usage line with it.
type FlagError struct{ Err error }

func (e *FlagError) Error() string   { return e.Err.Error() }
func (e *FlagError) Unwrap() error   { return e.Err }
func (e *FlagError) Is(t error) bool { return t == ErrUsage }

// ExitError carries a specific exit code with nothing more to print (the
// command already reported its findings), or with a message.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Msg
}
