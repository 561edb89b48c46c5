// Package iostreams carries a command's input and output streams and what
// is known about them (terminal or pipe, colour allowed or not).
package iostreams

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the streams a command reads and writes.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	outTTY, errTTY bool
	noColor        bool
}

// System returns the process's streams.
func System() *IOStreams {
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	s.outTTY = isTerminal(os.Stdout)
	s.errTTY = isTerminal(os.Stderr)
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		s.noColor = true
	}
	return s
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Test returns streams backed by buffers, as in a pipe.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// DisableColor turns colour off (--no-color).
func (s *IOStreams) DisableColor() { s.noColor = true }

// ColorEnabled reports whether output may carry colour codes.
func (s *IOStreams) ColorEnabled() bool { return s.outTTY && !s.noColor }
