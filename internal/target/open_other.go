//go:build !unix

package target

import "os"

// Windows has neither O_NOFOLLOW nor FIFOs: OpenRegular refuses a link by
// its Lstat instead (see OpenRegular), and there is no pipe to open.
const (
	oNoFollow = 0
	oNonblock = 0
)

func openPipe(path string) (*os.File, error) { return os.OpenFile(path, os.O_WRONLY, 0) }

func syncDir(string) {}
