//go:build !unix

package interrupt

import (
	"os"
	"syscall"
)

// Signals are what Watch handles: Ctrl-C and the console's close events.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// reraise has no signal to send itself on Windows: the second Ctrl-C,
// whose handler was removed, ends devctl.
func reraise(os.Signal, map[os.Signal]bool) {}
