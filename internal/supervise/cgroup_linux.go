package supervise

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroup is the job's own cgroup v2 group, made under devctl's: every
// process the job starts is born in it and cannot leave it without
// privileges, so at the end nothing of the job is missed (setsid and
// double-forked daemons included), and cgroup.kill ends all of it at once
// (systemd ends a unit the same way).
type cgroup struct {
	dir string // the directory
	rel string // its path as /proc/PID/cgroup shows it
	fd  int    // the open directory, for clone3's CLONE_INTO_CGROUP
}

var cgroupSeq atomic.Int64

// newCgroup makes the job's group under devctl's own cgroup v2 group. It
// fails when there is no cgroup v2 hierarchy, or devctl may not write to
// its group (not delegated to this user, a read-only /sys/fs/cgroup in a
// container): the caller then falls back to the subreaper's view.
func newCgroup() (*cgroup, error) {
	parent, own, err := ownCgroup()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("devctl-run-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return &cgroup{dir: dir, rel: path.Join(own, name), fd: fd}, nil
}

// ownCgroup returns the directory of devctl's own cgroup v2 group and its
// path as /proc/self/cgroup shows it.
func ownCgroup() (dir, rel string, err error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", err
	}
	own := parseCgroup2(self)
	if own == "" {
		return "", "", errors.New("no cgroup v2 hierarchy")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	root, mnt, ok := cgroup2Mount(mi)
	if !ok {
		return "", "", errors.New("cgroup2 is not mounted")
	}
	sub, ok := strings.CutPrefix(own, root)
	if !ok || (root != "/" && sub != "" && sub[0] != '/') {
		return "", "", fmt.Errorf("devctl's cgroup %s is outside the mounted %s", own, root)
	}
	return filepath.Join(mnt, sub), own, nil
}

// cgroup2Mount finds the cgroup2 mount in a /proc/PID/mountinfo file: the
// path of the hierarchy it shows (field 4, "/" unless a bind mount) and
// where it is mounted (field 5, with the octal escapes of proc(5)).
func cgroup2Mount(mi []byte) (root, mountpoint string, ok bool) {
	for len(mi) > 0 {
		line := mi
		if i := bytes.IndexByte(mi, '\n'); i >= 0 {
			line, mi = mi[:i], mi[i+1:]
		} else {
			mi = nil
		}
		pre, post, found := bytes.Cut(line, []byte(" - "))
		if !found {
			continue
		}
		if fs := bytes.Fields(post); len(fs) == 0 || string(fs[0]) != "cgroup2" {
			continue
		}
		f := bytes.Fields(pre)
		if len(f) < 5 {
			continue
		}
		return unescapeMount(string(f[3])), unescapeMount(string(f[4])), true
	}
	return "", "", false
}

// unescapeMount undoes the \ooo escapes mountinfo writes for space, tab,
// newline and backslash.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// contains reports whether pid (a zombie too: the kernel keeps its
// cgroup) is in the job's group or one the job made under it.
func (c *cgroup) contains(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	p := parseCgroup2(b)
	return p == c.rel || strings.HasPrefix(p, c.rel+"/")
}

// procs lists the processes in the group and in the groups the job made
// under it (cgroup.procs leaves zombies out).
func (c *cgroup) procs() []int {
	var out []int
	_ = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out
}

// populated reports whether a live process is left in the group.
func (c *cgroup) populated() bool {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return len(c.procs()) > 0
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// signal sends sig to every process in the group. SIGKILL goes through
// cgroup.kill (Linux 5.14) when there is one: the kernel then kills the
// whole subtree, forks racing with the kill included.
func (c *cgroup) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err == nil {
			return
		}
	}
	for _, pid := range c.procs() {
		_ = syscall.Kill(pid, sig)
	}
}

// remove deletes the group once it is empty (and the groups the job made
// under it, deepest first). A group still populated after a second is
// left: rmdir cannot remove it.
func (c *cgroup) remove() {
	if c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
	var dirs []string
	_ = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for end := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
		busy := false
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				busy = true
			}
		}
		if !busy || time.Now().After(end) {
			return
		}
	}
}
