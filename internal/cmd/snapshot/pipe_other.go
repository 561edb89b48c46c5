//go:build !unix

package snapshot

import "os"

// openPipeForWriting opens a named pipe for writing.
func openPipeForWriting(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY, 0)
}
