// Package userfile is the one way devctl opens a file a user named
// (--config, --model-config, --log, --from, the default config path):
// whatever the path points at is checked to be something a file's contents
// can come from before it is read, and reads are bounded in size and time.
//
//   - A directory, device or socket is refused before it is opened.
//   - The open never waits: a FIFO with no writer opens at once (and reads
//     as empty) instead of blocking every command.
//   - Reads of anything that can wait (a FIFO whose writer never writes,
//     /proc/kmsg, which stat calls a regular file) end at a deadline:
//     DefaultTimeout, or the caller's (doctor passes --timeout).
//   - Read bounds the size; Limit bounds a stream (standard input).
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// DefaultTimeout bounds how long Open's reads may wait for data.
const DefaultTimeout = 10 * time.Second

// ErrTimeout says a read waited longer than its deadline: a pipe whose
// writer never wrote, or a file that blocks (/proc/kmsg).
var ErrTimeout = errors.New("no data before the deadline (a pipe or device file that never ends?)")

// Sentinels callers branch on to phrase their own message.
var (
	// ErrDirectory: the path names a directory. Its text matches the
	// system's, so messages read as they did when the read itself failed.
	ErrDirectory = errors.New("is a directory")
	// ErrDevice: the path names a device or a socket, which can stream
	// forever (/dev/zero) or block.
	ErrDevice = errors.New("it is a device or socket")
)

// TooLargeError is returned by Read for a file over its limit. Not, when
// set, says what such a file cannot be ("a config.json").
type TooLargeError struct {
	Limit int64
	Not   string
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("larger than %d bytes", e.Limit)
	if e.Not != "" {
		msg += ": not " + e.Not
	}
	return msg
}

// Open opens path for reading if it is a regular file or a pipe (so
// --config <(...) works). Errors do not repeat the path: callers name the
// flag and the value themselves.
func Open(path string) (*os.File, fs.FileInfo, error) {
	return OpenWithin(path, DefaultTimeout)
}

// OpenWithin is Open with reads that wait at most timeout for data (zero
// means DefaultTimeout). Reads past the deadline fail with ErrTimeout.
func OpenWithin(path string, timeout time.Duration) (*os.File, fs.FileInfo, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, bare(err)
	}
	if err := check(st); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, bare(err)
	}
	// What was opened, not what was named a moment ago, is what counts.
	if st, err = f.Stat(); err == nil {
		err = check(st)
	}
	if err != nil {
		f.Close()
		return nil, nil, bare(err)
	}
	// Only files that can wait (pipes, and the few /proc files that poll)
	// take a deadline; regular files answer ErrNoDeadline and never wait.
	_ = f.SetReadDeadline(time.Now().Add(timeout))
	return f, st, nil
}

// Read returns the contents of path, refusing more than limit bytes with a
// *TooLargeError.
func Read(path string, limit int64) ([]byte, error) { return ReadAs(path, limit, "") }

// ReadAs is Read for a file of a known kind: a file over the limit is
// refused as not being one ("larger than 4194304 bytes: not a config.json").
// A regular file whose size is over the limit is refused from its size,
// before a byte is read: a 178 MB index must not cost 178 MB and two
// seconds to be told it is too large. Its buffer is sized from the file,
// so a file within the limit is read in one allocation.
func ReadAs(path string, limit int64, kind string) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Mode().IsRegular() && st.Size() > limit {
		return nil, &TooLargeError{Limit: limit, Not: kind}
	}
	var data []byte
	if st.Mode().IsRegular() && st.Size() > 0 {
		data = make([]byte, 0, st.Size()+512) // room for the read that sees EOF
	}
	data, err = readAll(data, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, Bare(err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit, Not: kind}
	}
	return data, nil
}

// readAll is io.ReadAll into b's spare capacity, growing it only when the
// reader holds more than that.
func readAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

func check(st fs.FileInfo) error {
	switch m := st.Mode(); {
	case m.IsDir():
		return ErrDirectory
	case m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket) != 0:
		return ErrDevice
	}
	return nil
}

// Limit returns a reader of r that fails with a *TooLargeError once more
// than limit bytes have come: a stream (standard input, a pipe) that never
// ends (/dev/zero) must not keep devctl reading for ever.
func Limit(r io.Reader, limit int64) io.Reader { return &limited{r: r, left: limit, limit: limit} }

type limited struct {
	r           io.Reader
	left, limit int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{Limit: l.limit}
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n, &TooLargeError{Limit: l.limit}
	}
	return n, err
}

// Bare drops the operation and path from an *fs.PathError, and names a
// missed deadline as ErrTimeout.
func Bare(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrTimeout
	}
	return bare(err)
}

// bare drops the operation and path from an *fs.PathError.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
