//go:build unix

package root

import (
	"fmt"
	"os"
	"syscall"

	"github.com/devctl/devctl/internal/cmdutil"
)

const exeSuffix = ""

// execServe replaces this process with devctl-serve, so signals (SIGTERM
// from a service manager) reach the server itself.
func execServe(_ *cmdutil.Factory, path string, args []string) error {
	argv := append([]string{path}, args...)
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return fmt.Errorf("running %s: %w", path, err)
	}
	return nil
}
