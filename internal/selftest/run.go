package selftest

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/procgroup"
	"github.com/devctl/devctl/internal/secret"
)

// Script is the Python program every child runs (selftest.py).
//
//go:embed selftest.py
var Script string

// Limits of one child.
const (
	// DefaultTimeout is the whole self-test's time limit (the issue's
	// "about 10 s"): the children run side by side under it.
	DefaultTimeout = 10 * time.Second
	// MaxOutput bounds what a child may print on either stream; past it the
	// child is killed.
	MaxOutput = 1 << 20
	// maxLine bounds one line of output; a longer line is cut.
	maxLine = 64 << 10
	// stderrKeep is how much of standard error's end is kept.
	stderrKeep = 16 << 10
	// reapWait is how long devctl waits for a killed child to be reaped
	// before it reports the process as stuck and moves on.
	reapWait = 500 * time.Millisecond
)

// Options describe one self-test run.
type Options struct {
	// Python is the interpreter to run; PythonSource says how it was chosen.
	Python       string
	PythonSource string
	// Environ is the user's environment; the children get it less the
	// network settings (see ChildEnv).
	Environ []string
	// Timeout is the time limit of the whole self-test (DefaultTimeout when
	// zero).
	Timeout time.Duration
	// MemoryLimit is the address space (RLIMIT_AS) each child limits itself
	// to; zero sets none, and MemoryNote says why.
	MemoryLimit int64
	MemoryNote  string
	// Claims are the precisions the probe says each backend has; the
	// compute operations run in each (fp32 alone when a backend has none).
	Claims map[backend.Backend][]string
	// Frameworks to test (default: Frameworks).
	Frameworks []string
	// NetNS asks for a network namespace per child (Linux); when the
	// kernel refuses one, the children run without and Isolation says so.
	NetNS bool
	// NetNote is why NetNS is off, for the report.
	NetNote string
	// MaxDevices bounds the devices tested per backend (default 8).
	MaxDevices int
	// Dir is the children's working directory (default os.TempDir()), so a
	// torch.py in the user's directory is not imported instead.
	Dir string
}

// Run runs the self-test: one child per framework, side by side, each in a
// process group of its own that is killed when the child ends, fails or
// outlives the time limit. It never returns an error: what went wrong is in
// the report.
func Run(ctx context.Context, o Options) *Outcome {
	start := time.Now()
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if len(o.Frameworks) == 0 {
		o.Frameworks = Frameworks
	}
	if o.MaxDevices <= 0 {
		o.MaxDevices = 8
	}
	rep := &Outcome{Python: o.Python, PythonSource: o.PythonSource, BudgetMS: o.Timeout.Milliseconds(), Frameworks: []Framework{},
		Isolation: Isolation{ProcessGroup: processGroups, TimeLimitMS: o.Timeout.Milliseconds(), Memory: o.MemoryNote, Network: NetworkEnvironment, NetworkNote: o.NetNote}}
	defer func() { rep.DurationMS = time.Since(start).Milliseconds() }()
	if o.Python == "" {
		rep.Status, rep.Detail = Skip, "no Python interpreter found: "+o.PythonSource
		return rep
	}
	if err := checkInterpreter(o.Python); err != nil {
		rep.Status, rep.Detail = Error, err.Error()
		return rep
	}
	cfg, _ := json.Marshal(map[string]any{"claims": claims(o.Claims), "memory_limit": o.MemoryLimit, "max_devices": o.MaxDevices})
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	env := ChildEnv(o.Environ)
	results := make([]child, len(o.Frameworks))
	var wg sync.WaitGroup
	for i, fw := range o.Frameworks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runChild(ctx, o, fw, string(cfg), env)
		}()
	}
	wg.Wait()

	netns, limited, allLimited := o.NetNS, false, true
	var netWhy []string
	for _, r := range results {
		rep.Frameworks = append(rep.Frameworks, r.fw)
		if r.netnsErr != "" {
			netns = false
			netWhy = append(netWhy, r.netnsErr)
		}
		if r.started {
			if r.memLimit != nil {
				limited = true
				rep.Isolation.MemoryLimitBytes = r.memLimit
			} else {
				allLimited = false
			}
		}
		if rep.PythonVersion == "" {
			rep.PythonVersion = r.python
		}
	}
	switch {
	case netns:
		rep.Isolation.Network, rep.Isolation.NetworkNote = NetworkNamespace, "a network namespace of its own (no interface but a down loopback); proxies unset, Hugging Face libraries offline"
	case len(netWhy) > 0:
		rep.Isolation.NetworkNote = "no network namespace: the kernel refused one (" + netWhy[0] + "); proxies unset, Hugging Face libraries offline, sockets still work"
	}
	switch {
	case o.MemoryLimit > 0 && limited && !allLimited:
		rep.Isolation.Memory = "RLIMIT_AS set by the script in some children only"
	case o.MemoryLimit > 0 && limited:
		rep.Isolation.Memory = "RLIMIT_AS (address space), set by the script before it imports anything"
	case o.MemoryLimit > 0:
		rep.Isolation.MemoryLimitBytes = nil
		rep.Isolation.Memory = "the script did not report setting RLIMIT_AS"
	}
	rep.Status = Skip
	var bad []string
	present := 0
	for _, fw := range rep.Frameworks {
		rep.Status = Worst(rep.Status, fw.Status)
		if fw.Present {
			present++
		}
		if fw.Status != Pass && fw.Status != Skip {
			bad = append(bad, fw.Name+": "+fw.Detail)
		}
	}
	switch {
	case len(bad) > 0:
		rep.Detail = strings.Join(bad, "; ")
	case present == 0:
		rep.Detail = fmt.Sprintf("none of %s is installed for %s", strings.Join(o.Frameworks, ", "), o.Python)
	default:
		var ok []string
		for _, fw := range rep.Frameworks {
			if fw.Status == Pass {
				ok = append(ok, fw.Name+" "+fw.Version+": "+fw.Detail)
			}
		}
		rep.Detail = strings.Join(ok, "; ")
	}
	return rep
}

// checkInterpreter says why path cannot be run, or nil.
func checkInterpreter(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("python interpreter %s not found", path)
	case err != nil:
		return fmt.Errorf("python interpreter %s: %w", path, err)
	case st.IsDir():
		return fmt.Errorf("python interpreter %s is a directory", path)
	case st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("python interpreter %s is not executable", path)
	}
	return nil
}

func claims(c map[backend.Backend][]string) map[string][]string {
	out := map[string][]string{}
	for b, ps := range c {
		out[string(b)] = ps
	}
	return out
}

// child is one framework's process, as Run gathers it.
type child struct {
	fw       Framework
	started  bool
	python   string
	memLimit *int64
	netnsErr string
}

// runChild runs the script for one framework and folds its events.
func runChild(ctx context.Context, o Options, fw, cfg string, env []string) child {
	began := time.Now()
	col := newCollector(fw)
	x, netnsErr := spawn(ctx, o, fw, cfg, env, col)
	x.Timeout = o.Timeout.String()
	out := child{started: col.started, python: col.python, memLimit: col.memLimit, netnsErr: netnsErr}
	out.fw = col.Finish(x)
	out.fw.DurationMS = time.Since(began).Milliseconds()
	return out
}

// spawn starts the child (in a network namespace when asked and allowed),
// streams its output into col and ends its process group on every path.
func spawn(ctx context.Context, o Options, fw, cfg string, env []string, col *collector) (ended, string) {
	dir := o.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	var netnsErr string
	attempts := [][]nsMode{{nsNone}}
	if o.NetNS {
		attempts = [][]nsMode{netnsModes(), {nsNone}}
	}
	var cmd *exec.Cmd
	var outR, errR *os.File
	var err error
	for _, modes := range attempts {
		for _, mode := range modes {
			cmd, outR, errR, err = start(o.Python, fw, cfg, env, dir, mode)
			if err == nil || mode == nsNone {
				break
			}
			if netnsErr == "" {
				netnsErr = err.Error()
			}
		}
		if err == nil {
			break
		}
	}
	if err != nil {
		return ended{StartErr: err}, netnsErr
	}

	var mu sync.Mutex
	tooBig := make(chan struct{})
	var bigOnce sync.Once
	over := func() { bigOnce.Do(func() { close(tooBig) }) }
	var stderr tailBuffer
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		readLines(outR, func(line []byte) {
			mu.Lock()
			col.Line(line)
			mu.Unlock()
		}, over)
	}()
	go func() {
		defer readers.Done()
		stderr.drain(errR, over)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	x := ended{Reaped: true}
	var werr error
	select {
	case werr = <-waited:
	case <-ctx.Done():
		x.Killed = killedTimeout
	case <-tooBig:
		x.Killed = killedOutput
	}
	// Every path ends the group: a framework's worker processes (a
	// compile pool, a data loader) must not outlive the child.
	_ = procgroup.Kill(cmd.Process)
	if x.Killed != "" {
		select {
		case werr = <-waited:
		case <-time.After(reapWait):
			x.Reaped = false
		}
	}
	// A grandchild that left the group may still hold the pipes: closing
	// our ends stops the readers whatever happens to it.
	readDone := make(chan struct{})
	go func() { readers.Wait(); close(readDone) }()
	select {
	case <-readDone:
	case <-time.After(reapWait):
	}
	outR.Close()
	errR.Close()
	<-readDone
	if x.Reaped {
		x.Exit, x.Code, x.Signal = exitStatus(cmd.ProcessState, werr)
	}
	x.Stderr = secret.Scrub(stderr.String())
	mu.Lock()
	defer mu.Unlock()
	return x, netnsErr
}

// start starts one child with its output on pipes.
func start(python, fw, cfg string, env []string, dir string, mode nsMode) (*exec.Cmd, *os.File, *os.File, error) {
	cmd := exec.Command(python, "-u", "-c", Script, fw, cfg)
	cmd.Env = env
	cmd.Dir = dir
	cmd.SysProcAttr = sysProcAttr(mode)
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	procgroup.Starting()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, nil, nil, err
	}
	return cmd, outR, errR, nil
}

// readLines calls fn for each line of r (cut at maxLine), and over once
// more than MaxOutput bytes came.
func readLines(r io.Reader, fn func([]byte), over func()) {
	br := bufio.NewReaderSize(r, 64<<10)
	total := 0
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		total += len(chunk)
		if total > MaxOutput {
			over()
			_, _ = io.Copy(io.Discard, br)
			return
		}
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		switch {
		case err == nil:
			fn(bytes.TrimSuffix(line, []byte{'\n'}))
			line = line[:0]
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if len(line) > 0 {
				fn(line)
			}
			return
		}
	}
}

// tailBuffer keeps the last stderrKeep bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) drain(r io.Reader, over func()) {
	b := make([]byte, 32<<10)
	total := 0
	for {
		n, err := r.Read(b)
		total += n
		t.mu.Lock()
		t.buf = append(t.buf, b[:n]...)
		if len(t.buf) > stderrKeep {
			t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrKeep:]...)
		}
		t.mu.Unlock()
		if total > MaxOutput {
			over()
			_, _ = io.Copy(io.Discard, r)
			return
		}
		if err != nil {
			return
		}
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// dropped are the variables a child does not inherit: proxies (the
// self-test needs no network).
var dropped = map[string]bool{
	"http_proxy": true, "https_proxy": true, "ftp_proxy": true, "all_proxy": true,
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "FTP_PROXY": true, "ALL_PROXY": true,
	// The self-test asks what the device runs natively: with the fallback
	// on, an operator MPS lacks would silently run on the CPU.
	"PYTORCH_ENABLE_MPS_FALLBACK": true,
}

// forced are set in every child, whatever the user's environment says.
// Sources: huggingface_hub's environment variables
// (https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables:
// HF_HUB_OFFLINE, "no HTTP calls"), transformers' and datasets' offline
// switches (TRANSFORMERS_OFFLINE, HF_DATASETS_OFFLINE); JAX's GPU memory
// allocation page (https://jax.readthedocs.io/en/latest/gpu_memory_allocation.html:
// XLA_PYTHON_CLIENT_PREALLOCATE=false) and TensorFlow's GPU guide
// (https://www.tensorflow.org/guide/gpu: TF_FORCE_GPU_ALLOW_GROWTH=true),
// so a self-test does not take the GPU memory other processes use.
var forced = [][2]string{
	{"HF_HUB_OFFLINE", "1"},
	{"TRANSFORMERS_OFFLINE", "1"},
	{"HF_DATASETS_OFFLINE", "1"},
	{"XLA_PYTHON_CLIENT_PREALLOCATE", "false"},
	{"TF_FORCE_GPU_ALLOW_GROWTH", "true"},
	{"PYTHONDONTWRITEBYTECODE", "1"},
	{"PYTHONUNBUFFERED", "1"},
}

// ChildEnv is the environment a child runs with: the user's, so the
// frameworks see the same devices and libraries the user's jobs do
// (CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, ...), less proxies and the MPS
// fallback, plus the offline and no-preallocation switches.
func ChildEnv(environ []string) []string {
	out := make([]string, 0, len(environ)+len(forced))
	set := map[string]bool{}
	for _, f := range forced {
		set[f[0]] = true
	}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || dropped[k] || set[k] {
			continue
		}
		out = append(out, kv)
	}
	for _, f := range forced {
		out = append(out, f[0]+"="+f[1])
	}
	sort.Strings(out)
	return out
}
