// Package supervisetest is the child program the supervise and CLI tests
// run for real: a test binary re-executes itself into Main (see
// supervise's TestMain and cmd/devctl's testscript commands).
//
// Modes (the first argument):
//
//	stream N SEED          write N pseudo-random bytes to stdout in uneven chunks
//	exit N                 exit with status N
//	stderr TEXT            write TEXT and a newline to stderr, exit 0
//	stderr-exit TEXT N     write TEXT and a newline to stderr, exit N
//	trap                   print "ready", then on SIGINT/SIGTERM/SIGHUP/SIGQUIT print
//	                       the signal's name and exit 7
//	prompt                 write "half a line" (no newline), then exit 7 on a signal
//	ignore                 print "ready", ignore SIGINT/SIGTERM/SIGHUP, sleep 1 minute
//	group                  start a grandchild that sleeps in the same process
//	                       group, print "ready" and exit 0
//	fail-unless LOG COND…  when every COND holds, print "ok" and exit 0;
//	                       otherwise write the file LOG to stderr and exit 1.
//	                       COND is NAME=VALUE (equal), NAME<=N (a number at
//	                       most N) or NAME~TEXT (contains TEXT)
//	printenv NAME…         print NAME=VALUE for each NAME that is set
//	stderr-raw TEXT        write TEXT to stderr as it is (no newline), exit 0
//	touch FILE             create FILE, exit 0
//	orphans N              run N times `sh -c 'true &'`: the shell exits
//	                       without waiting for true, so N orphans die while
//	                       this one runs; print "ready" and exit 7 on a signal
//	setsid                 start a process in a new session that starts a
//	                       child of its own, both ignoring termination
//	                       signals; print "ready PID PID" and exit 0
//	keeper                 (setsid's) start "ignore", print "ready PID PID"
//	                       with both pids, ignore signals, sleep a minute
//	sleep                  print "ready PID", sleep a minute
//	read-line              print "reading", read a line from stdin, print
//	                       "got LINE", exit 0 (3 at end of input)
//	raw                    put the stdin terminal in raw mode (no echo),
//	                       print "raw", sleep a minute
//	stop-self SIG          print "ready PID", stop itself with SIG (STOP,
//	                       TSTP), print "resumed" when continued, exit 0
//	fg-check               print "foreground yes" when its process group
//	                       holds the stdin terminal's foreground (Linux)
package supervisetest

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

// Main runs one mode and returns the exit status.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "testchild: no mode")
		return 2
	}
	switch args[0] {
	case "stream":
		n, _ := strconv.ParseInt(arg(args, 1), 10, 64)
		seed, _ := strconv.ParseUint(arg(args, 2), 10, 64)
		return stream(os.Stdout, n, seed)
	case "exit":
		n, _ := strconv.Atoi(arg(args, 1))
		return n
	case "stderr":
		fmt.Fprintln(os.Stderr, arg(args, 1))
		return 0
	case "stderr-exit":
		fmt.Fprintln(os.Stderr, arg(args, 1))
		n, _ := strconv.Atoi(arg(args, 2))
		return n
	case "trap":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
		fmt.Println("ready")
		select {
		case s := <-c:
			fmt.Println("got", s.(syscall.Signal).String())
			return 7
		case <-time.After(time.Minute):
			return 3
		}
	case "prompt":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		os.Stdout.WriteString("half a line")
		select {
		case <-c:
			return 7
		case <-time.After(time.Minute):
			return 3
		}
	case "ignore":
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return 0
	case "group":
		// The grandchild ignores termination signals before the leader
		// exits, and holds the leader's stdout (as its stderr).
		// Started as this program was (argv[0] and the arguments before
		// the mode), so it works under every harness that runs Main.
		cmd := exec.Command(os.Args[0], append(os.Args[1:len(os.Args)-len(args)], "ignore")...)
		cmd.Env = os.Environ()
		cmd.Stderr = os.Stdout
		out, err := cmd.StdoutPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "ready\n" {
			fmt.Fprintf(os.Stderr, "grandchild said %q\n", line)
			return 1
		}
		fmt.Printf("ready %d\n", cmd.Process.Pid)
		return 0
	case "fail-unless":
		for _, c := range args[2:] {
			if !holds(c) {
				data, err := os.ReadFile(arg(args, 1))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 2
				}
				os.Stderr.Write(data)
				return 1
			}
		}
		fmt.Println("ok")
		return 0
	case "stderr-raw":
		os.Stderr.WriteString(arg(args, 1))
		return 0
	case "touch":
		if err := os.WriteFile(arg(args, 1), nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "orphans":
		n, _ := strconv.Atoi(arg(args, 1))
		for i := 0; i < n; i++ {
			if err := exec.Command("sh", "-c", "true &").Run(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return waitSignal()
	case "setsid":
		cmd := self(args, "keeper")
		cmd.SysProcAttr = newSession()
		return relayReady(cmd)
	case "keeper":
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		leaf := self(args, "ignore")
		out, err := leaf.StdoutPipe()
		if err == nil {
			err = leaf.Start()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			fmt.Fprintf(os.Stderr, "leaf said %q\n", line)
			return 1
		}
		fmt.Printf("ready %d %d\n", os.Getpid(), leaf.Process.Pid)
		time.Sleep(time.Minute)
		return 0
	case "sleep":
		fmt.Printf("ready %d\n", os.Getpid())
		time.Sleep(time.Minute)
		return 0
	case "read-line":
		fmt.Println("reading")
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil {
			return 3
		}
		fmt.Printf("got %s\n", strings.TrimRight(line, "\r\n"))
		return 0
	case "raw":
		if _, err := term.MakeRaw(int(os.Stdin.Fd())); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Print("raw\r\n")
		time.Sleep(time.Minute)
		return 0
	case "printenv":
		for _, k := range args[1:] {
			if v, ok := os.LookupEnv(k); ok {
				fmt.Printf("%s=%s\n", k, v)
			}
		}
		return 0
	}
	if code, ok := unixMode(args); ok {
		return code
	}
	fmt.Fprintf(os.Stderr, "testchild: unknown mode %q\n", args[0])
	return 2
}

// self is this program started in another mode, the way it was started
// itself (argv[0] and the arguments before the mode), so it works under
// every harness that runs Main. Its stderr is this one's.
func self(args []string, mode ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append(os.Args[1:len(os.Args)-len(args):len(os.Args)-len(args)], mode...)...)
	cmd.Env = os.Environ()
	cmd.Stderr = os.Stderr
	return cmd
}

// relayReady starts cmd, passes on its "ready ..." line and exits 0
// without waiting for it.
func relayReady(cmd *exec.Cmd) int {
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "ready ") {
		fmt.Fprintf(os.Stderr, "%s said %q\n", cmd.Args[len(cmd.Args)-1], line)
		return 1
	}
	fmt.Print(line)
	return 0
}

// waitSignal prints "ready" and exits 7 on SIGINT, SIGTERM or SIGHUP.
func waitSignal() int {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	fmt.Println("ready")
	select {
	case <-c:
		return 7
	case <-time.After(time.Minute):
		return 3
	}
}

func arg(args []string, i int) string {
	if i < len(args) {
		return args[i]
	}
	return ""
}

func holds(cond string) bool {
	if k, v, ok := strings.Cut(cond, "<="); ok {
		cur, err1 := strconv.Atoi(os.Getenv(k))
		lim, err2 := strconv.Atoi(v)
		return err1 == nil && err2 == nil && cur <= lim
	}
	if k, v, ok := strings.Cut(cond, "~"); ok {
		return strings.Contains(os.Getenv(k), v)
	}
	k, v, _ := strings.Cut(cond, "=")
	got, ok := os.LookupEnv(k)
	return ok && got == v
}

// Stream writes the same n bytes for the same seed, in chunks of 1 byte to
// 300 KiB, so a test can compare what came through with Expected.
func stream(w io.Writer, n int64, seed uint64) int {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	chunk := make([]byte, 300<<10)
	for n > 0 {
		k := int64(1 + r.IntN(len(chunk)))
		k = min(k, n)
		fill(chunk[:k], r)
		if _, err := w.Write(chunk[:k]); err != nil {
			return 1
		}
		n -= k
	}
	return 0
}

func fill(b []byte, r *rand.Rand) {
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		b[i] = byte(r.Uint64())
	}
}

// Expected returns what `stream n seed` writes.
func Expected(n int64, seed uint64) []byte {
	var b strings.Builder
	b.Grow(int(n))
	stream(&b, n, seed)
	return []byte(b.String())
}
