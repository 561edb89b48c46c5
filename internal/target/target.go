// Package target is the one policy for every file devctl writes: the files
// a user names (snapshot -o, probe --nfd-file, run --report) and devctl's
// own (the history and other state files, its Hugging Face cache).
//
// What stands at the path decides what happens, the same way for every
// writer:
//
//   - nothing: the file is created whole (a temporary dot-file in the same
//     directory, synced, then renamed), so no reader sees half of it;
//   - a regular file: replaced the same way, if the writer's Policy allows
//     (snapshot -o needs --force); the old file is never truncated first;
//   - a FIFO, or a symbolic link to one (`-o /dev/stdout | ...`): written
//     into, never replaced; one with no reader is refused at once instead
//     of hanging;
//   - a symbolic link to anything else, a directory, a device or a socket:
//     refused, --force or not. A link is never replaced (the rename would
//     put a file where the link was) nor followed (it could point at any
//     file of the user's);
//   - a path whose directory does not exist: refused; devctl does not
//     create a user's directories.
//
// Refusals wrap ErrRefused (exit 2) and are one line naming the flag, the
// path and what is accepted. A path is checked when the command starts and
// again just before the rename: what stands there must still be what the
// check allowed.
//
// Append-only logs (internal/state) open their file with OpenAppend: a
// regular file or nothing, never through a symbolic link.
package target

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrRefused marks a path devctl will not write: a usage error (exit 2).
var ErrRefused = errors.New("refused output path")

// Kind is what stands at a path a writer may use.
type Kind int

// The kinds Check allows.
const (
	New     Kind = iota // nothing there: create it
	Regular             // a regular file: replace it atomically
	Pipe                // a FIFO (or a link to one): write into it
)

// Policy is one writer's part of the policy.
type Policy struct {
	// Flag names the path in messages: "-o", "--report", "--nfd-file".
	Flag string
	// Replace lets an existing regular file be replaced. Without it one
	// is refused with Hint ("pass --force to overwrite it").
	Replace bool
	Hint    string
	// Perm is the new file's mode (0644 when zero), whatever the old
	// file had: NFD's worker, for one, may run as another user.
	Perm fs.FileMode
}

// refusal is a refused path: one line, wrapping ErrRefused.
type refusal struct {
	flag, path, why string
	err             error
}

func (r *refusal) Error() string {
	if r.flag == "" {
		return fmt.Sprintf("%s: %s", r.path, r.why)
	}
	return fmt.Sprintf("invalid %s %q: %s", r.flag, r.path, r.why)
}

func (r *refusal) Is(t error) bool { return t == ErrRefused }
func (r *refusal) Unwrap() error   { return r.err }

func (p Policy) refuse(path, why string, err error) error {
	return &refusal{flag: p.Flag, path: path, why: why, err: err}
}

// Check decides what path is for this policy, or refuses it.
func (p Policy) Check(path string) (Kind, error) {
	if path == "" {
		return 0, p.refuse(path, "want a file path", nil)
	}
	lst, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return New, p.checkDir(path)
	case err != nil:
		if derr := p.checkDir(path); derr != nil {
			return 0, derr // a file where a directory should be
		}
		return 0, p.refuse(path, bare(err).Error(), err)
	}
	st := lst
	if lst.Mode()&fs.ModeSymlink != 0 {
		// A link is followed only to a pipe (`-o /dev/stdout | ...`).
		if st, err = os.Stat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
			return 0, p.refuse(path, "it is a symbolic link; devctl does not replace or follow links: name the file itself", nil)
		}
	}
	switch m := st.Mode(); {
	case m&fs.ModeNamedPipe != 0:
		return Pipe, nil
	case m.IsDir():
		return 0, p.refuse(path, "it is a directory; want a file path", nil)
	case !m.IsRegular():
		return 0, p.refuse(path, "it is a device or socket; want a regular file path (or a pipe, e.g. /dev/stdout | ...)", nil)
	case !p.Replace:
		why := "the file exists"
		if p.Hint != "" {
			why += "; " + p.Hint
		}
		return 0, p.refuse(path, why, nil)
	}
	return Regular, p.checkDir(path)
}

func (p Policy) checkDir(path string) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return p.refuse(path, fmt.Sprintf("directory %s: %v", dir, bare(err)), err)
	}
	if !st.IsDir() {
		return p.refuse(path, fmt.Sprintf("%s is not a directory", dir), nil)
	}
	return nil
}

// Write writes data to path under the policy: created or replaced whole,
// or written into a pipe.
func (p Policy) Write(path string, data []byte) error {
	f, err := p.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// File is a write in progress: Commit publishes it, Abort discards it.
type File struct {
	p    Policy
	path string
	kind Kind
	f    *os.File
	done bool
}

// Create checks path and starts a write: into a temporary file beside it,
// or straight into a pipe.
func (p Policy) Create(path string) (*File, error) {
	kind, err := p.Check(path)
	if err != nil {
		return nil, err
	}
	if kind == Pipe {
		fh, err := openPipe(path)
		if err != nil {
			return nil, p.refuse(path, fmt.Sprintf("a pipe with no reader (%v)", bare(err)), err)
		}
		return &File{p: p, path: path, kind: kind, f: fh}, nil
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".devctl-*")
	if err != nil {
		return nil, p.refuse(path, fmt.Sprintf("cannot create a file in %s: %v", dir, bare(err)), err)
	}
	return &File{p: p, path: path, kind: kind, f: tmp}, nil
}

// Write implements io.Writer.
func (f *File) Write(b []byte) (int, error) { return f.f.Write(b) }

var _ io.Writer = (*File)(nil)

// Commit publishes the file: a pipe is closed; a temporary file is synced,
// given the policy's mode and renamed over the path, once what stands
// there is checked again to still be what Create allowed.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if f.kind == Pipe {
		if err := f.f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		return nil
	}
	tmp := f.f.Name()
	fail := func(err error) error {
		f.f.Close()
		os.Remove(tmp)
		return err
	}
	perm := f.p.Perm
	if perm == 0 {
		perm = 0o644
	}
	if err := f.f.Sync(); err != nil {
		return fail(fmt.Errorf("writing %s: %w", f.path, err))
	}
	if err := f.f.Chmod(perm); err != nil {
		return fail(fmt.Errorf("writing %s: %w", f.path, err))
	}
	if err := f.f.Close(); err != nil {
		return fail(fmt.Errorf("writing %s: %w", f.path, err))
	}
	st, err := os.Lstat(f.path)
	switch {
	case err == nil && (f.kind != Regular || !st.Mode().IsRegular()):
		os.Remove(tmp)
		return f.p.refuse(f.path, "it changed while devctl was writing; nothing was replaced", nil)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if err := os.Rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort discards an unpublished write.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	if f.kind != Pipe {
		os.Remove(f.f.Name())
	}
}

// OpenAppend opens an append-only log for reading and appending: a
// regular file, created (mode 0600) when missing, never a symbolic link,
// FIFO, device or socket. flag adds to O_RDWR|O_APPEND (os.O_CREATE).
func OpenAppend(path string, flag int) (*os.File, error) {
	return OpenRegular(path, os.O_RDWR|os.O_APPEND|flag)
}

// OpenRegular opens path with flag, refusing a symbolic link (it is not
// followed), and anything but a regular file once opened. A FIFO is
// opened without waiting for a writer, then refused.
func OpenRegular(path string, flag int) (*os.File, error) {
	linked := func() error {
		return &refusal{path: path, why: "it is a symbolic link; devctl does not follow links for its own files"}
	}
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, linked()
	}
	// O_NOFOLLOW closes the window between that look and the open.
	f, err := os.OpenFile(path, flag|oNoFollow|oNonblock, 0o600)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, linked()
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &refusal{path: path, why: "not a regular file", err: ErrNotRegular}
	}
	return f, nil
}

// ErrNotRegular: a devctl file that is a FIFO, device or directory.
var ErrNotRegular = errors.New("not a regular file")

// bare drops the operation and path from an *fs.PathError: the message
// names the path itself.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
