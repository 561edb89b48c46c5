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
	"time"
)

// DefaultAllowlist is the programs drivers may run on a live machine.
var DefaultAllowlist = []string{"nvidia-smi", "ioreg", "system_profiler", "sw_vers", "neuron-ls"}

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
type DirFS string

func (d DirFS) path(name string) (string, error) {
	if !strings.HasPrefix(name, "/") {
		return "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return filepath.Join(string(d), filepath.FromSlash(path.Clean(name))), nil
}

// ReadFile implements FS. It reads at most 16 MiB: no file a driver needs is
// larger, and a hostile tree must not make devctl read without bound. Only
// regular files are read (procfs and sysfs files are regular): a FIFO would
// block the open and a link to /dev/zero would fill the buffer.
func (d DirFS) ReadFile(name string) ([]byte, error) {
	p, err := d.path(name)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errNotRegular}
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	const limit = 16 << 20
	n, err := buf.ReadFrom(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	return buf.Bytes(), nil
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
	return os.Stat(p)
}

// Readlink implements FS.
func (d DirFS) Readlink(name string) (string, error) {
	p, err := d.path(name)
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

// Run implements Runner.
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
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.WaitDelay = time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout = &limitWriter{w: &out, n: 16 << 20}
	cmd.Stderr = &limitWriter{w: &stderr, n: 64 << 10}
	err = cmd.Run()
	if ctx.Err() != nil {
		return out.Bytes(), fmt.Errorf("%s: %w", name, ctx.Err())
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if len(msg) > 200 {
			msg = msg[:200]
		}
		if msg != "" {
			return out.Bytes(), fmt.Errorf("%s: %w: %s", name, err, msg)
		}
		return out.Bytes(), fmt.Errorf("%s: %w", name, err)
	}
	return out.Bytes(), nil
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
