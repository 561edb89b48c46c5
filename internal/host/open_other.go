//go:build !unix

package host

import (
	"io"
	"io/fs"
	"os"
)

const (
	oNonblock = 0
	oNofollow = 0
)

// openRegular opens p for reading and refuses anything but a regular file
// or a directory. name is what errors about the file's type say.
func openRegular(p string, flag int, name string) (io.ReadCloser, error) {
	f, err := os.OpenFile(p, flag, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	return f, nil
}
