// Package host is the one door through which devctl learns about a machine.
//
// Every driver reads files, environment variables, program output, sysctl
// values and NVML answers through a Host value. A Host can describe the
// running machine, a fixture tree (--sysroot) or a recorded snapshot
// (--from), and it can record everything that passes through it. Keeping
// the machine behind one value is what makes fixture tests, replay on
// another OS and secret-free snapshots possible.
package host

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// ErrNotAllowed is returned by a Runner for a program that is not on its
// allowlist. Drivers treat it like a missing program.
var ErrNotAllowed = errors.New("program not on the allowlist")

// ErrNotFound is returned for a program that is not installed, or for a
// sysctl key that does not exist.
var ErrNotFound = errors.New("not found")

// FS reads a machine's file system. Names are absolute slash paths as they
// appear on the machine ("/proc/cpuinfo"); an implementation maps them onto
// its root.
type FS interface {
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	// Stat follows symbolic links.
	Stat(name string) (fs.FileInfo, error)
	// Readlink returns a symbolic link's target as stored.
	Readlink(name string) (string, error)
}

// Env is the environment variables a driver may consult.
type Env interface {
	Lookup(name string) (string, bool)
}

// Runner runs an external program and returns its standard output.
type Runner interface {
	// Run runs name with args. It returns ErrNotFound when the program is not
	// installed and ErrNotAllowed when it is not on the allowlist.
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
	// LookPath reports where name would be found, or ErrNotFound.
	LookPath(name string) (string, error)
}

// Sysctl reads kernel state by name (macOS). On Linux every key is ErrNotFound.
type Sysctl interface {
	Get(name string) (string, error)
}

// Identity is who devctl runs as: device-node access depends on it.
type Identity struct {
	UID    int      `json:"uid"`
	Groups []string `json:"groups"`
}

// Host is the machine drivers describe.
type Host struct {
	// OS and Arch describe the machine, not the devctl binary: a replayed
	// darwin/arm64 snapshot has OS "darwin" on a linux/amd64 runner.
	OS       string
	Arch     string
	Hostname string
	FS       FS
	Env      Env
	Runner   Runner
	Sysctl   Sysctl
	// NVML answers NVIDIA management-library queries. It may be nil when the
	// host has no NVML at all (a replay of a snapshot without it).
	NVML     NVML
	Identity Identity
	Now      func() time.Time
}

// NVML produces the raw answers of the NVIDIA management library as one
// JSON-serialisable value, so that a snapshot can store them and a replay on
// a machine without NVML (or without cgo) can give them back.
type NVML interface {
	Query(ctx context.Context) ([]byte, error)
}

// Getenv returns the value of an environment variable or "".
func (h *Host) Getenv(name string) string {
	if h == nil || h.Env == nil {
		return ""
	}
	v, _ := h.Env.Lookup(name)
	return v
}

// LookupEnv reports whether a variable is set and its value.
func (h *Host) LookupEnv(name string) (string, bool) {
	if h == nil || h.Env == nil {
		return "", false
	}
	return h.Env.Lookup(name)
}

// ReadString reads a small sysfs or procfs file and trims white space.
func (h *Host) ReadString(name string) (string, error) {
	b, err := h.FS.ReadFile(name)
	if err != nil {
		return "", err
	}
	return trimSpace(string(b)), nil
}

// Exists reports whether name exists (following links).
func (h *Host) Exists(name string) bool {
	_, err := h.FS.Stat(name)
	return err == nil
}

func trimSpace(s string) string {
	start, end := 0, len(s)
	for start < end && isSpace(s[start]) {
		start++
	}
	for end > start && isSpace(s[end-1]) {
		end--
	}
	return s[start:end]
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == 0 }

// MapEnv is an Env backed by a map; tests and replays use it.
type MapEnv map[string]string

// Lookup implements Env.
func (m MapEnv) Lookup(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}
