package snapshot

import (
	"bytes"
	"path"
	"strings"

	"github.com/devctl/devctl/internal/secret"
)

// WithheldValue is what replay answers for a variable that was set but whose
// value was withheld: drivers that only check presence see the same thing.
const WithheldValue = secret.Withheld

// withheldFile reports whether a file's contents must never be recorded
// however a driver came to read it: a process environment holds the very
// secrets the env policy keeps out.
func withheldFile(p string) bool {
	return strings.HasPrefix(p, "/proc/") && path.Base(p) == "environ"
}

// isCmdline reports whether p is a process command line.
func isCmdline(p string) bool {
	return strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/cmdline")
}

// scrubFDLink withholds where a process's open file points unless it is a
// device node: drivers scan /proc/*/fd to find who holds an accelerator
// (/dev/accel0, /dev/vfio/0, /dev/nvidia0), and the other targets are the
// names of users' files. Sockets, pipes and anon inodes carry no names and
// are kept.
func scrubFDLink(p, target string) string {
	if !strings.HasPrefix(p, "/proc/") || path.Base(path.Dir(p)) != "fd" {
		return target
	}
	if strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "/dev/") {
		return WithheldValue
	}
	return target
}

// scrubFile masks secrets in a file's contents before they are recorded:
// a command line argument by argument, a text file by value shape (kernel
// command line words, mount options, tokens, URL userinfo). Binary files
// (any NUL byte) are kept as read: a replaced run would shift the offsets
// their parsers rely on.
func scrubFile(p string, b []byte) []byte {
	if isCmdline(p) {
		return secret.Cmdline(b)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return b
	}
	return secret.ScrubBytes(b)
}
