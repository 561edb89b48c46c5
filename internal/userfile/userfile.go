// Package userfile is the one way devctl opens a file a user named
// (--config, --model-config, --log, --from): whatever the path points at is
// checked to be something a file's contents can come from before it is
// read, and reads are bounded. Every such path goes through Open, so a
// further bound (on time, say) is added here once.
package userfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Sentinels callers branch on to phrase their own message.
var (
	// ErrDirectory: the path names a directory. Its text matches the
	// system's, so messages read as they did when the read itself failed.
	ErrDirectory = errors.New("is a directory")
	// ErrDevice: the path names a device or a socket, which can stream
	// forever (/dev/zero) or block.
	ErrDevice = errors.New("it is a device or socket")
)

// TooLargeError is returned by Read for a file over its limit.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string { return fmt.Sprintf("larger than %d bytes", e.Limit) }

// Open opens path for reading if it is a regular file or a pipe (so
// --config <(...) works). Errors do not repeat the path: callers name the
// flag and the value themselves.
func Open(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, bare(err)
	}
	if err := check(st); err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, bare(err)
	}
	return f, st, nil
}

// Read returns the contents of path, refusing more than limit bytes with a
// *TooLargeError.
func Read(path string, limit int64) ([]byte, error) {
	f, _, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, bare(err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return data, nil
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

// bare drops the operation and path from an *fs.PathError.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
