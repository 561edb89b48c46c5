//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
)

// serveProc is `devctl serve` running as a real process: the devctl
// program testscript puts on PATH (this test binary, run as devctl).
type serveProc struct {
	cmd    *exec.Cmd
	base   string
	mu     sync.Mutex
	stderr bytes.Buffer
	exited chan struct{}
	code   int
}

// startServe runs `devctl --from SNAPSHOT serve --listen 127.0.0.1:0`,
// through `sh -c PREFIX; exec devctl ...` when prefix is set (to start it
// with signals ignored), and waits until it answers /healthz.
func startServe(t *testing.T, prefix string) *serveProc {
	t.Helper()
	devctl, err := exec.LookPath("devctl")
	if err != nil {
		t.Fatalf("testscript's devctl is not on PATH: %v", err)
	}
	fx, _ := filepath.Abs("../../testdata/snapshots/nvidia-h100-pcie-x2.tar.gz")
	args := []string{devctl, "--from", fx, "serve", "--listen", "127.0.0.1:0", "--interval", "1h"}
	if prefix != "" {
		args = append([]string{"/bin/sh", "-c", prefix + `; exec "$@"`, "sh"}, args...)
	}
	p := &serveProc{cmd: exec.Command(args[0], args[1:]...), exited: make(chan struct{})}
	dir := t.TempDir()
	p.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir, "XDG_STATE_HOME="+dir, "NO_COLOR=1")
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		re := regexp.MustCompile(`^devctl: serving http://([^/]+)/metrics`)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		err := p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			p.code = -2
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-p.exited:
		t.Fatalf("devctl serve exited %d:\n%s", p.code, p.errText())
	case <-time.After(20 * time.Second):
		t.Fatalf("devctl serve did not start:\n%s", p.errText())
	}
	for deadline := time.Now().Add(20 * time.Second); !p.answers(); {
		if time.Now().After(deadline) {
			t.Fatalf("devctl serve never answered:\n%s", p.errText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

func (p *serveProc) errText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *serveProc) answers() bool {
	resp, err := http.Get(p.base + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func (p *serveProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

func (p *serveProc) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(15 * time.Second):
		t.Fatalf("devctl serve did not exit:\n%s", p.errText())
		return 0
	}
}

// ignoredAtStart holds the stop signals the test binary was started with
// ignored (nohup, a script's background job), which every child it starts
// inherits. Read before any test runs: a command run in-process installs
// handlers, after which signal.Ignored no longer tells.
var ignoredAtStart = map[syscall.Signal]bool{
	syscall.SIGHUP: signal.Ignored(syscall.SIGHUP),
	syscall.SIGINT: signal.Ignored(syscall.SIGINT),
}

// TestServeSignalsEndTheProcess sends each stop signal to a real `devctl
// serve`: a graceful shutdown, one line saying so, and the documented exit
// code (docs/cluster.md).
func TestServeSignalsEndTheProcess(t *testing.T) {
	tests := []struct {
		sig  syscall.Signal
		name string
		code int
	}{
		{syscall.SIGTERM, "SIGTERM", 0},
		{syscall.SIGINT, "SIGINT", 130},
		{syscall.SIGHUP, "SIGHUP", 129},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if ignoredAtStart[tc.sig] {
				// Under nohup the child inherits the ignored signal, and
				// serve keeps it ignored (the next test).
				t.Skipf("%s was ignored when the tests started", tc.name)
			}
			p := startServe(t, "")
			p.signal(t, tc.sig)
			if code := p.exitCode(t); code != tc.code {
				t.Errorf("exit code %d after %s, want %d; stderr:\n%s", code, tc.name, tc.code, p.errText())
			}
			if want := "devctl: " + tc.name + ": shutting down; in-flight requests get 5s\n"; !strings.HasSuffix(p.errText(), want) {
				t.Errorf("stderr does not end with %q:\n%s", want, p.errText())
			}
		})
	}
}

// TestServeKeepsIgnoredSignalsIgnored: started with SIGHUP or SIGINT
// ignored (nohup; a background job of a script), serve goes on when it
// arrives, and stops on SIGTERM with 0.
func TestServeKeepsIgnoredSignalsIgnored(t *testing.T) {
	for _, tc := range []struct {
		trap string
		sig  syscall.Signal
	}{{"HUP", syscall.SIGHUP}, {"INT", syscall.SIGINT}} {
		t.Run(tc.trap, func(t *testing.T) {
			p := startServe(t, "trap '' "+tc.trap)
			p.signal(t, tc.sig)
			time.Sleep(300 * time.Millisecond)
			if !p.answers() {
				t.Fatalf("serve stopped on an ignored SIG%s:\n%s", tc.trap, p.errText())
			}
			p.signal(t, syscall.SIGTERM)
			if code := p.exitCode(t); code != 0 {
				t.Errorf("exit code %d after SIGTERM; stderr:\n%s", code, p.errText())
			}
		})
	}
}

// TestServeListenExitCodes: a --listen that is wrong or unusable is the
// user's input: exit 2 and one line naming the value and what is
// accepted, nothing on stdout.
func TestServeListenExitCodes(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	accepted := "want host:port with a port from 1 to 65535, e.g. 127.0.0.1:9455 (this machine only) or :9455 (every interface); port 0 picks a free one"
	fx, _ := filepath.Abs("../../testdata/snapshots/nvidia-h100-pcie-x2.tar.gz")
	tests := []struct {
		name, listen, want string
	}{
		{"a port above 65535", ":99999", `devctl: invalid --listen ":99999": port "99999" is not a number from 0 to 65535; ` + accepted},
		{"a negative port", ":-1", `devctl: invalid --listen ":-1": port "-1" is not a number from 0 to 65535; ` + accepted},
		{"an empty port", ":", `devctl: invalid --listen ":": the port is empty; ` + accepted},
		{"a service name", "127.0.0.1:http", `devctl: invalid --listen "127.0.0.1:http": port "http" is not a number from 0 to 65535; ` + accepted},
		{"no port at all", "9455", `devctl: invalid --listen "9455": ` + accepted},
		{"a port in use", busy.Addr().String(), `devctl: invalid --listen "` + busy.Addr().String() + `": the address is already in use (another program, or another devctl serve, listens there); want a free port, e.g. :9456`},
		// 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no machine has it.
		{"an address of no interface here", "192.0.2.1:9455", `devctl: invalid --listen "192.0.2.1:9455": no network interface of this machine has that address; want one of its addresses, 127.0.0.1 for this machine only, or no host (:9455) for every interface`},
	}
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir(), "NO_COLOR": "1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			io, _, out, errOut := iostreams.Test()
			code := root.Main([]string{"--from", fx, "serve", "--listen", tc.listen}, io, lookup)
			if code != 2 || errOut.String() != tc.want+"\n" || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr\n%q\nwant exit 2 and\n%q", code, out, errOut, tc.want+"\n")
			}
		})
	}
}
