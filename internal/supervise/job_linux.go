package supervise

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux devctl is the job's parent the way a shell and an init are:
//
//   - It waits for the child itself (wait4 with WUNTRACED, woken by
//     SIGCHLD) instead of os/exec's Wait, so it sees the job stop as well
//     as end.
//   - The child gets the terminal's foreground when devctl has it, and
//     job-control stops travel up to devctl's own shell (onStop).
//   - With Spec.Subreaper, orphans of the job are reaped as they die, and
//     at the end every descendant is ended: the job's cgroup
//     (Spec.Cgroup), else the descendants the subreaper can see.
//   - The child dies with devctl (the parent-death signal).

// mains is the main child of every Run in progress: their statuses
// belong to their own Run, whatever another Run's reaper sees. startMu is
// held for writing from the start of a child to its registration, and for
// reading while orphans are reaped, so no reaper sees a main child before
// it is registered.
var (
	startMu sync.RWMutex
	mainsMu sync.Mutex
	mains   = map[int]bool{}
)

func isStarted(pid int) bool {
	mainsMu.Lock()
	defer mainsMu.Unlock()
	return mains[pid]
}

type job struct {
	group
	chld      chan os.Signal // SIGCHLD
	self      int
	subreaper bool
	born      uint64 // the child's start time: what came before is not the job's
	cg        *cgroup
	tty       *terminal // stdin's terminal, or /dev/tty once a stop needed it
	ws        syscall.WaitStatus
	done      bool
	lost      error // the status could not be read
	stopped   bool
	released  bool
}

// startJob starts the child. The calling goroutine stays locked to its OS
// thread until close: the parent-death signal fires when the thread that
// forked the child ends (go.dev/issue/27505), and a Go thread ends when a
// goroutine locked to it returns without unlocking, so no other code may
// run on this one meanwhile.
func startJob(s Spec, path string, files []*os.File) (*job, error) {
	runtime.LockOSThread()
	j := &job{self: os.Getpid(), subreaper: s.Subreaper, chld: make(chan os.Signal, 1)}
	if s.Subreaper {
		becomeSubreaper()
	}
	signal.Notify(j.chld, syscall.SIGCHLD)
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if t := stdinTerminal(s.Stdin); t != nil {
		j.tty = t
		if t.inForeground() {
			// The child makes its new group the foreground before it
			// execs, with its signals blocked (os/exec's Foreground),
			// so it can read the terminal from its first instruction.
			attr.Foreground, attr.Ctty, t.handed = true, t.fd, true
		}
	}
	if s.Cgroup {
		if cg, err := newCgroup(); err == nil {
			j.cg = cg
		}
	}
	cmd, err := j.spawn(s, path, files, attr)
	if err != nil {
		j.close()
		return nil, err
	}
	j.pid, j.proc = cmd.Process.Pid, cmd.Process
	if st, err := readStat(j.pid); err == nil {
		j.born = st.start
	}
	return j, nil
}

func (j *job) spawn(s Spec, path string, files []*os.File, attr *syscall.SysProcAttr) (*exec.Cmd, error) {
	startMu.Lock()
	defer startMu.Unlock()
	cmd := newCmd(s, path, files, attr)
	if j.cg != nil {
		attr.UseCgroupFD, attr.CgroupFD = true, j.cg.fd
	}
	err := cmd.Start()
	if err != nil && j.cg != nil && !errors.Is(err, fs.ErrNotExist) {
		// clone3 may refuse the group (a kernel before 5.7, a threaded
		// or busy group, a seccomp filter): start without it.
		j.cg.remove()
		j.cg = nil
		attr.UseCgroupFD = false
		cmd = newCmd(s, path, files, attr)
		err = cmd.Start()
	}
	if err != nil {
		return nil, startError(s.Path, err)
	}
	mainsMu.Lock()
	mains[cmd.Process.Pid] = true
	mainsMu.Unlock()
	return cmd, nil
}

func newCmd(s Spec, path string, files []*os.File, attr *syscall.SysProcAttr) *exec.Cmd {
	cmd := exec.Command(path, s.Args...)
	cmd.Args[0] = s.Path
	cmd.Env, cmd.Dir = s.Env, s.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[1], files[2]
	cmd.SysProcAttr = attr
	return cmd
}

// wake is where a change in the children is announced.
func (j *job) wake() <-chan os.Signal { return j.chld }

// poll collects what happened to the child (and, with the subreaper, reaps
// the job's orphans) and reports whether the child has ended.
func (j *job) poll() bool {
	for !j.done {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(j.pid, &ws, syscall.WNOHANG|syscall.WUNTRACED|syscall.WCONTINUED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			// ECHILD: something else in this process waited for it.
			j.done, j.lost = true, err
			j.unregister()
			break
		}
		if pid == 0 {
			break
		}
		switch {
		case ws.Exited(), ws.Signaled():
			j.done, j.ws = true, ws
			j.unregister()
		case ws.Stopped():
			j.stopped = true
			j.onStop(ws.StopSignal())
		case ws.Continued():
			j.stopped = false
		}
	}
	if j.subreaper {
		j.reapOrphans()
	}
	return j.done
}

func (j *job) unregister() {
	mainsMu.Lock()
	delete(mains, j.pid)
	mainsMu.Unlock()
}

func (j *job) status() (int, string, error) {
	if j.lost != nil {
		return -1, "", j.lost
	}
	code, sig := waitStatus(j.ws)
	return code, sig, nil
}

// onStop handles a job-control stop of the child the way a shell's job
// and sudo do. A child that needs the terminal (SIGTTIN, SIGTTOU) while
// devctl is in the foreground gets it and goes on. Otherwise the stop
// travels up: devctl stops with the same signal, so the shell it runs
// under sees its job stopped ("Stopped", "Stopped (tty input)") and gets
// the terminal back; when the shell continues devctl (fg, bg), the child
// is continued too, with the terminal again when devctl has it. In an
// orphaned process group the kernel discards those stop signals, so devctl
// does not stop and the child goes on at once. SIGSTOP is not passed up:
// whoever stopped the job on purpose continues it.
func (j *job) onStop(sig syscall.Signal) {
	if sig != syscall.SIGTSTP && sig != syscall.SIGTTIN && sig != syscall.SIGTTOU {
		return
	}
	t := j.tty
	if t == nil {
		if t = controllingTerminal(); t == nil {
			return // no terminal, no job control: the job waits to be continued
		}
		j.tty = t
	}
	wantsTTY := sig == syscall.SIGTTIN || sig == syscall.SIGTTOU
	if wantsTTY && t.inForeground() {
		if t.give(j.pid) == nil {
			t.handed = true
			j.cont()
			return
		}
	}
	if fg, err := t.foreground(); err == nil && fg != t.pgrp && j.ownsGroup(fg) {
		_ = t.give(t.pgrp)
	}
	stopSelf(sig)
	// Continued (or never stopped).
	if (t.handed || wantsTTY) && t.inForeground() {
		if t.give(j.pid) == nil {
			t.handed = true
		}
	}
	j.cont()
}

// stopSelf stops devctl with sig and returns once it is continued (or at
// once when the kernel discards the stop: an orphaned process group). The
// signal goes to this very thread (tgkill), which takes part in the
// group stop before the call returns to Go: sent to the process (kill),
// it could be taken by another thread while this one ran on, gave the
// terminal back to the job before the shell had seen the stop, and had
// nothing left to do after fg continued devctl.
func stopSelf(sig syscall.Signal) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
}

func (j *job) cont() {
	_ = syscall.Kill(-j.pid, syscall.SIGCONT)
	j.stopped = false
}

// ownsGroup reports whether process group pgid is the job's: the child's
// own, one whose members descend from devctl, or one with no member left.
// The shell's own group, or another job of the shell, is not.
func (j *job) ownsGroup(pgid int) bool {
	if pgid <= 0 || pgid == j.pid {
		return true
	}
	for _, p := range allProcs() {
		if p.pgid == pgid && p.state != 'Z' {
			return descendsFrom(p.pid, j.self)
		}
	}
	return true
}

// releaseTerminal takes the foreground back from the job once it has
// ended, and restores the terminal's modes when a signal killed it.
func (j *job) releaseTerminal() {
	t := j.tty
	if t == nil || j.released || !t.handed {
		return
	}
	j.released = true
	fg, err := t.foreground()
	if err != nil {
		return
	}
	if fg != t.pgrp {
		if !j.ownsGroup(fg) || t.give(t.pgrp) != nil {
			return
		}
	}
	if j.done && j.lost == nil && j.ws.Signaled() {
		t.restoreModes()
	}
}

// handedTo reports whether w is the terminal the job was given. devctl
// then passes the job's output on to it from outside the foreground group,
// which the kernel stops with SIGTTOU under `stty tostop` (or refuses with
// EIO in an orphaned group): the goroutine that writes there blocks
// SIGTTOU on its thread (blockTTOU).
func (j *job) handedTo(w io.Writer) bool {
	return j.tty != nil && j.tty.handed && isTerminal(w)
}

// terminalInterrupt reports whether the job held the terminal and was
// ended by a signal the terminal sends (Ctrl-C, Ctrl-\, a hang-up): with
// the foreground handed over, those reach the job, not devctl.
func (j *job) terminalInterrupt() bool {
	if j.tty == nil || !j.tty.handed || j.lost != nil || !j.ws.Signaled() {
		return false
	}
	switch j.ws.Signal() {
	case syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP:
		return true
	}
	return false
}

// signal forwards sig to the child's group; a stopped group is continued
// so that a termination signal can act (bash's kill does the same).
func (j *job) signal(sig os.Signal) {
	j.group.signal(sig)
	if j.stopped && isTermination(sig) {
		j.cont()
	}
}

func (j *job) terminate() { j.signal(syscall.SIGTERM) }

// kill ends the whole job at once.
func (j *job) kill() { j.endLeftovers(true) }

// isJobs tells whether a child of devctl other than the main one is the
// job's: with a cgroup, one in it; otherwise one born after the child
// (an orphan the subreaper adopted) that no other Run started.
func (j *job) isJobs(pid int, st *procStat) bool {
	if pid == j.pid {
		return true
	}
	if isStarted(pid) {
		return false
	}
	if j.cg != nil {
		return j.cg.contains(pid)
	}
	if st == nil {
		s, err := readStat(pid)
		if err != nil {
			return false
		}
		st = &s
	}
	return st.start >= j.born
}

// reapOrphans reaps the job's orphans that have died, as they die: a job
// that leaves short-lived children behind (a shell's background commands
// whose parent exited) would otherwise fill the process table with zombies
// until it ends. waitid(WNOWAIT) looks at a dead child without reaping it,
// so the main child's status (reaped by poll) and a child another part of
// devctl waits for are never taken.
func (j *job) reapOrphans() {
	startMu.RLock()
	defer startMu.RUnlock()
	for range 1 << 16 {
		var si unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &si, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		pid := siginfoPid(&si)
		if err != nil || pid <= 0 || pid == j.pid {
			return
		}
		if !j.isJobs(pid, nil) {
			// A dead child that is not the job's is first in line: look
			// for the job's dead ones past it.
			j.reapScan()
			return
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
}

func (j *job) reapScan() {
	for _, p := range allProcs() {
		if p.ppid == j.self && p.state == 'Z' && p.pid != j.pid && j.isJobs(p.pid, &p) {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// siginfoPid reads si_pid of a SIGCHLD siginfo: the first field of the
// union that follows si_signo, si_errno and si_code, aligned to a pointer.
func siginfoPid(si *unix.Siginfo) int {
	off := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(si), off)))
}

// descendants lists the live processes of the job the subreaper can see:
// its orphans (devctl's children other than the main one) and everything
// under them.
func (j *job) descendants() []int {
	// What is left of the job outside its group hangs from an orphan
	// devctl adopted: with no child at all there is nothing to look for
	// in /proc (the common end of a run).
	var si unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &si, unix.WEXITED|unix.WSTOPPED|unix.WNOHANG|unix.WNOWAIT, nil); errors.Is(err, syscall.ECHILD) {
		return nil
	}
	ps := allProcs()
	kids := map[int][]int{}
	byPid := map[int]*procStat{}
	for i := range ps {
		kids[ps[i].ppid] = append(kids[ps[i].ppid], ps[i].pid)
		byPid[ps[i].pid] = &ps[i]
	}
	var out, stack []int
	for _, c := range kids[j.self] {
		if j.isJobs(c, byPid[c]) {
			stack = append(stack, c)
		}
	}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p := byPid[pid]; p != nil && p.state != 'Z' {
			out = append(out, pid)
		}
		stack = append(stack, kids[pid]...)
	}
	return out
}

// leftovers reports whether anything of the job is still running once the
// child has ended: its process group, its cgroup, or (with the subreaper
// and no cgroup) a descendant. Dead orphans are reaped on the way.
func (j *job) leftovers() bool {
	j.poll()
	if j.group.alive() {
		return true
	}
	if j.cg != nil {
		return j.cg.populated()
	}
	return j.subreaper && len(j.descendants()) > 0
}

// endLeftovers sends SIGTERM (then SIGCONT, so a stopped process gets
// it, as systemd does) or SIGKILL to all that is left of the job.
func (j *job) endLeftovers(kill bool) {
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGCONT}
	if kill {
		sigs = []syscall.Signal{syscall.SIGKILL}
	}
	for _, sig := range sigs {
		_ = syscall.Kill(-j.pid, sig)
		switch {
		case j.cg != nil:
			j.cg.signal(sig)
		case j.subreaper:
			for _, pid := range j.descendants() {
				_ = syscall.Kill(pid, sig)
			}
		}
	}
}

// close gives the terminal back, removes the cgroup and unlocks the
// thread. It runs on the goroutine that called startJob.
func (j *job) close() {
	j.releaseTerminal()
	if j.tty != nil {
		j.tty.close()
	}
	signal.Stop(j.chld)
	if j.cg != nil {
		j.cg.remove()
	}
	if j.proc != nil {
		j.unregister()
		_ = j.proc.Release()
	}
	runtime.UnlockOSThread()
}
