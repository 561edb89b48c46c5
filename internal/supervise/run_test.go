//go:build unix

package supervise

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/supervise/supervisetest"
)

// The test binary doubles as the child: with SUPERVISE_TEST_CHILD set it
// runs supervisetest.Main instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("SUPERVISE_TEST_CHILD") == "1" {
		os.Exit(supervisetest.Main(os.Args[1:]))
	}
	if os.Getenv("SUPERVISE_TEST_PARENT") == "1" && parentMain != nil {
		os.Exit(parentMain())
	}
	os.Exit(m.Run())
}

// parentMain, where there is one, plays devctl run in a process of its
// own (SUPERVISE_TEST_PARENT=1): the tests of what a parent does to its
// terminal, its signals and its own death need one.
var parentMain func() int

func childSpec(t *testing.T, args ...string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{Path: exe, Args: args, Env: append(os.Environ(), "SUPERVISE_TEST_CHILD=1"), Grace: 2 * time.Second}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"a clean exit is 0", []string{"exit", "0"}, 0},
		{"a failing exit code comes through", []string{"exit", "3"}, 3},
		{"the largest exit code comes through", []string{"exit", "255"}, 255},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), childSpec(t, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tc.want || res.Signal != "" {
				t.Errorf("exit code %d signal %q, want %d", res.ExitCode, res.Signal, tc.want)
			}
		})
	}
}

func TestMissingProgramIsAStartError(t *testing.T) {
	_, err := Run(context.Background(), Spec{Path: filepath.Join(t.TempDir(), "nope")})
	if !errors.Is(err, ErrStart) {
		t.Fatalf("err = %v, want ErrStart", err)
	}
}

// A large binary stream written in uneven chunks comes through byte for
// byte, and the tail keeps exactly its last TailBytes.
func TestPassthroughIsByteIdentical(t *testing.T) {
	const n, seed = 64<<20 + 12345, 42
	var out bytes.Buffer
	s := childSpec(t, "stream", "67121209", "42")
	s.Stdout = &out
	s.TailBytes = 8 << 20
	res, err := Run(context.Background(), s)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, err %v", res.ExitCode, err)
	}
	want := supervisetest.Expected(n, seed)
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("passthrough differs: got %d bytes, want %d", out.Len(), len(want))
	}
	if !bytes.HasSuffix(want, res.Tail) || len(res.Tail) < (8<<20-copyBuf)/2 || len(res.Tail) > 8<<20 || !res.TailTruncated {
		t.Errorf("tail: %d bytes, truncated %v; want the last 3.5 to 8 MiB, truncated", len(res.Tail), res.TailTruncated)
	}
}

// started is a child running under Run that has printed its first line.
type started struct {
	signals chan os.Signal
	rest    chan string // the output after the first line, once Run returns
	done    chan Result
}

// start runs spec under Run with a signal channel and waits for the
// child's first line, "ready": output is passed on as it arrives, while
// the child is still running.
func start(t *testing.T, ctx context.Context, s Spec) *started {
	t.Helper()
	pr, pw := io.Pipe()
	s.Stdout = pw
	st := &started{signals: make(chan os.Signal, 2), rest: make(chan string, 1), done: make(chan Result, 1)}
	s.Signals = st.signals
	go func() {
		res, err := Run(ctx, s)
		if err != nil {
			t.Error(err)
		}
		pw.Close()
		st.done <- res
	}()
	br := bufio.NewReader(pr)
	line, err := br.ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	go func() { b, _ := io.ReadAll(br); st.rest <- string(b) }()
	return st
}

func (st *started) wait(t *testing.T, limit time.Duration) Result {
	t.Helper()
	select {
	case res := <-st.done:
		return res
	case <-time.After(limit):
		t.Fatalf("the child was still running after %v", limit)
		return Result{}
	}
}

// Output is passed on as it arrives, half a line included: nothing waits
// for a newline or a full buffer while the child keeps running.
func TestPassthroughIsTimely(t *testing.T) {
	for _, kind := range []string{"an io.Writer (copied)", "an os pipe (tee)"} {
		t.Run(kind, func(t *testing.T) {
			var r io.Reader
			var w io.WriteCloser
			if strings.Contains(kind, "tee") {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				r, w = pr, pw
			} else {
				r, w = io.Pipe()
			}
			s := childSpec(t, "prompt")
			s.Stdout = w
			sig := make(chan os.Signal, 1)
			s.Signals = sig
			done := make(chan Result, 1)
			go func() { res, _ := Run(context.Background(), s); w.Close(); done <- res }()
			got := make(chan string, 1)
			go func() { b := make([]byte, len("half a line")); io.ReadFull(r, b); got <- string(b) }()
			select {
			case g := <-got:
				if g != "half a line" {
					t.Errorf("got %q", g)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("half a line was held back while the child ran")
			}
			sig <- syscall.SIGTERM
			go io.Copy(io.Discard, r)
			if res := <-done; res.ExitCode != 7 {
				t.Errorf("exit %d, want 7", res.ExitCode)
			}
		})
	}
}

func TestSignalsAreForwardedToTheGroup(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			st := start(t, context.Background(), childSpec(t, "trap"))
			st.signals <- sig
			res := st.wait(t, 10*time.Second)
			if got := strings.TrimSpace(<-st.rest); got != "got "+sig.String() {
				t.Errorf("child saw %q, want %q", got, "got "+sig.String())
			}
			if res.ExitCode != 7 || !res.Interrupted || res.Killed {
				t.Errorf("result %+v, want exit 7, interrupted, not killed", res)
			}
		})
	}
}

// A child that ignores SIGTERM is killed when the grace period ends, and
// reported as killed by SIGKILL (137).
func TestGracePeriodKill(t *testing.T) {
	s := childSpec(t, "ignore")
	s.Grace = 300 * time.Millisecond
	st := start(t, context.Background(), s)
	sent := time.Now()
	st.signals <- syscall.SIGTERM
	res := st.wait(t, 10*time.Second)
	waited := time.Since(sent)
	if res.ExitCode != 128+int(syscall.SIGKILL) || res.Signal != "SIGKILL" || !res.Killed {
		t.Errorf("result %+v, want 137 SIGKILL killed", res)
	}
	if waited < 300*time.Millisecond || waited > 5*time.Second {
		t.Errorf("killed after %v, want just after the 300ms grace", waited)
	}
}

// A second interrupt kills at once, without waiting for the grace period.
func TestSecondInterruptKills(t *testing.T) {
	s := childSpec(t, "ignore")
	s.Grace = time.Minute
	st := start(t, context.Background(), s)
	st.signals <- os.Interrupt
	st.signals <- os.Interrupt
	if res := st.wait(t, 10*time.Second); res.ExitCode != 137 || !res.Killed {
		t.Errorf("result %+v, want 137 killed", res)
	}
}

// When the leader exits, what it left in its group is ended too (it would
// hold the device into the next attempt) and nothing is left behind.
func TestLeftoversOfTheGroupAreEnded(t *testing.T) {
	var out bytes.Buffer
	s := childSpec(t, "group")
	s.Stdout = &out
	s.Grace = 200 * time.Millisecond
	s.Subreaper = true
	begin := time.Now()
	res, err := Run(context.Background(), s)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, err %v", res.ExitCode, err)
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("took %v: the grandchild was not ended", d)
	}
	pid := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if _, err := fmt.Sscanf(l, "ready %d", &pid); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("no grandchild pid in %q", out.String())
	}
	// Ended and reaped by Run itself (the test process is the subreaper):
	// not even a zombie is left when Run returns.
	if err := syscall.Kill(pid, 0); err == nil && runtime.GOOS == "linux" {
		t.Errorf("grandchild %d still exists (a zombie?) after Run returned", pid)
	}
}

func TestContextCancelEndsTheChild(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := start(t, ctx, childSpec(t, "trap"))
	cancel()
	if res := st.wait(t, 10*time.Second); res.ExitCode != 7 || !res.Interrupted {
		t.Errorf("result %+v, want exit 7 after SIGTERM", res)
	}
}

// When devctl's own stdout goes away (`devctl run -- yes | head -1`), the
// child sees a broken pipe instead of running forever.
func TestClosedOutputStopsTheChild(t *testing.T) {
	s := childSpec(t, "stream", "1000000000000", "1")
	s.Stdout = failAfter{n: 1 << 20}
	done := make(chan Result, 1)
	go func() { res, _ := Run(context.Background(), s); done <- res }()
	select {
	case res := <-done:
		if res.ExitCode == 0 {
			t.Errorf("exit 0 after the output closed, want a failure")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("child kept running after its output closed")
	}
}

type failAfter struct{ n int }

var errClosed = errors.New("closed")

func (f failAfter) Write(p []byte) (int, error) { return 0, errClosed }

// Whatever the sizes of the writes, the tail is the end of the output, at
// most max bytes and at least (max-bufLen)/2 once that much was written.
func TestTailKeepsTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name        string
		max, bufLen int
		writes      []int
	}{
		{"short output is kept whole", 64, 16, []int{3, 5}},
		{"large reads are kept as they are", 64, 16, []int{16, 16, 16, 16, 16, 16, 9}},
		{"small reads are packed", 64, 16, []int{1, 2, 3, 1, 7, 2, 1, 1, 5, 3, 9, 1, 1, 1, 4, 2, 2, 2, 8, 1, 3, 3, 3, 3, 3, 3}},
		{"a mix of sizes wraps many times", 40, 8, []int{8, 1, 8, 3, 8, 8, 2, 2, 7, 8, 1, 1, 1, 8, 8, 8, 5, 8, 8, 4, 8, 8, 8, 8, 1}},
		{"a ring smaller than one buffer keeps its end", 5, 16, []int{16, 12, 3}},
		{"no tail keeps nothing", -1, 16, []int{16, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTail(tc.max, tc.bufLen)
			var all []byte
			next := byte(0)
			buf := tl.buffer()
			for _, n := range tc.writes {
				for i := 0; i < n; i++ {
					buf[i] = next
					next++
				}
				all = append(all, buf[:n]...)
				buf = tl.keep(buf[:n])
			}
			got, trunc := tl.Bytes()
			if !bytes.HasSuffix(all, got) {
				t.Fatalf("tail %v is not the end of %v", got, all)
			}
			lo := max(0, min(len(all), (tc.max-tc.bufLen)/2))
			if len(got) < lo || (tc.max >= 0 && len(got) > tc.max) {
				t.Errorf("tail of %d bytes, want %d to %d", len(got), lo, tc.max)
			}
			if trunc != (len(got) < len(all)) {
				t.Errorf("truncated %v with %d of %d bytes", trunc, len(got), len(all))
			}
		})
	}
}

// When devctl's stdout is a pipe, the stream goes through tee(2) (Linux)
// and still arrives byte for byte, with the tail kept.
func TestPassthroughIntoAPipeIsByteIdentical(t *testing.T) {
	const n, seed = 48<<20 + 999, 5
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(pr); got <- b }()
	s := childSpec(t, "stream", fmt.Sprint(int64(n)), fmt.Sprint(seed))
	s.Stdout = pw
	res, err := Run(context.Background(), s)
	pw.Close()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, err %v", res.ExitCode, err)
	}
	want := supervisetest.Expected(n, seed)
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("passthrough differs: got %d bytes, want %d", len(b), len(want))
	}
	if !bytes.HasSuffix(want, res.Tail) || len(res.Tail) < (DefaultTailBytes-copyBuf)/2 {
		t.Errorf("tail of %d bytes is not the stream's end", len(res.Tail))
	}
}

// A reader that goes away stops the child through the pipe too.
func TestClosedPipeStopsTheChild(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := childSpec(t, "stream", "1000000000000", "1")
	s.Stdout = pw
	done := make(chan Result, 1)
	go func() { res, _ := Run(context.Background(), s); done <- res }()
	io.CopyN(io.Discard, pr, 4<<20)
	pr.Close()
	select {
	case res := <-done:
		if res.ExitCode == 0 {
			t.Errorf("exit 0 after the reader went away, want a failure")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("child kept running after its reader went away")
	}
	pw.Close()
}
