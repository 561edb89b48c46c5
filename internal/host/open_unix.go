//go:build unix

package host

import (
	"io"
	"io/fs"
	"syscall"
)

const (
	oNonblock = syscall.O_NONBLOCK
	oNofollow = syscall.O_NOFOLLOW
)

// rawFile reads a file through its descriptor alone. An os.File would
// register every sysfs and procfs file with the runtime's poller (the
// kernel lets them be polled: two epoll_ctl calls each) and set a
// finalizer; a probe opens about sixty such files, and that bookkeeping
// was a tenth of its drivers' time.
type rawFile struct {
	fd   int
	path string
}

// openRegular opens p for reading with flag (O_NONBLOCK, so that a FIFO
// cannot block the open) and refuses anything but a regular file or a
// directory, checked on the opened descriptor. name is what errors about
// the file's type say.
func openRegular(p string, flag int, name string) (io.ReadCloser, error) {
	var fd int
	var err error
	for {
		if fd, err = syscall.Open(p, flag|syscall.O_CLOEXEC, 0); err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFREG && t != syscall.S_IFDIR {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	return &rawFile{fd: fd, path: p}, nil
}

func (f *rawFile) Read(b []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }
