package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/secret"
)

// Recorder wraps a Host and remembers every answer it gives. Run probe
// drivers, doctor checks or anything else against Host(), then Write the
// snapshot. It is safe for concurrent use: drivers run in parallel.
//
// When a question is asked twice the first answer is kept, so a replay is
// deterministic even if a file changed between two reads.
type Recorder struct {
	base *host.Host
	h    *host.Host

	mu       sync.Mutex
	files    map[string][]byte
	dirs     map[string][]Entry
	stats    map[string]Stat
	lstats   map[string]Stat
	links    map[string]string
	missing  map[string]bool
	errs     map[string]FileError // key op+" "+path
	env      map[string]string
	unset    map[string]bool
	withheld map[string]bool
	cmds     map[string]*cmdRecord // key commandKey
	lookpath map[string]recAnswer
	sysctl   map[string]recAnswer
	nvml     *recNVML
}

type cmdRecord struct {
	name   string
	args   []string
	stdout []byte
	err    error
}

type recAnswer struct {
	value string
	err   error
}

type recNVML struct {
	data []byte
	err  error
}

// NewRecorder starts recording what base answers.
func NewRecorder(base *host.Host) *Recorder {
	r := &Recorder{
		base:     base,
		files:    map[string][]byte{},
		dirs:     map[string][]Entry{},
		stats:    map[string]Stat{},
		lstats:   map[string]Stat{},
		links:    map[string]string{},
		missing:  map[string]bool{},
		errs:     map[string]FileError{},
		env:      map[string]string{},
		unset:    map[string]bool{},
		withheld: map[string]bool{},
		cmds:     map[string]*cmdRecord{},
		lookpath: map[string]recAnswer{},
		sysctl:   map[string]recAnswer{},
	}
	h := *base
	fsys := base.FS
	if fsys == nil {
		fsys = emptyFS{}
	}
	h.FS = &recFS{r: r, fs: fsys}
	env := base.Env
	if env == nil {
		env = host.MapEnv{}
	}
	h.Env = &recEnv{r: r, env: env}
	run := base.Runner
	if run == nil {
		run = host.NoRunner{}
	}
	h.Runner = &recRunner{r: r, run: run}
	sys := base.Sysctl
	if sys == nil {
		sys = host.NoSysctl{}
	}
	h.Sysctl = &recSysctl{r: r, sys: sys}
	if base.NVML != nil {
		h.NVML = &recNVMLSource{r: r, src: base.NVML}
	}
	h.Identity.Groups = append([]string(nil), base.Identity.Groups...)
	r.h = &h
	return r
}

// Host is the recording host: give it to drivers and checks.
func (r *Recorder) Host() *host.Host { return r.h }

func commandKey(name string, args []string) string {
	return name + "\x00" + strings.Join(args, "\x00")
}

// fsOps maps the manifest's op names to the ones os errors print.
var fsOps = map[string]string{"read": "open", "readdir": "open", "stat": "stat", "lstat": "lstat", "readlink": "readlink"}

// failFile records a failed file operation and returns the error drivers
// see: the same *fs.PathError, naming the machine path, that a replay
// returns, so reports that quote an error read the same on both sides.
func (r *Recorder) failFile(op, p, name string, err error) error {
	inner := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		inner = pe.Err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(err, fs.ErrNotExist) {
		r.missing[p] = true
		return notExist(op, name)
	}
	key := op + " " + p
	fe, ok := r.errs[key]
	if !ok {
		fe = FileError{Op: op, Path: p, Fail: *failOf(inner)}
		r.errs[key] = fe
	}
	return &fs.PathError{Op: fsOps[op], Path: name, Err: fe.Fail.err()}
}

// notExist is the error for a missing path, recorded or replayed.
func notExist(op, name string) error {
	return &fs.PathError{Op: fsOps[op], Path: name, Err: &replayError{msg: "no such file or directory", kind: fs.ErrNotExist}}
}

// recordable reports whether a name is recorded: only absolute paths are
// (the host refuses relative ones itself).
func recordable(name string) (string, bool) {
	if !strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return "", false
	}
	return path.Clean(name), true
}

type recFS struct {
	r  *Recorder
	fs host.FS
}

func (f *recFS) ReadFile(name string) ([]byte, error) {
	p, ok := recordable(name)
	if !ok {
		return f.fs.ReadFile(name)
	}
	if withheldFile(p) {
		f.r.mu.Lock()
		fe := FileError{Op: "read", Path: p, Fail: Fail{Kind: kindWithheld, Message: "withheld from snapshots"}}
		f.r.errs["read "+p] = fe
		f.r.mu.Unlock()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fe.Fail.err()}
	}
	b, err := f.fs.ReadFile(name)
	if err != nil {
		return b, f.r.failFile("read", p, name, err)
	}
	b = scrubFile(p, b)
	f.r.mu.Lock()
	if _, ok := f.r.files[p]; !ok {
		f.r.files[p] = append([]byte{}, b...)
	}
	f.r.mu.Unlock()
	return b, nil
}

func (f *recFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, ok := recordable(name)
	if !ok {
		return f.fs.ReadDir(name)
	}
	es, err := f.fs.ReadDir(name)
	if err != nil {
		return es, f.r.failFile("readdir", p, name, err)
	}
	list := make([]Entry, len(es))
	out := make([]fs.DirEntry, len(es))
	for i, e := range es {
		list[i] = Entry{Name: e.Name(), Type: typeName(e.Type())}
		out[i] = &recEntry{DirEntry: e, r: f.r, p: path.Join(p, e.Name()), name: path.Join(name, e.Name())}
	}
	f.r.mu.Lock()
	if _, ok := f.r.dirs[p]; !ok {
		f.r.dirs[p] = list
	}
	f.r.mu.Unlock()
	return out, nil
}

func (f *recFS) Stat(name string) (fs.FileInfo, error) {
	p, ok := recordable(name)
	if !ok {
		return f.fs.Stat(name)
	}
	fi, err := f.fs.Stat(name)
	if err != nil {
		return fi, f.r.failFile("stat", p, name, err)
	}
	f.r.mu.Lock()
	if _, ok := f.r.stats[p]; !ok {
		f.r.stats[p] = statOf(fi)
	}
	f.r.mu.Unlock()
	return fi, nil
}

func (f *recFS) Readlink(name string) (string, error) {
	p, ok := recordable(name)
	if !ok {
		return f.fs.Readlink(name)
	}
	t, err := f.fs.Readlink(name)
	if err != nil {
		return t, f.r.failFile("readlink", p, name, err)
	}
	t = secret.Scrub(scrubFDLink(p, t))
	f.r.mu.Lock()
	if _, ok := f.r.links[p]; !ok {
		f.r.links[p] = t
	}
	f.r.mu.Unlock()
	return t, nil
}

// recEntry records Info, the one DirEntry method that asks the machine.
type recEntry struct {
	fs.DirEntry
	r    *Recorder
	p    string
	name string
}

func (e *recEntry) Info() (fs.FileInfo, error) {
	fi, err := e.DirEntry.Info()
	if err != nil {
		return fi, e.r.failFile("lstat", e.p, e.name, err)
	}
	e.r.mu.Lock()
	if _, ok := e.r.lstats[e.p]; !ok {
		e.r.lstats[e.p] = statOf(fi)
	}
	e.r.mu.Unlock()
	return fi, nil
}

type recEnv struct {
	r   *Recorder
	env host.Env
}

// Lookup records the variable; a secret-looking one is recorded as set or
// unset only, and drivers see WithheldValue for it, as a replay would show.
func (e *recEnv) Lookup(name string) (string, bool) {
	v, ok := e.env.Lookup(name)
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	switch {
	case !ok:
		e.r.unset[name] = true
	case secret.Name(name):
		e.r.withheld[name] = true
		v = WithheldValue
	default:
		v = secret.Scrub(v)
		if _, seen := e.r.env[name]; !seen {
			e.r.env[name] = v
		}
	}
	return v, ok
}

type recRunner struct {
	r   *Recorder
	run host.Runner
}

func (x *recRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := x.run.Run(ctx, name, args...)
	out = secret.ScrubBytes(out)
	key := commandKey(name, args)
	x.r.mu.Lock()
	if _, ok := x.r.cmds[key]; !ok {
		x.r.cmds[key] = &cmdRecord{name: name, args: secret.Args(args), stdout: append([]byte{}, out...), err: err}
	}
	x.r.mu.Unlock()
	return out, err
}

func (x *recRunner) LookPath(name string) (string, error) {
	p, err := x.run.LookPath(name)
	x.r.mu.Lock()
	if _, ok := x.r.lookpath[name]; !ok {
		x.r.lookpath[name] = recAnswer{value: p, err: err}
	}
	x.r.mu.Unlock()
	return p, err
}

type recSysctl struct {
	r   *Recorder
	sys host.Sysctl
}

func (s *recSysctl) Get(name string) (string, error) {
	v, err := s.sys.Get(name)
	v = secret.Scrub(v)
	s.r.mu.Lock()
	if _, ok := s.r.sysctl[name]; !ok {
		s.r.sysctl[name] = recAnswer{value: v, err: err}
	}
	s.r.mu.Unlock()
	return v, err
}

type recNVMLSource struct {
	r   *Recorder
	src host.NVML
}

func (n *recNVMLSource) Query(ctx context.Context) ([]byte, error) {
	b, err := n.src.Query(ctx)
	n.r.mu.Lock()
	if n.r.nvml == nil {
		n.r.nvml = &recNVML{data: append([]byte{}, b...), err: err}
	}
	n.r.mu.Unlock()
	return b, err
}

// emptyFS stands in for a host without a file system: nothing exists.
type emptyFS struct{}

func (emptyFS) ReadFile(name string) ([]byte, error)       { return nil, notExist("read", name) }
func (emptyFS) ReadDir(name string) ([]fs.DirEntry, error) { return nil, notExist("readdir", name) }
func (emptyFS) Stat(name string) (fs.FileInfo, error)      { return nil, notExist("stat", name) }
func (emptyFS) Readlink(name string) (string, error)       { return "", notExist("readlink", name) }
