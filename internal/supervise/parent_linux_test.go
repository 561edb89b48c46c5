package supervise

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() { parentMain = runAsParent }

// runAsParent is devctl run reduced to the engine: the test binary in
// child mode under Run, with the signals devctl notifies, then one line
// on stderr saying how Run left the terminal:
//
//	parent: exit=N interrupted=BOOL fg=devctl|other|none echo=on|off|none
//
// PARENT_PATH runs another program instead; PARENT_TOSTOP=1 sets the
// terminal's tostop mode first; PARENT_CGROUP=1 asks for a
// cgroup; PARENT_CHURN=1 ends OS threads while the child runs (goroutines
// that exit locked to theirs), which would fire the parent-death signal if
// the thread that started the child could be one of them.
func runAsParent() int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, ForwardedSignals...)
	exe, _ := os.Executable()
	path := exe
	if p := os.Getenv("PARENT_PATH"); p != "" {
		path = p
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SUPERVISE_TEST_PARENT=") {
			env = append(env, kv)
		}
	}
	env = append(env, "SUPERVISE_TEST_CHILD=1")
	if os.Getenv("PARENT_CHURN") == "1" {
		go func() {
			for {
				done := make(chan struct{})
				go func() { runtime.LockOSThread(); close(done) }()
				<-done
				time.Sleep(time.Millisecond)
			}
		}()
	}
	if os.Getenv("PARENT_TOSTOP") == "1" {
		m, err := unix.IoctlGetTermios(0, unix.TCGETS)
		if err == nil {
			m.Lflag |= unix.TOSTOP
			err = unix.IoctlSetTermios(0, unix.TCSETS, m)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "parent: tostop:", err)
			return 1
		}
	}
	res, err := Run(context.Background(), Spec{
		Path: path, Args: os.Args[1:], Env: env,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Signals: sigs, Grace: 300 * time.Millisecond, Subreaper: true,
		Cgroup: os.Getenv("PARENT_CGROUP") == "1",
	})
	code := res.ExitCode
	if err != nil {
		fmt.Fprintln(os.Stderr, "parent:", err)
		code = 1
		var se *StartError
		if errors.As(err, &se) {
			code = se.Code
		}
	}
	fg, echo := "none", "none"
	if pg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP); err == nil {
		fg = "other"
		if pg == unix.Getpgrp() {
			fg = "devctl"
		}
	}
	if m, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		echo = "off"
		if m.Lflag&unix.ECHO != 0 {
			echo = "on"
		}
	}
	fmt.Fprintf(os.Stderr, "parent: exit=%d interrupted=%v fg=%s echo=%s\n", code, res.Interrupted, fg, echo)
	return code
}

// parentCmd is an unstarted parent running the child mode args.
func parentCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(append(os.Environ(), "SUPERVISE_TEST_PARENT=1"), env...)
	return cmd
}

// gone reports whether pid no longer runs: it does not exist, or it is a
// zombie (this test process is a subreaper, so the job's dead may be its
// own zombies until something reaps them).
func gone(pid int) bool {
	st, err := readStat(pid)
	return err != nil || st.state == 'Z'
}

func waitGone(t *testing.T, limit time.Duration, pids ...int) {
	t.Helper()
	for end := time.Now().Add(limit); ; time.Sleep(10 * time.Millisecond) {
		var left []int
		for _, p := range pids {
			if !gone(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("still running after %v: %v", limit, left)
		}
	}
}

// zombies lists this process's zombie children.
func zombies() []int {
	var out []int
	for _, p := range allProcs() {
		if p.ppid == os.Getpid() && p.state == 'Z' {
			out = append(out, p.pid)
		}
	}
	return out
}

func readyPids(t *testing.T, line string) []int {
	t.Helper()
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "ready" {
		t.Fatalf("want a line \"ready PID...\", got %q", line)
	}
	var out []int
	for _, s := range f[1:] {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ready line %q: %v", line, err)
		}
		out = append(out, n)
	}
	return out
}

func cgroupAvailable(t *testing.T) bool {
	t.Helper()
	cg, err := newCgroup()
	if err != nil {
		return false
	}
	cg.remove()
	return true
}

// Orphans the job leaves behind are reaped as they die, not at the end
// of the run: 200 short-lived grandchildren whose parent exited leave no
// zombie while the job still runs, and the job's own status is not taken
// by the reaper.
func TestOrphansAreReapedAsTheyDie(t *testing.T) {
	for _, cg := range []bool{false, true} {
		t.Run(fmt.Sprintf("cgroup=%v", cg), func(t *testing.T) {
			if cg && !cgroupAvailable(t) {
				t.Skip("no writable cgroup v2 group here")
			}
			s := childSpec(t, "orphans", "200")
			s.Subreaper, s.Cgroup = true, cg
			st := start(t, context.Background(), s)
			// "ready" comes after the 200th orphan was made; the last
			// ones may still be dying.
			var z []int
			for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if z = zombies(); len(z) == 0 {
					break
				}
			}
			if len(z) > 0 {
				t.Errorf("%d zombies while the job runs: %v", len(z), z)
			}
			st.signals <- syscall.SIGTERM
			if res := st.wait(t, 10*time.Second); res.ExitCode != 7 {
				t.Errorf("exit %d, want the job's own 7", res.ExitCode)
			}
		})
	}
}

// Two Runs at once in one process, each reaping orphans, each get their
// own child's status.
func TestConcurrentRunsKeepTheirOwnStatus(t *testing.T) {
	var wg sync.WaitGroup
	for _, code := range []int{3, 5} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				s := childSpec(t, "exit", strconv.Itoa(code))
				s.Subreaper = true
				res, err := Run(context.Background(), s)
				if err != nil || res.ExitCode != code {
					t.Errorf("exit %d err %v, want %d", res.ExitCode, err, code)
				}
			}
		}()
	}
	wg.Wait()
}

// A process that left the job's group and session (setsid), with a child
// of its own, both ignoring SIGTERM, is ended when the run ends: from the
// job's cgroup, or without one from the descendants the subreaper sees.
func TestEveryDescendantIsEnded(t *testing.T) {
	for _, cg := range []bool{false, true} {
		t.Run(fmt.Sprintf("cgroup=%v", cg), func(t *testing.T) {
			if cg && !cgroupAvailable(t) {
				t.Skip("no writable cgroup v2 group here")
			}
			var out bytes.Buffer
			s := childSpec(t, "setsid")
			s.Stdout = &out
			s.Grace = 200 * time.Millisecond
			s.Subreaper, s.Cgroup = true, cg
			res, err := Run(context.Background(), s)
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("exit %d, err %v", res.ExitCode, err)
			}
			pids := readyPids(t, strings.TrimSpace(out.String()))
			for _, p := range pids {
				if !gone(p) {
					t.Errorf("descendant %d outlived the run", p)
				}
			}
			if len(pids) != 2 {
				t.Errorf("pids %v, want the keeper's and its child's", pids)
			}
			if cg {
				dir, _, err := ownCgroup()
				if err != nil {
					t.Fatal(err)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("devctl-run-%d-*", os.Getpid()))); len(left) > 0 {
					t.Errorf("cgroups left: %v", left)
				}
			}
		})
	}
}

// A child that stops itself with SIGSTOP (or is stopped by someone) is
// not a job-control stop: devctl keeps running and the job goes on when
// it is continued.
func TestSIGSTOPIsNotPassedUp(t *testing.T) {
	pr, pw := io.Pipe()
	s := childSpec(t, "stop-self", "STOP")
	s.Stdout = pw
	done := make(chan Result, 1)
	go func() { res, _ := Run(context.Background(), s); pw.Close(); done <- res }()
	br := bufio.NewReader(pr)
	line, _ := br.ReadString('\n')
	pid := readyPids(t, line)[0]
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st, err := readStat(pid); err == nil && st.state == 'T' {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the child did not stop")
		}
	}
	syscall.Kill(pid, syscall.SIGCONT)
	rest, _ := io.ReadAll(br)
	if res := <-done; res.ExitCode != 0 || strings.TrimSpace(string(rest)) != "resumed" {
		t.Errorf("exit %d, output %q; want 0 and resumed", res.ExitCode, rest)
	}
}

// stderr comes through as written: no newline is added after output that
// does not end with one.
func TestStderrIsByteIdentical(t *testing.T) {
	var errOut bytes.Buffer
	s := childSpec(t, "stderr-raw", "no newline at the end")
	s.Stderr = &errOut
	res, err := Run(context.Background(), s)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d err %v", res.ExitCode, err)
	}
	if got := errOut.String(); got != "no newline at the end" || !res.StderrOpenLine {
		t.Errorf("stderr %q, open line %v", got, res.StderrOpenLine)
	}
}

// SIGKILL of devctl does not orphan the job: the child gets the
// parent-death signal, also while other goroutines of devctl end their OS
// threads (the signal is tied to the thread that started the child).
func TestChildDiesWithDevctl(t *testing.T) {
	cmd := parentCmd(t, []string{"PARENT_CHURN=1"}, "sleep")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(out)
	line, _ := br.ReadString('\n')
	child := readyPids(t, line)[0]
	time.Sleep(300 * time.Millisecond) // threads come and go meanwhile
	if gone(child) {
		t.Fatal("the child died while devctl was alive")
	}
	cmd.Process.Kill()
	cmd.Wait()
	waitGone(t, 5*time.Second, child)
}

// SIGQUIT (Ctrl-\ where devctl holds the terminal, or kill -QUIT) is
// forwarded to the job; devctl does not die of it (Go's default for
// SIGQUIT is to dump the goroutines and exit 2).
func TestQuitIsForwardedAndDevctlSurvives(t *testing.T) {
	cmd := parentCmd(t, nil, "trap")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(out)
	if line, _ := br.ReadString('\n'); line != "ready\n" {
		t.Fatalf("first line %q", line)
	}
	cmd.Process.Signal(syscall.SIGQUIT)
	rest, _ := io.ReadAll(br)
	err = cmd.Wait()
	if got := strings.TrimSpace(string(rest)); got != "got quit" {
		t.Errorf("child saw %q, want got quit", got)
	}
	if code := cmd.ProcessState.ExitCode(); code != 7 || !strings.Contains(errOut.String(), "exit=7 interrupted=true") {
		t.Errorf("devctl exit %d (%v), stderr %q; want the job's 7", code, err, errOut.String())
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want procStat
		ok   bool
	}{
		{"a sleeping process", "1234 (sleep) S 1200 1234 1200 34816 1234 4194304 96 0 0 0 0 0 0 0 20 0 1 0 5123456 8630272 224 18446744073709551615",
			procStat{pid: 1234, ppid: 1200, pgid: 1234, state: 'S', start: 5123456}, true},
		{"a command name with spaces and parentheses", "77 (a (b) c) Z 1 77 77 0 -1 4228108 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0 18446744073709551615",
			procStat{pid: 77, ppid: 1, pgid: 77, state: 'Z', start: 99}, true},
		{"a line cut short", "77 (x) S 1 77 77 0", procStat{}, false},
		{"no command name", "77 x S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99", procStat{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.in))
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseStat = %+v, %v; want %+v ok=%v", got, err, tc.want, tc.ok)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1200 1234 1200 34816 1234 4194304 96 0 0 0 0 0 0 0 20 0 1 0 5123456 8630272"))
	f.Add([]byte("1 ((() R 0 0 0"))
	f.Fuzz(func(t *testing.T, b []byte) { parseStat(b) })
}

func TestCgroupPaths(t *testing.T) {
	mi := "24 30 0:22 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
		"35 30 0:31 /user.slice /sys/fs/cgroup/uni\\040fied rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
	root, mnt, ok := cgroup2Mount([]byte(mi))
	if !ok || root != "/user.slice" || mnt != "/sys/fs/cgroup/uni fied" {
		t.Errorf("cgroup2Mount = %q %q %v", root, mnt, ok)
	}
	if _, _, ok := cgroup2Mount([]byte("24 30 0:22 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw\n")); ok {
		t.Error("a v1-only mountinfo has a cgroup2 mount")
	}
	if got := parseCgroup2([]byte("12:pids:/a\n0::/user.slice/x.scope\n")); got != "/user.slice/x.scope" {
		t.Errorf("parseCgroup2 = %q", got)
	}
	if got := parseCgroup2([]byte("4:memory:/a\n")); got != "" {
		t.Errorf("parseCgroup2 of v1 only = %q", got)
	}
}
