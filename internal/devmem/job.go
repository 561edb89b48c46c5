package devmem

import (
	"bytes"
	"io/fs"
	"strconv"
	"strings"
	"sync"
)

// Job is a process tree: Root and its descendants, read from a proc file
// system. devctl run uses its own pid as Root: as the subreaper of the job
// it stays the ancestor even of what the job left behind with setsid.
type Job struct {
	// Proc is /proc (os.DirFS("/proc") on the live machine; a tree in
	// tests).
	Proc fs.FS
	Root int

	mu  sync.Mutex
	yes map[int]bool // pids known to be in the job
}

// parentOf reads the parent pid from /proc/<pid>/stat ("pid (comm) S
// ppid ..."; comm may hold spaces and parentheses, so the fields are
// counted after the last ')').
func (j *Job) parentOf(pid int) (int, bool) {
	b, err := fs.ReadFile(j.Proc, strconv.Itoa(pid)+"/stat")
	if err != nil {
		return 0, false
	}
	return ParseStatPPID(b)
}

// ParseStatPPID returns the parent pid from the contents of
// /proc/<pid>/stat.
func ParseStatPPID(b []byte) (int, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid < 0 {
		return 0, false
	}
	return ppid, true
}

// maxDepth bounds a walk up the tree (a loop in a damaged tree, a pid
// namespace whose root is not 1).
const maxDepth = 256

// Has reports whether pid is Root or one of its descendants. A pid found
// in the job is remembered; one that is not is walked again next time (it
// may be a job process that has not been seen yet, or a pid reused).
func (j *Job) Has(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == j.Root {
		return true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.yes[pid] {
		return true
	}
	var path []int
	p := pid
	for range maxDepth {
		path = append(path, p)
		pp, ok := j.parentOf(p)
		if !ok || pp <= 1 && j.Root != pp {
			return false
		}
		if pp == j.Root || j.yes[pp] {
			if j.yes == nil {
				j.yes = map[int]bool{}
			}
			for _, q := range path {
				j.yes[q] = true
			}
			return true
		}
		p = pp
	}
	return false
}

// PIDs lists Root's descendants (Root excluded), through the kernel's
// /proc/<pid>/task/<tid>/children lists, or by scanning every
// /proc/<pid>/stat when the kernel has none (CONFIG_PROC_CHILDREN off).
func (j *Job) PIDs() []int {
	var out []int
	seen := map[int]bool{j.Root: true}
	queue := []int{j.Root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		kids, ok := j.children(p)
		if !ok {
			return j.scan()
		}
		for _, k := range kids {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
				queue = append(queue, k)
			}
		}
	}
	return out
}

// children reads the children of every thread of pid. ok is false when the
// kernel does not offer the lists.
func (j *Job) children(pid int) ([]int, bool) {
	dir := strconv.Itoa(pid) + "/task"
	tasks, err := fs.ReadDir(j.Proc, dir)
	if err != nil {
		return nil, true // gone: no children
	}
	var out []int
	for _, t := range tasks {
		b, err := fs.ReadFile(j.Proc, dir+"/"+t.Name()+"/children")
		if err != nil {
			if _, serr := fs.Stat(j.Proc, dir+"/"+t.Name()); serr == nil {
				return nil, false // the task is there, its list is not
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, true
}

// scan walks every process's parent chain.
func (j *Job) scan() []int {
	ents, err := fs.ReadDir(j.Proc, ".")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == j.Root {
			continue
		}
		if j.Has(n) {
			out = append(out, n)
		}
	}
	return out
}
