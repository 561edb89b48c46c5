package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devctl/devctl/internal/procgroup"
)

// DefaultAllowlist is the programs drivers may run on a live machine.
var DefaultAllowlist = []string{"nvidia-smi", "ioreg", "system_profiler", "sw_vers", "neuron-ls", "dmesg"}

// LocalOptions configures a Host for the running machine or a sysroot.
type LocalOptions struct {
	// Sysroot, when set, roots the file system at this directory. Programs,
	// sysctl and NVML are then off: they would describe the running machine,
	// not the tree.
	Sysroot string
	// Programs overrides where an allowlisted program lives
	// (e.g. "nvidia-smi" -> "/opt/bin/nvidia-smi").
	Programs map[string]string
	// CommandTimeout bounds each program run; zero means 5 s.
	CommandTimeout time.Duration
	// NVML is the NVIDIA library source for a live machine; nil means none.
	NVML NVML
}

// Local returns a Host describing the running machine, or the tree under
// opts.Sysroot.
func Local(opts LocalOptions) (*Host, error) {
	h := &Host{
		OS:   runtime.GOOS,
		Arch: runtime.GOARCH,
		Env:  OSEnv{},
		Now:  time.Now,
	}
	h.Hostname, _ = os.Hostname()
	h.Identity = currentIdentity()
	if opts.Sysroot != "" {
		st, err := os.Stat(opts.Sysroot)
		if err != nil {
			return nil, fmt.Errorf("--sysroot %q: %w", opts.Sysroot, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("--sysroot %q: not a directory", opts.Sysroot)
		}
		abs, err := filepath.Abs(opts.Sysroot)
		if err != nil {
			return nil, err
		}
		h.FS = DirFS(abs)
		h.OS = "linux"
		h.Hostname = ""
		h.Runner = NoRunner{}
		h.Sysctl = NoSysctl{}
		return h, nil
	}
	h.FS = DirFS("/")
	timeout := opts.CommandTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	h.Runner = &ExecRunner{Allow: DefaultAllowlist, Paths: opts.Programs, Timeout: timeout}
	h.Sysctl = localSysctl{}
	h.NVML = opts.NVML
	return h, nil
}

// currentIdentity reads the process's uid and supplementary groups. Group
// names come from /etc/group directly: os/user would go through NSS, which
// loads shared libraries and costs more than the whole probe.
func currentIdentity() Identity {
	id := Identity{UID: os.Getuid()}
	gids, err := os.Getgroups()
	if err != nil {
		return id
	}
	if gid := os.Getgid(); gid >= 0 && !containsInt(gids, gid) {
		gids = append([]int{gid}, gids...)
	}
	data, _ := os.ReadFile("/etc/group")
	names := ParseGroupFile(data)
	for _, g := range gids {
		if n, ok := names[g]; ok {
			id.Groups = append(id.Groups, n)
		} else {
			id.Groups = append(id.Groups, strconv.Itoa(g))
		}
	}
	return id
}

// ParseGroupFile maps gid to group name from /etc/group contents
// ("name:x:gid:members" lines). Malformed lines are skipped.
func ParseGroupFile(data []byte) map[int]string {
	out := map[int]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.SplitN(line, ":", 4)
		if len(f) < 3 || f[0] == "" {
			continue
		}
		gid, err := strconv.Atoi(f[2])
		if err != nil || gid < 0 {
			continue
		}
		if _, dup := out[gid]; !dup {
			out[gid] = f[0]
		}
	}
	return out
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// OSEnv is the process environment.
type OSEnv struct{}

// Lookup implements Env.
func (OSEnv) Lookup(name string) (string, bool) { return os.LookupEnv(name) }

var errNotRegular = errors.New("not a regular file")

// DirFS serves absolute machine paths from a directory on this machine.
//
// Rooted anywhere but "/", it is a --sysroot tree and is confined to it:
// every symbolic link met on the way, absolute or relative, is resolved
// inside the tree as if the tree were "/" (as openat2's RESOLVE_IN_ROOT or
// a chroot would), and ".." stops at the tree's top. A tree copied from
// a real machine holds absolute links (/etc/alternatives, libraries) that
// must land in the tree, and a hostile tree's "../../etc/shadow" must not
// reach the host. os.Root was considered: it refuses links that leave the
// root instead of resolving them inside it, which breaks real trees. The
// walk checks each component with lstat and the final open refuses to
// follow a link (O_NOFOLLOW), so a link planted after the walk fails the
// read instead of escaping; a tree rewritten concurrently while devctl
// reads it is outside this promise.
type DirFS string

// maxLinks bounds the links followed resolving one path, as the kernel's
// 40 (ELOOP).
const maxLinks = 40

var errLoop = errors.New("too many levels of symbolic links")

func (d DirFS) confined() bool { return filepath.Clean(string(d)) != string(filepath.Separator) }

func (d DirFS) path(name string) (string, error) {
	return d.resolve(name, true)
}

// resolve maps a machine path onto the host path under d. With followLast
// false the last component is not followed (for Readlink).
func (d DirFS) resolve(name string, followLast bool) (string, error) {
	if !strings.HasPrefix(name, "/") {
		return "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if !d.confined() {
		return filepath.Join(string(d), filepath.FromSlash(path.Clean(name))), nil
	}
	host := func(rel string) string { return filepath.Join(string(d), filepath.FromSlash(rel)) }
	parts := strings.Split(name, "/")
	cur := "" // resolved so far, relative to the root, free of links
	links := 0
	for len(parts) > 0 {
		p := parts[0]
		parts = parts[1:]
		switch p {
		case "", ".":
			continue
		case "..":
			if i := strings.LastIndexByte(cur, '/'); i >= 0 {
				cur = cur[:i]
			} else {
				cur = ""
			}
			continue
		}
		next := p
		if cur != "" {
			next = cur + "/" + p
		}
		if len(parts) == 0 && !followLast {
			cur = next
			break
		}
		fi, err := os.Lstat(host(next))
		if err != nil {
			// Nothing past a missing component can exist: the caller's own
			// operation reports it, on a path inside the root.
			cur = path.Join(append([]string{next}, parts...)...)
			break
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "open", Path: name, Err: errLoop}
		}
		t, err := os.Readlink(host(next))
		if err != nil {
			return "", err
		}
		t = filepath.ToSlash(t)
		if strings.HasPrefix(t, "/") {
			cur = ""
		}
		parts = append(strings.Split(t, "/"), parts...)
	}
	return host(path.Clean("/" + cur)[1:]), nil
}

// ReadFile implements FS. It reads at most 16 MiB: no file a driver needs is
// larger, and a hostile tree must not make devctl read without bound. Only
// regular files are read (procfs and sysfs files are regular): a FIFO would
// block the open and a link to /dev/zero would fill the buffer. The open
// never waits (O_NONBLOCK), the type is checked on the opened file.
func (d DirFS) ReadFile(name string) ([]byte, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	flag := os.O_RDONLY | oNonblock
	if d.confined() {
		flag |= oNofollow
	}
	f, err := openRegular(p, flag, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const limit = 16 << 20
	b, err := readAll(f, limit)
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return b, nil
}

// readBufs holds ReadFile's scratch buffers. Nearly every file a probe
// reads is a sysfs attribute or a procfs table of a few hundred bytes
// (sysfs attributes are at most a page): reading each into a reused page
// and copying it out at its exact size touches a fraction of the memory
// that growing a new buffer for every file does, and fresh memory is most
// of what a process as short as devctl probe pays for.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// readAll reads r to its end, or to just past limit bytes.
func readAll(r io.Reader, limit int) ([]byte, error) {
	bp := readBufs.Get().(*[]byte)
	b := (*bp)[:0]
	var err error
	for len(b) <= limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
		var n int
		n, err = r.Read(b[len(b):min(cap(b), limit+1)])
		b = b[:len(b)+n]
		if err != nil {
			break
		}
	}
	out := make([]byte, len(b))
	copy(out, b)
	if cap(b) <= 64<<10 { // a big file's buffer is left to the collector
		*bp = b[:0]
		readBufs.Put(bp)
	}
	if err == io.EOF {
		err = nil
	}
	return out, err
}

// ReadDir implements FS.
func (d DirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	return os.ReadDir(p)
}

// Stat implements FS.
func (d DirFS) Stat(name string) (fs.FileInfo, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	if d.confined() {
		return os.Lstat(p) // resolved: a link here was planted after the walk
	}
	return os.Stat(p)
}

// Readlink implements FS.
func (d DirFS) Readlink(name string) (string, error) {
	p, err := d.resolve(name, false)
	if err != nil {
		return "", err
	}
	return os.Readlink(p)
}

// ExecRunner runs allowlisted programs with a timeout.
type ExecRunner struct {
	Allow   []string
	Paths   map[string]string
	Timeout time.Duration
}

func (r *ExecRunner) resolve(name string) (string, error) {
	if p, ok := r.Paths[name]; ok {
		return p, nil
	}
	allowed := false
	for _, a := range r.Allow {
		if a == name {
			allowed = true
			break
		}
	}
	if !allowed {
		return "", fmt.Errorf("%s: %w", name, ErrNotAllowed)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, ErrNotFound)
	}
	return p, nil
}

// LookPath implements Runner.
func (r *ExecRunner) LookPath(name string) (string, error) { return r.resolve(name) }

// waitDelay bounds how long Run waits, after the program exited or was
// killed, for its output pipes to close.
const waitDelay = time.Second

// Run implements Runner. The program runs in a process group of its own:
// on timeout the whole group is killed, and once the program has exited
// whatever it left running in its group (a background child holding stdout
// open) is killed too, so no descendant outlives the run. A program that
// exited successfully keeps its answer even if such a child held the pipe.
func (r *ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	p, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	var out, stderr bytes.Buffer
	waitErr, err := runGroup(ctx, exec.Command(p, args...), &limitWriter{w: &out, n: 16 << 20}, &limitWriter{w: &stderr, n: 64 << 10})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if ctx.Err() != nil {
		return out.Bytes(), fmt.Errorf("%s: %w", name, ctx.Err())
	}
	if waitErr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if len(msg) > 200 {
			msg = msg[:200]
		}
		if msg != "" {
			return out.Bytes(), fmt.Errorf("%s: %w: %s", name, waitErr, msg)
		}
		return out.Bytes(), fmt.Errorf("%s: %w", name, waitErr)
	}
	return out.Bytes(), nil
}

// runGroup runs cmd as a process-group leader with its output copied to
// stdout and stderr, and returns its exit error. The group is killed when
// ctx ends and again once the leader has exited; output pipes still held
// open after that (by a process that left the group) are abandoned after
// waitDelay. err is set only when the program could not start.
func runGroup(ctx context.Context, cmd *exec.Cmd, stdout, stderr io.Writer) (waitErr, err error) {
	cmd.SysProcAttr = procgroup.Attr()
	var readers []*os.File
	var done sync.WaitGroup
	sinks := []*stopWriter{{w: stdout}, {w: stderr}}
	defer func() {
		for _, s := range sinks {
			s.stop() // a copy abandoned below writes no more
		}
	}()
	for _, dst := range []struct {
		w   io.Writer
		set func(*os.File)
	}{{stdout, func(f *os.File) { cmd.Stdout = f }}, {stderr, func(f *os.File) { cmd.Stderr = f }}} {
		pr, pw, err := os.Pipe()
		if err != nil {
			for _, f := range readers {
				f.Close()
			}
			return nil, err
		}
		defer pw.Close()
		dst.set(pw)
		readers = append(readers, pr)
	}
	defer func() {
		for _, f := range readers {
			f.Close()
		}
	}()
	procgroup.Starting()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Tracked until the group is killed below: if devctl stops first (a
	// signal, any early return of root.Main), procgroup.KillAll ends it.
	defer procgroup.Track(cmd.Process)()
	// The program holds the write ends now: ours must close for EOF to come.
	cmd.Stdout.(*os.File).Close()
	cmd.Stderr.(*os.File).Close()
	for i, w := range sinks {
		done.Add(1)
		go func(r *os.File) {
			defer done.Done()
			io.Copy(w, r)
		}(readers[i])
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case waitErr = <-exited:
	case <-ctx.Done():
		procgroup.Kill(cmd.Process)
		select {
		case waitErr = <-exited:
		case <-time.After(waitDelay):
			waitErr = ctx.Err() // unkillable (uninterruptible sleep): give up waiting
		}
	}
	procgroup.Kill(cmd.Process) // whatever the program left running
	copied := make(chan struct{})
	go func() { done.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(waitDelay):
	}
	return waitErr, nil
}

// stopWriter passes writes on until stopped, then drops them, so a copy
// goroutine that outlives runGroup cannot touch the caller's buffer.
type stopWriter struct {
	mu      sync.Mutex
	w       io.Writer
	stopped bool
}

func (s *stopWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return 0, io.ErrClosedPipe
	}
	return s.w.Write(p)
}

func (s *stopWriter) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

type limitWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	n := len(p)
	if l.n <= 0 {
		return n, nil
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	l.w.Write(p)
	l.n -= len(p)
	return n, nil
}

// NoRunner runs nothing: every program is missing.
type NoRunner struct{}

// Run implements Runner.
func (NoRunner) Run(_ context.Context, name string, _ ...string) ([]byte, error) {
	return nil, fmt.Errorf("%s: %w", name, ErrNotFound)
}

// LookPath implements Runner.
func (NoRunner) LookPath(name string) (string, error) {
	return "", fmt.Errorf("%s: %w", name, ErrNotFound)
}

// NoSysctl answers ErrNotFound for every key.
type NoSysctl struct{}

// Get implements Sysctl.
func (NoSysctl) Get(name string) (string, error) {
	return "", fmt.Errorf("sysctl %s: %w", name, ErrNotFound)
}
