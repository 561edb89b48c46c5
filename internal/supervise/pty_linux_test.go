package supervise

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// console is a process on a pseudo-terminal of its own, as a user's
// terminal runs it: the process leads the session and the terminal is its
// controlling terminal.
type console struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
	seen   int // out up to here was matched
	more   chan struct{}
	exited chan struct{}
}

func startConsole(t *testing.T, cmd *exec.Cmd) *console {
	t.Helper()
	master, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	c := &console{t: t, cmd: cmd, master: master, more: make(chan struct{}, 1), exited: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.mu.Unlock()
			select {
			case c.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { cmd.Wait(); close(c.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-c.exited
		master.Close()
	})
	return c
}

// expect waits for text in what the terminal showed after the last match.
func (c *console) expect(text string) {
	c.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		c.mu.Lock()
		i := bytes.Index(c.out.Bytes()[c.seen:], []byte(text))
		if i >= 0 {
			c.seen += i + len(text)
		}
		all := c.out.String()
		c.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-c.more:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("the terminal never showed %q; it showed:\n%s", text, all)
		}
	}
}

func (c *console) send(s string) {
	c.t.Helper()
	if _, err := c.master.WriteString(s); err != nil {
		c.t.Fatal(err)
	}
}

func (c *console) wait() int {
	c.t.Helper()
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		c.mu.Lock()
		defer c.mu.Unlock()
		c.t.Fatalf("still running; the terminal showed:\n%s", c.out.String())
	}
	return c.cmd.ProcessState.ExitCode()
}

// A job that reads the terminal gets it: devctl hands the foreground to
// the job's group (before it gets SIGTTIN and stops for ever) and takes it
// back when the job ends.
func TestTheJobCanReadTheTerminal(t *testing.T) {
	c := startConsole(t, parentCmd(t, nil, "read-line"))
	c.expect("reading")
	c.send("hello\n")
	c.expect("got hello")
	c.expect("parent: exit=0 interrupted=false fg=devctl echo=on")
	if code := c.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// The job's group holds the terminal from its start: it is the job, not
// devctl, that Ctrl-C and Ctrl-Z reach.
func TestTheJobStartsInTheForeground(t *testing.T) {
	c := startConsole(t, parentCmd(t, nil, "fg-check"))
	c.expect("foreground yes")
	c.expect("parent: exit=0 interrupted=false fg=devctl echo=on")
}

// With the terminal handed over, Ctrl-C and Ctrl-\ reach the job (not
// devctl, which neither dies of SIGQUIT nor forwards a second copy): the
// job killed by Ctrl-C is an interrupt (130), the job that traps Ctrl-\
// ends its own way (7).
func TestTerminalSignalsReachTheJob(t *testing.T) {
	for _, tc := range []struct {
		name, mode, key, want string
	}{
		{"Ctrl-C kills a job that does not catch it", "read-line", "\x03", "parent: exit=130 interrupted=true fg=devctl echo=on"},
		{"Ctrl-\\ reaches a job that traps it", "trap", "\x1c", "parent: exit=7 interrupted=false fg=devctl echo=on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startConsole(t, parentCmd(t, nil, tc.mode))
			c.expect(map[string]string{"read-line": "reading", "trap": "ready"}[tc.mode])
			c.send(tc.key)
			if tc.mode == "trap" {
				c.expect("got quit")
			}
			c.expect(tc.want)
			c.wait()
		})
	}
}

// Whatever way the job ends, devctl has the foreground again, and a job
// killed in raw mode leaves the terminal's modes as they were (echo on).
func TestTheTerminalIsRestoredOnEveryExitPath(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("\x01\x02 not a program"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("the job exits", func(t *testing.T) {
		c := startConsole(t, parentCmd(t, nil, "exit", "3"))
		c.expect("parent: exit=3 interrupted=false fg=devctl echo=on")
	})
	t.Run("the job is killed in raw mode", func(t *testing.T) {
		c := startConsole(t, parentCmd(t, nil, "raw"))
		c.expect("raw")
		pgrp, err := unixForeground(c.master)
		if err != nil {
			t.Fatal(err)
		}
		syscall.Kill(-pgrp, syscall.SIGKILL)
		c.expect("parent: exit=137 interrupted=false fg=devctl echo=on")
	})
	t.Run("devctl kills a job that ignores SIGTERM", func(t *testing.T) {
		cmd := parentCmd(t, nil, "ignore")
		c := startConsole(t, cmd)
		c.expect("ready")
		cmd.Process.Signal(syscall.SIGTERM)
		c.expect("parent: exit=137 interrupted=true fg=devctl echo=on")
	})
	t.Run("the program cannot be executed", func(t *testing.T) {
		// The child takes the foreground before exec fails.
		c := startConsole(t, parentCmd(t, []string{"PARENT_PATH=" + garbage}))
		c.expect("parent: exit=126 interrupted=false fg=devctl echo=on")
	})
}

func unixForeground(f *os.File) (int, error) {
	var pgrp int
	err := func() error {
		conn, err := f.SyscallConn()
		if err != nil {
			return err
		}
		var ierr error
		err = conn.Control(func(fd uintptr) { pgrp, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) })
		if err != nil {
			return err
		}
		return ierr
	}()
	return pgrp, err
}

// bashConsole is an interactive bash with job control on its own
// terminal; $P runs devctl (the parent) and its job.
func bashConsole(t *testing.T) *console {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-i")
	cmd.Env = append(os.Environ(), "PS1=$ ", "P="+exe, "SUPERVISE_TEST_PARENT=1", "TERM=dumb")
	c := startConsole(t, cmd)
	c.expect("$ ")
	return c
}

// waitJobHasTerminal waits until the terminal's foreground group is the
// job's (a grandchild of bash, devctl's child) before anything is typed
// for it: typed earlier, it could go to bash.
func (c *console) waitJobHasTerminal() {
	c.t.Helper()
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		fg, err := unixForeground(c.master)
		if err != nil {
			c.t.Fatal(err)
		}
		if st, err := readStat(fg); err == nil && fg != c.cmd.Process.Pid && st.ppid != c.cmd.Process.Pid {
			return
		}
	}
	c.t.Fatal("the job never got the terminal")
}

// Job control travels through devctl as through any foreground job of the
// shell: Ctrl-Z stops the job, devctl stops with it and bash says so and
// gets its prompt back; fg continues devctl, which gives the terminal back
// to the job and continues it.
func TestCtrlZAndFgGoThroughDevctl(t *testing.T) {
	c := bashConsole(t)
	c.send("$P read-line\n")
	c.expect("reading")
	c.send("\x1a")
	c.expect("Stopped")
	c.expect("$ ")
	c.send("fg\n")
	c.waitJobHasTerminal()
	c.send("hello\n")
	c.expect("got hello")
	c.expect("parent: exit=0 interrupted=false fg=devctl echo=on")
	c.send("echo \"rc=$?\"\n")
	c.expect("rc=0")
	c.send("exit\n")
	c.wait()
}

// Started in the background, a job that reads the terminal stops (tty
// input) and so does devctl, as bash shows; fg gives both the terminal.
func TestABackgroundJobThatReadsWaitsForFg(t *testing.T) {
	c := bashConsole(t)
	c.send("$P read-line &\n")
	c.expect("reading")
	// bash reports the stop before its next prompt.
	for i := 0; ; i++ {
		c.send("jobs\n")
		c.mu.Lock()
		stopped := strings.Contains(c.out.String()[c.seen:], "Stopped")
		c.mu.Unlock()
		if stopped {
			break
		}
		if i == 100 {
			c.expect("Stopped")
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.send("fg\n")
	c.waitJobHasTerminal()
	c.send("hello\n")
	c.expect("got hello")
	c.expect("parent: exit=0 interrupted=false fg=devctl echo=on")
	c.send("exit\n")
	c.wait()
}

// devctl passes the job's output on to the terminal while the job holds
// the foreground, as a writer outside the foreground group: with `stty
// tostop` the kernel would stop it (or, in an orphaned group, refuse the
// write) unless it blocks SIGTTOU, as it does.
func TestOutputReachesATostopTerminal(t *testing.T) {
	cmd := parentCmd(t, nil, "stderr-exit", "through tostop", "0")
	cmd.Env = append(cmd.Env, "PARENT_TOSTOP=1")
	c := startConsole(t, cmd)
	c.expect("through tostop")
	c.expect("parent: exit=0 interrupted=false fg=devctl echo=on")
}
