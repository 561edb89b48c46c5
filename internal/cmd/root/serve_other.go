//go:build !unix

package root

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/devctl/devctl/internal/cmdutil"
)

var exeSuffix = map[bool]string{true: ".exe"}[runtime.GOOS == "windows"]

// execServe runs devctl-serve as a child with this process's streams and
// exits with its status.
func execServe(f *cmdutil.Factory, path string, args []string) error {
	c := exec.Command(path, args...)
	c.Stdin, c.Stdout, c.Stderr, c.Env = f.IO.In, f.IO.Out, f.IO.ErrOut, os.Environ()
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &cmdutil.ExitError{Code: ee.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("running %s: %w", path, err)
	}
	return nil
}
