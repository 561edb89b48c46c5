//go:build unix

package run_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/supervise/supervisetest"
)

// The test binary is devctl and the child program too: "-testchild MODE"
// runs supervisetest.Main, DEVCTL_RUN_TEST_MAIN=1 runs devctl. Every test
// here starts real processes.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-testchild" {
		os.Exit(supervisetest.Main(os.Args[2:]))
	}
	if os.Getenv("DEVCTL_RUN_TEST_MAIN") == "1" {
		os.Exit(root.Main(os.Args[1:], iostreams.System(), os.LookupEnv))
	}
	os.Exit(m.Run())
}

// fixtureHost is a real machine's tree (testdata/hosts), for the tests
// that need no history: a --sysroot run is another machine and records
// nothing. The others run on this machine's CPU (--device cpu, so a GPU
// on the test machine changes nothing).
var fixtureHost = filepath.Join("..", "..", "..", "testdata", "hosts", "x86-sapphire-rapids")

func logFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// devctl returns an unstarted `devctl run ... -- testchild CHILD...`.
func devctl(t *testing.T, state string, runFlags []string, child ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"run", "--device", "cpu"}, runFlags...)
	args = append(args, "--", exe, "-testchild")
	args = append(args, child...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "DEVCTL_RUN_TEST_MAIN=1", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state, "NO_COLOR=1")
	return cmd
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func loadHistory(t *testing.T, state string) history.Records {
	t.Helper()
	rs, err := history.LoadFile(filepath.Join(state, "devctl", history.FileName))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestExitCodesComeThrough(t *testing.T) {
	for _, code := range []int{0, 1, 3, 42, 255} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			cmd := devctl(t, t.TempDir(), nil, "exit", fmt.Sprint(code))
			if got := exitCode(cmd.Run()); got != code {
				t.Errorf("devctl run exited %d, want the child's %d", got, code)
			}
		})
	}
}

// 100 MB of binary data in uneven chunks come through devctl byte for byte.
func TestPassthroughThroughDevctl(t *testing.T) {
	const n, seed = 100<<20 + 7, 9
	cmd := devctl(t, t.TempDir(), nil, "stream", fmt.Sprint(n), fmt.Sprint(seed))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if !bytes.Equal(out.Bytes(), supervisetest.Expected(n, seed)) {
		t.Fatalf("stdout differs from what the child wrote (%d bytes, want %d)", out.Len(), n)
	}
	if errb.Len() != 0 {
		t.Errorf("devctl wrote on stderr: %q", errb.String())
	}
}

// startReady starts devctl with the child's stdout piped and waits for the
// child's "ready".
func startReady(t *testing.T, cmd *exec.Cmd) (rest func() string) {
	t.Helper()
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(pr)
	if l, err := br.ReadString('\n'); l != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("first line %q, %v", l, err)
	}
	return func() string { b, _ := io.ReadAll(br); return string(b) }
}

// A signal sent to devctl reaches the child's process group; devctl exits
// with the child's code and records the attempt as interrupted.
func TestSignalsAreForwardedThroughDevctl(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			state := t.TempDir()
			cmd := devctl(t, state, []string{"--retries", "3"}, "trap")
			rest := startReady(t, cmd)
			cmd.Process.Signal(sig)
			out := rest()
			err := cmd.Wait()
			if got := strings.TrimSpace(out); got != "got "+sig.String() {
				t.Errorf("child printed %q, want %q", got, "got "+sig.String())
			}
			if code := exitCode(err); code != 7 {
				t.Errorf("devctl exited %d, want the child's 7", code)
			}
			rs := loadHistory(t, state)
			if len(rs) != 1 || rs[0].Outcome != history.Interrupted {
				t.Errorf("history %+v, want one interrupted attempt", rs)
			}
		})
	}
}

// A child that ignores SIGTERM is killed after --grace: exit 137.
func TestGracePeriodKillThroughDevctl(t *testing.T) {
	cmd := devctl(t, t.TempDir(), []string{"--grace", "300ms"}, "ignore")
	rest := startReady(t, cmd)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	rest()
	err := cmd.Wait()
	took := time.Since(sent)
	if code := exitCode(err); code != 137 {
		t.Errorf("devctl exited %d, want 137 (SIGKILL)", code)
	}
	if took < 300*time.Millisecond || took > 10*time.Second {
		t.Errorf("the child ended %v after SIGTERM, want just after the 300ms grace", took)
	}
}

// A second Ctrl-C kills at once, long before the grace period ends.
func TestSecondInterruptKillsThroughDevctl(t *testing.T) {
	cmd := devctl(t, t.TempDir(), []string{"--grace", "1m"}, "ignore")
	rest := startReady(t, cmd)
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(50 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { rest(); done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 137 {
			t.Errorf("devctl exited %d, want 137", code)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("a second SIGINT did not kill the child")
	}
}

// Concurrent runs, each failing once with a real OOM log and recovering,
// write one history with every attempt of every run.
func TestConcurrentRunsWriteOneHistory(t *testing.T) {
	const runs = 20
	state := t.TempDir()
	oom := logFile(t, "out_of_memory/001-zero-dce-test.log")
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := 0; i < runs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := devctl(t, state, []string{"--batch-env", "BATCH_SIZE=2"}, "fail-unless", oom, "BATCH_SIZE<=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rs := loadHistory(t, state)
	byRun := map[string][]history.Record{}
	for _, r := range rs {
		byRun[r.Run] = append(byRun[r.Run], r)
	}
	if len(rs) != 2*runs || len(byRun) != runs {
		t.Fatalf("%d records of %d runs, want %d of %d", len(rs), len(byRun), 2*runs, runs)
	}
	for id, as := range byRun {
		if as[0].Attempt != 1 || as[0].Outcome != history.Failure || as[0].Category != "out_of_memory" ||
			as[1].Attempt != 2 || as[1].Outcome != history.Success || as[1].Step != "halve_batch" {
			t.Errorf("run %s: %+v", id, as)
		}
	}
	if v := rs.Judge("cpu"); v.PassOver || v.Runs != 5 || v.Successes != 5 {
		t.Errorf("recovered runs judged %+v, want 5 of 5 successes", v)
	}
}

// --report writes the attempts as JSON; nothing of the output, the
// arguments or the inherited environment goes in it.
func TestReportFile(t *testing.T) {
	state := t.TempDir()
	rep := filepath.Join(state, "report.json")
	oom := logFile(t, "out_of_memory/001-zero-dce-test.log")
	cmd := devctl(t, state, []string{"--report", rep, "--batch-env", "BATCH_SIZE=2"}, "fail-unless", oom, "BATCH_SIZE<=1", "SECRET_ARG=hunter2")
	cmd.Env = append(cmd.Env, "SECRET_ARG=hunter2")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	data, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Outcome   string `json:"outcome"`
		Recovered bool   `json:"recovered"`
		Attempts  []struct {
			Step     string `json:"step"`
			Category string `json:"category"`
		} `json:"attempts"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Outcome != "success" || !r.Recovered || len(r.Attempts) != 2 || r.Attempts[0].Category != "out_of_memory" || r.Attempts[1].Step != "halve_batch" {
		t.Errorf("report %s", data)
	}
	for _, secret := range []string{"hunter2", "SECRET_ARG", "zero-dce"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the report holds %q", secret)
		}
		h, _ := os.ReadFile(filepath.Join(state, "devctl", history.FileName))
		if bytes.Contains(h, []byte(secret)) {
			t.Errorf("the history holds %q", secret)
		}
	}
}

// `devctl run -- producer | head`: when the reader goes away, the child
// gets the broken pipe and devctl still records the attempt and exits.
func TestReaderGoneStopsTheChildThroughDevctl(t *testing.T) {
	state := t.TempDir()
	cmd := devctl(t, state, nil, "stream", "1000000000000", "3")
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.CopyN(io.Discard, pr, 8<<20)
	pr.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code == 0 {
			t.Errorf("devctl exited 0, want the child's failure")
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("devctl kept running after its reader went away")
	}
	if rs := loadHistory(t, state); len(rs) != 1 {
		t.Errorf("history %+v, want the one attempt", rs)
	}
}

// Ctrl-C while devctl still probes (an nvidia-smi that hangs) cancels the
// probe, starts nothing, records nothing and exits 130.
func TestInterruptBeforeTheJobStartsStartsNothing(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "started")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "--", "sh", "-c", "touch "+marker)
	cmd.Env = append(os.Environ(), "DEVCTL_RUN_TEST_MAIN=1", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state, "PATH="+dir+":"+os.Getenv("PATH"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the probe is waiting for nvidia-smi
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if code := exitCode(err); code != 130 {
			t.Errorf("devctl exited %d, want 130: %s", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("devctl kept probing after Ctrl-C")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the job started after Ctrl-C")
	}
	if !strings.Contains(errb.String(), "before the job started; nothing was started") {
		t.Errorf("stderr %q", errb.String())
	}
	if _, err := os.Stat(filepath.Join(state, "devctl", history.FileName)); err == nil {
		t.Error("an interrupted start was recorded")
	}
}

// A program that is not there exits 127 (a name not in PATH, a path to
// nothing); one that cannot be executed 126; as bash.
func TestMissingProgramsExitAsAShellDoes(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("not a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prog string
		code int
	}{{"devctl-no-such-program", 127}, {"./devctl-nope", 127}, {filepath.Join(dir, "none"), 127}, {plain, 126}, {dir, 126}} {
		cmd := exec.Command(exe, "run", "--device", "cpu", "--", tc.prog)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DEVCTL_RUN_TEST_MAIN=1", "XDG_STATE_HOME="+dir, "XDG_CONFIG_HOME="+dir)
		if code := exitCode(cmd.Run()); code != tc.code {
			t.Errorf("devctl run -- %s exited %d, want %d", tc.prog, code, tc.code)
		}
	}
}

// A replay (--sysroot, --from) is another machine: a run there records
// nothing in this machine's history.
func TestReplaysNeverWriteTheHistory(t *testing.T) {
	state := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "snapshots", "nvidia-h100-pcie-x2.tar.gz"))
	for _, args := range [][]string{{"run", "--sysroot", fixtureHost}, {"--from", snap, "run"}} {
		cmd := exec.Command(exe, append(args, "--", exe, "-testchild", "exit", "0")...)
		cmd.Env = append(os.Environ(), "DEVCTL_RUN_TEST_MAIN=1", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "devctl", history.FileName)); err == nil {
		t.Error("a replay wrote this machine's history")
	}
}
