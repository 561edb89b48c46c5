package snapshot

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/units"
	"github.com/devctl/devctl/internal/userfile"
)

// Limits a replay enforces on an archive, whoever made it.
const (
	MaxMemberSize = 16 << 20  // one member, uncompressed
	MaxTotalSize  = 256 << 20 // the whole uncompressed tar stream
	MaxMembers    = 100000
)

// readLimits are the limits Read applies; tests lower them to build
// hostile archives cheaply.
var readLimits = struct {
	member, total int64
	members       int
}{MaxMemberSize, MaxTotalSize, MaxMembers}

// Snapshot is a read and validated archive.
type Snapshot struct {
	Manifest Manifest
	members  map[string][]byte
}

// Open replays the snapshot file at path as a Host. Errors name what was
// wrong with the file, without repeating its name (the caller adds it).
func Open(path string) (*host.Host, error) {
	f, _, err := userfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Read(f)
	if err != nil {
		return nil, err
	}
	return s.Host(), nil
}

// Read reads and validates a snapshot archive. It treats its input as
// hostile: every member must be a regular file (or a directory, ignored)
// with a clean relative name, within the size limits, and named by a
// well-formed manifest.
func Read(r io.Reader) (*Snapshot, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a gzip-compressed tar (want a .tar.gz written by 'devctl snapshot'): %v", err)
	}
	zr.Multistream(false)
	lim := readLimits
	lr := &limitedReader{r: zr, n: lim.total}
	tr := tar.NewReader(lr)
	members := map[string][]byte{}
	count := 0
	readErr := func(err error) error {
		if lr.over {
			return fmt.Errorf("uncompressed size over the %s limit", mib(lim.total))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errors.New("archive is truncated")
		}
		if errors.Is(err, gzip.ErrChecksum) {
			return errors.New("archive is damaged: its gzip checksum does not match")
		}
		return fmt.Errorf("reading archive: %v", err)
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			// The tar stream ends before the gzip member does: read the rest
			// (end-of-archive padding) so the gzip reader reaches its
			// trailer and checks the CRC-32 and size there. An archive cut
			// anywhere, trailer included, is refused.
			if _, err := io.Copy(io.Discard, lr); err != nil {
				return nil, readErr(err)
			}
			break
		}
		if err != nil {
			return nil, readErr(err)
		}
		count++
		if count > lim.members {
			return nil, fmt.Errorf("more than %d members", lim.members)
		}
		name := hdr.Name
		switch hdr.Typeflag {
		case tar.TypeReg, tar.TypeRegA:
		case tar.TypeDir:
			if err := checkMemberName(strings.TrimSuffix(name, "/")); err != nil {
				return nil, err
			}
			continue
		case tar.TypeSymlink, tar.TypeLink:
			return nil, fmt.Errorf("member %q is a link (to %q): links are not allowed", name, hdr.Linkname)
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			return nil, fmt.Errorf("member %q is a device or fifo: only regular files are allowed", name)
		default:
			return nil, fmt.Errorf("member %q has unsupported type %q: only regular files are allowed", name, string(hdr.Typeflag))
		}
		if err := checkMemberName(name); err != nil {
			return nil, err
		}
		if hdr.Size > lim.member {
			return nil, fmt.Errorf("member %q is %d bytes, over the %s limit", name, hdr.Size, mib(lim.member))
		}
		if _, dup := members[name]; dup {
			return nil, fmt.Errorf("member %q appears twice", name)
		}
		b, err := io.ReadAll(io.LimitReader(tr, lim.member+1))
		if err != nil {
			return nil, readErr(err)
		}
		if int64(len(b)) > lim.member {
			return nil, fmt.Errorf("member %q is over the %s limit", name, mib(lim.member))
		}
		members[name] = b
	}
	raw, ok := members[manifestMember]
	if !ok {
		return nil, errors.New("no manifest.json (is this a devctl snapshot?)")
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("manifest.json is malformed: %v", err)
	}
	if err := m.mapNames(decodeName); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	if err := m.validate(members); err != nil {
		return nil, err
	}
	delete(members, manifestMember)
	return &Snapshot{Manifest: m, members: members}, nil
}

// checkMemberName refuses names that are absolute, climb out with "..", or
// are not in the one spelling the writer uses. Replay never writes members
// to disk, but a clean name is the first sign of an honest archive.
func checkMemberName(name string) error {
	switch {
	case name == "":
		return errors.New("member with an empty name")
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("member %q: NUL in name", name)
	case strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || (len(name) > 1 && name[1] == ':'):
		return fmt.Errorf("member %q: absolute paths are not allowed", name)
	}
	for _, el := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if el == ".." {
			return fmt.Errorf("member %q: \"..\" is not allowed", name)
		}
	}
	if path.Clean(name) != name {
		return fmt.Errorf("member %q: not a clean path", name)
	}
	if name != manifestMember && name != nvmlMember && name+"/" != filesDir && name+"/" != commandsDir &&
		!strings.HasPrefix(name, filesDir) && !strings.HasPrefix(name, commandsDir) {
		return fmt.Errorf("member %q: unexpected name (want manifest.json, nvml.json, files/... or commands/...)", name)
	}
	return nil
}

// limitedReader fails once more than n bytes were read: a small gzip must
// not expand into gigabytes.
type limitedReader struct {
	r    io.Reader
	n    int64
	over bool
}

func mib(n int64) string {
	if b := units.Bytes(n); b%units.MiB == 0 {
		return b.Format(units.MiB, 0)
	}
	return fmt.Sprintf("%d bytes", n)
}

var errTooLarge = errors.New("uncompressed size over the limit")

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		l.over = true
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Host is the recorded machine. Its file system, environment, programs,
// sysctl and NVML answer from the archive: anything not recorded does not
// exist (fs.ErrNotExist, host.ErrNotFound). Its clock stands at the time
// the snapshot was taken. Each call builds a new Host; use one per
// invocation, since drivers keep what they learned per Host
// (nvidia.Answers, host.Once).
func (s *Snapshot) Host() *host.Host {
	m := &s.Manifest
	created := m.Created
	h := &host.Host{
		OS:       m.OS,
		Arch:     m.Arch,
		Hostname: m.Hostname,
		Identity: host.Identity{UID: m.Identity.UID, Groups: append([]string(nil), m.Identity.Groups...)},
		Now:      func() time.Time { return created },
	}
	rfs := &replayFS{m: m, files: map[string][]byte{}, errs: map[string]*Fail{}}
	for _, p := range m.Files {
		rfs.files[p] = s.members[filesDir+p[1:]]
	}
	for i := range m.Errors {
		e := &m.Errors[i]
		rfs.errs[e.Op+" "+e.Path] = &e.Fail
	}
	h.FS = rfs
	env := &replayEnv{values: m.Env, withheld: map[string]bool{}}
	for _, n := range m.EnvWithheld {
		env.withheld[n] = true
	}
	h.Env = env
	run := &replayRunner{cmds: map[string]*replayCmd{}, lookpath: m.LookPath}
	for _, c := range m.Commands {
		key := commandKey(c.Name, c.Args)
		if _, ok := run.cmds[key]; ok {
			continue
		}
		rc := &replayCmd{}
		if c.Stdout != "" {
			rc.stdout = s.members[c.Stdout]
		}
		if c.Error != nil {
			rc.err = c.Error.err()
		}
		run.cmds[key] = rc
	}
	h.Runner = run
	h.Sysctl = replaySysctl(m.Sysctl)
	if m.NVML != nil {
		n := &replayNVML{}
		if m.NVML.Member != "" {
			n.data = s.members[m.NVML.Member]
		}
		if m.NVML.Error != nil {
			n.err = m.NVML.Error.err()
		}
		h.NVML = n
	}
	return h
}

type replayFS struct {
	m     *Manifest
	files map[string][]byte
	errs  map[string]*Fail
}

func (f *replayFS) lookup(op, name string) (string, error) {
	if !strings.HasPrefix(name, "/") {
		return "", &fs.PathError{Op: fsOps[op], Path: name, Err: fs.ErrInvalid}
	}
	p := path.Clean(name)
	return p, nil
}

func (f *replayFS) fail(op, p, name string) error {
	if e, ok := f.errs[op+" "+p]; ok {
		return &fs.PathError{Op: fsOps[op], Path: name, Err: e.err()}
	}
	return notExist(op, name)
}

func (f *replayFS) ReadFile(name string) ([]byte, error) {
	p, err := f.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if b, ok := f.files[p]; ok {
		return bytes.Clone(b), nil
	}
	return nil, f.fail("read", p, name)
}

func (f *replayFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := f.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	es, ok := f.m.Dirs[p]
	if !ok {
		return nil, f.fail("readdir", p, name)
	}
	out := make([]fs.DirEntry, len(es))
	for i, e := range es {
		t, _ := typeMode(e.Type)
		out[i] = &replayEntry{f: f, p: path.Join(p, e.Name), name: path.Join(name, e.Name), base: e.Name, typ: t}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (f *replayFS) Stat(name string) (fs.FileInfo, error) {
	p, err := f.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	st, ok := f.m.Stats[p]
	if !ok {
		return nil, f.fail("stat", p, name)
	}
	return newFileInfo(path.Base(p), st), nil
}

func (f *replayFS) Readlink(name string) (string, error) {
	p, err := f.lookup("readlink", name)
	if err != nil {
		return "", err
	}
	if t, ok := f.m.Links[p]; ok {
		return t, nil
	}
	return "", f.fail("readlink", p, name)
}

type replayEntry struct {
	f       *replayFS
	p, name string
	base    string
	typ     fs.FileMode
}

func (e *replayEntry) Name() string      { return e.base }
func (e *replayEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *replayEntry) Type() fs.FileMode { return e.typ }

// Info answers what was recorded, or (when the driver never asked while
// recording) the entry's type with no size.
func (e *replayEntry) Info() (fs.FileInfo, error) {
	if st, ok := e.f.m.Lstats[e.p]; ok {
		return newFileInfo(e.base, st), nil
	}
	if fe, ok := e.f.errs["lstat "+e.p]; ok {
		return nil, &fs.PathError{Op: "lstat", Path: e.name, Err: fe.err()}
	}
	return &fileInfo{name: e.base, mode: e.typ}, nil
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func newFileInfo(name string, st Stat) *fileInfo {
	m, _ := st.mode() // validated on read
	return &fileInfo{name: name, size: st.Size, mode: m}
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return time.Time{} }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return nil }

type replayEnv struct {
	values   map[string]string
	withheld map[string]bool
}

func (e *replayEnv) Lookup(name string) (string, bool) {
	if v, ok := e.values[name]; ok {
		return v, true
	}
	if e.withheld[name] {
		return WithheldValue, true
	}
	return "", false
}

type replayCmd struct {
	stdout []byte
	err    error
}

type replayRunner struct {
	cmds     map[string]*replayCmd
	lookpath map[string]Answer
}

func (r *replayRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	c, ok := r.cmds[commandKey(name, args)]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, host.ErrNotFound)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return bytes.Clone(c.stdout), c.err
}

func (r *replayRunner) LookPath(name string) (string, error) {
	a, ok := r.lookpath[name]
	if !ok {
		return "", fmt.Errorf("%s: %w", name, host.ErrNotFound)
	}
	if a.Error != nil {
		return a.Value, a.Error.err()
	}
	return a.Value, nil
}

type replaySysctl map[string]Answer

func (s replaySysctl) Get(name string) (string, error) {
	a, ok := s[name]
	if !ok {
		return "", fmt.Errorf("sysctl %s: %w", name, host.ErrNotFound)
	}
	if a.Error != nil {
		return a.Value, a.Error.err()
	}
	return a.Value, nil
}

type replayNVML struct {
	data []byte
	err  error
}

func (n *replayNVML) Query(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if n.err != nil {
		return nil, n.err
	}
	return bytes.Clone(n.data), nil
}
