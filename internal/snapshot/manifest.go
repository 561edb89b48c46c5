package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/host"
)

// FormatVersion is the archive layout this devctl writes and reads. A newer
// archive is refused rather than half understood.
const FormatVersion = 1

// Member names inside the archive.
const (
	manifestMember = "manifest.json"
	nvmlMember     = "nvml.json"
	filesDir       = "files/"
	commandsDir    = "commands/"
)

// Manifest is manifest.json: every answer the host gave except file
// contents, program output and the NVML answer, which are members of their
// own. Maps are written with sorted keys, lists sorted, so two recordings
// of the same answers give the same bytes.
type Manifest struct {
	Format        int           `json:"format"`
	DevctlVersion string        `json:"devctl_version"`
	Created       time.Time     `json:"created"`
	OS            string        `json:"os"`
	Arch          string        `json:"arch"`
	Hostname      string        `json:"hostname"`
	Redacted      bool          `json:"redacted"`
	Identity      host.Identity `json:"identity"`

	// Env holds the variables drivers looked up and that were set;
	// EnvUnset those looked up and not set; EnvWithheld those that were set
	// but whose name looks secret, so only their presence is kept.
	Env         map[string]string `json:"env"`
	EnvUnset    []string          `json:"env_unset"`
	EnvWithheld []string          `json:"env_withheld"`

	// Files lists the paths whose contents are members files/<path>.
	Files []string `json:"files"`
	// Dirs are directory listings, entries sorted by name.
	Dirs map[string][]Entry `json:"dirs"`
	// Stats are Stat answers (links followed); Lstats are the Info answers
	// of directory entries (links not followed).
	Stats  map[string]Stat   `json:"stats"`
	Lstats map[string]Stat   `json:"lstats"`
	Links  map[string]string `json:"links"`
	// Missing are paths for which some operation answered "does not exist".
	Missing []string `json:"missing"`
	// Errors are file operations that failed for another reason
	// (permission denied, not a directory, ...).
	Errors []FileError `json:"errors"`

	Commands []Command         `json:"commands"`
	LookPath map[string]Answer `json:"lookpath"`
	Sysctl   map[string]Answer `json:"sysctl"`
	NVML     *NVMLRecord       `json:"nvml"`
}

// Entry is one directory entry.
type Entry struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Stat is a file's type, permission bits and size.
type Stat struct {
	Type string `json:"type"`
	Perm string `json:"perm"`
	Size int64  `json:"size"`
}

// FileError is a failed file operation other than "does not exist".
type FileError struct {
	Op   string `json:"op"` // read, readdir, stat, lstat, readlink
	Path string `json:"path"`
	Fail
}

// Fail is a recorded error: its kind decides what errors.Is answers on
// replay, its message what the error prints.
type Fail struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Command is one program run.
type Command struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	// Stdout is the member holding standard output ("" when empty).
	Stdout string `json:"stdout,omitempty"`
	Error  *Fail  `json:"error,omitempty"`
}

// Answer is a value or an error (LookPath, sysctl).
type Answer struct {
	Value string `json:"value,omitempty"`
	Error *Fail  `json:"error,omitempty"`
}

// NVMLRecord is the NVML answer: the member holding the raw JSON, or the
// error the library gave.
type NVMLRecord struct {
	Member string `json:"member,omitempty"`
	Error  *Fail  `json:"error,omitempty"`
}

// Error kinds.
const (
	kindNotExist   = "not_exist"
	kindPermission = "permission"
	kindNotFound   = "not_found"
	kindNotAllowed = "not_allowed"
	kindTimeout    = "timeout"
	kindCanceled   = "canceled"
	kindWithheld   = "withheld"
	kindInvalid    = "invalid"
	kindOther      = "other"
)

// failOf classifies an error for the manifest.
func failOf(err error) *Fail {
	if err == nil {
		return nil
	}
	kind := kindOther
	switch {
	case errors.Is(err, fs.ErrNotExist):
		kind = kindNotExist
	case errors.Is(err, fs.ErrPermission):
		kind = kindPermission
	case errors.Is(err, fs.ErrInvalid):
		kind = kindInvalid
	case errors.Is(err, host.ErrNotFound):
		kind = kindNotFound
	case errors.Is(err, host.ErrNotAllowed):
		kind = kindNotAllowed
	case errors.Is(err, context.DeadlineExceeded):
		kind = kindTimeout
	case errors.Is(err, context.Canceled):
		kind = kindCanceled
	}
	return &Fail{Kind: kind, Message: err.Error()}
}

var kindSentinels = map[string]error{
	kindNotExist:   fs.ErrNotExist,
	kindPermission: fs.ErrPermission,
	kindWithheld:   fs.ErrPermission,
	kindInvalid:    fs.ErrInvalid,
	kindNotFound:   host.ErrNotFound,
	kindNotAllowed: host.ErrNotAllowed,
	kindTimeout:    context.DeadlineExceeded,
	kindCanceled:   context.Canceled,
	kindOther:      nil,
}

// replayError prints the recorded message and answers errors.Is like the
// original error did for the kinds drivers branch on.
type replayError struct {
	msg  string
	kind error
}

func (e *replayError) Error() string { return e.msg }
func (e *replayError) Unwrap() error { return e.kind }

func (f *Fail) err() error {
	return &replayError{msg: f.Message, kind: kindSentinels[f.Kind]}
}

// Type names of file modes, readable in a bug report.
var typeNames = []struct {
	name string
	mode fs.FileMode
}{
	{"dir", fs.ModeDir},
	{"symlink", fs.ModeSymlink},
	{"chardevice", fs.ModeDevice | fs.ModeCharDevice},
	{"device", fs.ModeDevice},
	{"pipe", fs.ModeNamedPipe},
	{"socket", fs.ModeSocket},
	{"irregular", fs.ModeIrregular},
}

func typeName(m fs.FileMode) string {
	t := m.Type()
	for _, tn := range typeNames {
		if t == tn.mode {
			return tn.name
		}
	}
	if t == 0 {
		return "file"
	}
	return "other"
}

func typeMode(name string) (fs.FileMode, bool) {
	if name == "file" {
		return 0, true
	}
	if name == "other" {
		return fs.ModeIrregular, true
	}
	for _, tn := range typeNames {
		if tn.name == name {
			return tn.mode, true
		}
	}
	return 0, false
}

func statOf(fi fs.FileInfo) Stat {
	m := fi.Mode()
	perm := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		perm |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		perm |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		perm |= 0o1000
	}
	return Stat{Type: typeName(m), Perm: fmt.Sprintf("%04o", perm), Size: fi.Size()}
}

func (s Stat) mode() (fs.FileMode, error) {
	t, ok := typeMode(s.Type)
	if !ok {
		return 0, fmt.Errorf("unknown file type %q", s.Type)
	}
	p, err := strconv.ParseUint(s.Perm, 8, 32)
	if err != nil || p > 0o7777 {
		return 0, fmt.Errorf("bad permission bits %q: want octal such as 0644", s.Perm)
	}
	m := t | fs.FileMode(p&0o777)
	if p&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if p&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if p&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m, nil
}

// machinePath reports whether p is a path as drivers spell them: absolute,
// clean, slash-separated, without NUL.
func machinePath(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) == p && !strings.ContainsRune(p, 0)
}

// validate checks everything replay relies on, so that a hostile manifest
// fails here with one error instead of misbehaving later.
func (m *Manifest) validate(members map[string][]byte) error {
	if m.Format == 0 {
		return errors.New("manifest.json: no format version (is this a devctl snapshot?)")
	}
	if m.Format > FormatVersion {
		return fmt.Errorf("manifest.json: format %d is newer than this devctl reads (%d): upgrade devctl", m.Format, FormatVersion)
	}
	if m.Format < 0 {
		return fmt.Errorf("manifest.json: bad format version %d", m.Format)
	}
	if !word(m.OS) || !word(m.Arch) {
		return fmt.Errorf("manifest.json: bad os/arch %q/%q", m.OS, m.Arch)
	}
	checkPath := func(what, p string) error {
		if !machinePath(p) {
			return fmt.Errorf("manifest.json: %s path %q is not absolute and clean", what, p)
		}
		return nil
	}
	used := map[string]bool{manifestMember: true}
	for _, p := range m.Files {
		if err := checkPath("file", p); err != nil {
			return err
		}
		if p == "/" {
			return errors.New(`manifest.json: file path "/" is a directory`)
		}
		name := filesDir + p[1:]
		if _, ok := members[name]; !ok {
			return fmt.Errorf("manifest.json: file %q has no member %q", p, name)
		}
		used[name] = true
	}
	for p, es := range m.Dirs {
		if err := checkPath("directory", p); err != nil {
			return err
		}
		for _, e := range es {
			if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") {
				return fmt.Errorf("manifest.json: directory %q has a bad entry name %q", p, e.Name)
			}
			if _, ok := typeMode(e.Type); !ok {
				return fmt.Errorf("manifest.json: directory %q entry %q has unknown type %q", p, e.Name, e.Type)
			}
		}
	}
	for what, stats := range map[string]map[string]Stat{"stat": m.Stats, "lstat": m.Lstats} {
		for p, s := range stats {
			if err := checkPath(what, p); err != nil {
				return err
			}
			if _, err := s.mode(); err != nil {
				return fmt.Errorf("manifest.json: %s %q: %w", what, p, err)
			}
			if s.Size < 0 {
				return fmt.Errorf("manifest.json: %s %q: negative size", what, p)
			}
		}
	}
	for p, target := range m.Links {
		if err := checkPath("link", p); err != nil {
			return err
		}
		if target == "" || strings.ContainsRune(target, 0) {
			return fmt.Errorf("manifest.json: link %q has a bad target %q", p, target)
		}
	}
	for _, p := range m.Missing {
		if err := checkPath("missing", p); err != nil {
			return err
		}
	}
	for _, e := range m.Errors {
		if err := checkPath("error", e.Path); err != nil {
			return err
		}
		if !fileOps[e.Op] {
			return fmt.Errorf("manifest.json: error for %q has unknown op %q", e.Path, e.Op)
		}
		if err := e.Fail.check(); err != nil {
			return fmt.Errorf("manifest.json: error for %q: %w", e.Path, err)
		}
	}
	for i, c := range m.Commands {
		if c.Name == "" {
			return fmt.Errorf("manifest.json: command %d has no name", i)
		}
		if c.Stdout != "" {
			if !strings.HasPrefix(c.Stdout, commandsDir) {
				return fmt.Errorf("manifest.json: command %q stdout %q is not under %s", c.Name, c.Stdout, commandsDir)
			}
			if _, ok := members[c.Stdout]; !ok {
				return fmt.Errorf("manifest.json: command %q stdout member %q is missing", c.Name, c.Stdout)
			}
			used[c.Stdout] = true
		}
		if c.Error != nil {
			if err := c.Error.check(); err != nil {
				return fmt.Errorf("manifest.json: command %q: %w", c.Name, err)
			}
		}
	}
	for what, answers := range map[string]map[string]Answer{"lookpath": m.LookPath, "sysctl": m.Sysctl} {
		for k, a := range answers {
			if a.Error != nil {
				if err := a.Error.check(); err != nil {
					return fmt.Errorf("manifest.json: %s %q: %w", what, k, err)
				}
			}
		}
	}
	if m.NVML != nil {
		if m.NVML.Member != "" {
			if m.NVML.Member != nvmlMember {
				return fmt.Errorf("manifest.json: nvml member %q: want %q", m.NVML.Member, nvmlMember)
			}
			if _, ok := members[nvmlMember]; !ok {
				return fmt.Errorf("manifest.json: nvml member %q is missing", nvmlMember)
			}
			used[nvmlMember] = true
		} else if m.NVML.Error == nil {
			return errors.New("manifest.json: nvml has neither an answer nor an error")
		}
		if m.NVML.Error != nil {
			if err := m.NVML.Error.check(); err != nil {
				return fmt.Errorf("manifest.json: nvml: %w", err)
			}
		}
	}
	for name := range members {
		if !used[name] {
			return fmt.Errorf("member %q is not named by manifest.json", name)
		}
	}
	return nil
}

var fileOps = map[string]bool{"read": true, "readdir": true, "stat": true, "lstat": true, "readlink": true}

func (f *Fail) check() error {
	if _, ok := kindSentinels[f.Kind]; !ok {
		return fmt.Errorf("unknown error kind %q", f.Kind)
	}
	return nil
}

// word reports whether s is a short GOOS/GOARCH-like identifier.
func word(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
