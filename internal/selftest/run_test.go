//go:build unix

package selftest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/explain"
)

// fake writes a shell script that stands in for python. It is called as
// `fake -u -c <script> <framework> <config>`, so $4 is the framework; body
// decides per framework. ev prints one event line.
func fake(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python3")
	script := "#!/bin/sh\nfw=\"$4\"\nev() { printf '%s%s\\n' '" + Marker + "' \"$1\"; }\n" + body + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// absentOthers makes jax and tensorflow report "not installed".
const absentOthers = `if [ "$fw" != torch ]; then ev '{"ev":"start","framework":"'$fw'","python":"3.12.1"}'; ev '{"ev":"absent","framework":"'$fw'"}'; ev '{"ev":"done","framework":"'$fw'"}'; exit 0; fi
ev '{"ev":"start","framework":"torch","python":"3.12.1"}'
`

// importedCUDA are the events of a torch that imported and listed a GPU.
const importedCUDA = `ev '{"ev":"import_begin","framework":"torch"}'
ev '{"ev":"import_ms","framework":"torch","ms":812.5}'
ev '{"ev":"import","framework":"torch","version":"2.4.1+cu121"}'
ev '{"ev":"device","framework":"torch","device":"cuda:0","backend":"cuda","name":"Tesla T4","precisions":["fp32","fp16"]}'
`

func opts(python string, timeout time.Duration) Options {
	return Options{Python: python, PythonSource: "--python", Environ: []string{"PATH=/usr/bin:/bin"}, Timeout: timeout,
		Claims: map[backend.Backend][]string{backend.CUDA: {"fp32", "fp16"}}}
}

func torchOf(t *testing.T, r *Outcome) Framework {
	t.Helper()
	for _, fw := range r.Frameworks {
		if fw.Name == "torch" {
			return fw
		}
	}
	t.Fatalf("no torch in %+v", r)
	return Framework{}
}

func TestRunFaults(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		timeout    time.Duration
		status     Status
		torch      Status
		detail     string // substring of torch's detail (or the report's when there is no torch)
		exit       string // substring of torch's exit
		unfinished string // "device op precision" left unfinished, if any
		category   explain.Category
	}{
		{name: "a torch whose every operation passes reports pass and jax/tensorflow as not installed",
			body: absentOthers + importedCUDA + `for op in allocate copy_h2d copy_d2h; do ev '{"ev":"op_begin","device":"cuda:0","op":"'$op'","precision":"fp32"}'; ev '{"ev":"op","device":"cuda:0","op":"'$op'","precision":"fp32","ok":true,"ms":0.4}'; done
ev '{"ev":"done","framework":"torch"}'`,
			timeout: 5 * time.Second, status: Pass, torch: Pass, detail: "3 operations on 1 device(s) passed", exit: "exit 0"},
		{name: "an out-of-memory error in one operation is a failure classified out_of_memory",
			body: absentOthers + importedCUDA + `ev '{"ev":"op_begin","device":"cuda:0","op":"matmul","precision":"fp16"}'
ev '{"ev":"op","device":"cuda:0","op":"matmul","precision":"fp16","ok":false,"ms":3.2,"error":"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 14.75 GiB total capacity; 14.61 GiB already allocated; 3.06 MiB free)"}'
ev '{"ev":"done","framework":"torch"}'`,
			timeout: 5 * time.Second, status: Fail, torch: Fail, detail: "1 of 1 operations failed: cuda:0 matmul fp16 (out_of_memory)", exit: "exit 0", category: explain.CategoryOutOfMemory},
		{name: "a claimed reduced precision without kernels is a warning, not a failure",
			body: absentOthers + `ev '{"ev":"import_begin","framework":"torch"}'
ev '{"ev":"import_ms","framework":"torch","ms":900}'
ev '{"ev":"device","framework":"torch","device":"cpu","backend":"cpu","name":"CPU","precisions":["fp32","fp16"]}'
ev '{"ev":"op","device":"cpu","op":"matmul","precision":"fp32","ok":true,"ms":5}'
ev '{"ev":"op","device":"cpu","op":"matmul","precision":"fp16","ok":false,"ms":0.2,"error":"RuntimeError: \"addmm_impl_cpu_\" not implemented for '"'"'Half'"'"'"}'
ev '{"ev":"done","framework":"torch"}'`,
			timeout: 5 * time.Second, status: Warn, torch: Warn, detail: "the probe claims cpu fp16, but 1 of 2 operations failed in it", exit: "exit 0", category: ""},
		{name: "an import that hangs is cut at the time limit and the other frameworks still report",
			body:    absentOthers + `ev '{"ev":"import_begin","framework":"torch"}'` + "\nexec sleep 60",
			timeout: 1500 * time.Millisecond, status: Timeout, torch: Timeout, detail: "import torch did not finish", exit: "killed at the time limit"},
		{name: "an import that fails names the error",
			body: absentOthers + `ev '{"ev":"import_begin","framework":"torch"}'
ev '{"ev":"import_error","framework":"torch","ms":40,"error":"ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"}'
ev '{"ev":"done","framework":"torch"}'`,
			timeout: 5 * time.Second, status: Fail, torch: Fail, detail: "import torch failed", exit: "exit 0"},
		{name: "a crash (segfault) during an operation blames that operation",
			body: absentOthers + importedCUDA + `ev '{"ev":"op_begin","device":"cuda:0","op":"conv1d","precision":"fp16"}'
echo "Fatal Python error: Segmentation fault" >&2
kill -SEGV $$`,
			timeout: 5 * time.Second, status: Fail, torch: Fail, detail: "cuda:0 conv1d fp16 did not finish: signal SIGSEGV", exit: "signal SIGSEGV", unfinished: "cuda:0 conv1d fp16"},
		{name: "a process killed by SIGKILL it did not get from devctl points at the OOM killer",
			body:    absentOthers + importedCUDA + `ev '{"ev":"op_begin","device":"cuda:0","op":"allocate","precision":"fp32"}'` + "\nkill -KILL $$",
			timeout: 5 * time.Second, status: Fail, torch: Fail, detail: "cuda:0 allocate fp32 did not finish", exit: "OOM killer", unfinished: "cuda:0 allocate fp32"},
		{name: "a device that wedges is cut at the time limit, its helper process too",
			body: absentOthers + importedCUDA + `ev '{"ev":"op_begin","device":"cuda:0","op":"matmul","precision":"fp16"}'
sleep 300 &
echo $! > "$(dirname "$0")/grandchild.pid"
sleep 300`,
			timeout: 1500 * time.Millisecond, status: Timeout, torch: Timeout, detail: "the device may be wedged", exit: "killed at the time limit", unfinished: "cuda:0 matmul fp16"},
		{name: "garbage output is not mistaken for results",
			body:    `echo "this is not python"; echo "@@devctl-selftest@@ {not json"; exit 0`,
			timeout: 5 * time.Second, status: Error, torch: Error, detail: "did not run devctl's script", exit: "exit 0"},
		{name: "a program that exits at once with an error is reported with its exit",
			body:    `echo "python3: can't open file" >&2; exit 2`,
			timeout: 5 * time.Second, status: Error, torch: Error, detail: "did not run devctl's script: exit 2", exit: "exit 2"},
		{name: "huge output is cut off and the child killed",
			body:    absentOthers + "exec yes",
			timeout: 10 * time.Second, status: Error, torch: Error, detail: "killed: output over 1 MiB", exit: "output over 1 MiB"},
		{name: "a flood on standard error is cut off too",
			body:    absentOthers + "yes >&2",
			timeout: 10 * time.Second, status: Error, torch: Error, detail: "killed: output over 1 MiB", exit: "output over 1 MiB"},
		{name: "stopping between operations without a word is a failure",
			body:    absentOthers + importedCUDA + "exit 3",
			timeout: 5 * time.Second, status: Fail, torch: Fail, detail: "stopped between operations: exit 3", exit: "exit 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			py := fake(t, tt.body)
			began := time.Now()
			r := Run(context.Background(), opts(py, tt.timeout))
			took := time.Since(began)
			if took > tt.timeout+2*time.Second {
				t.Errorf("Run took %s with a %s limit", took, tt.timeout)
			}
			fw := torchOf(t, r)
			if r.Status != tt.status || fw.Status != tt.torch {
				t.Errorf("status %s, torch %s (%s); want %s, %s", r.Status, fw.Status, fw.Detail, tt.status, tt.torch)
			}
			if !strings.Contains(fw.Detail, tt.detail) {
				t.Errorf("torch detail %q does not say %q", fw.Detail, tt.detail)
			}
			if !strings.Contains(fw.Exit, tt.exit) {
				t.Errorf("torch exit %q does not say %q", fw.Exit, tt.exit)
			}
			if tt.unfinished != "" {
				found := false
				for _, d := range fw.Devices {
					for _, op := range d.Ops {
						if op.Status == OpUnfinished && d.ID+" "+op.Name+" "+op.Precision == tt.unfinished {
							found = true
						}
					}
				}
				if !found {
					t.Errorf("no unfinished %s in %+v", tt.unfinished, fw.Devices)
				}
			}
			if tt.category != "" {
				op := fw.Devices[0].Ops[0]
				if op.Error == nil || op.Error.Category != tt.category {
					t.Errorf("op error %+v, want category %s", op.Error, tt.category)
				}
			}
			for _, other := range r.Frameworks {
				if other.Name != "torch" && tt.torch != Error && other.Status != Skip {
					t.Errorf("%s: %s (%s); the other frameworks must still report", other.Name, other.Status, other.Detail)
				}
			}
			pidFile := filepath.Join(filepath.Dir(py), "grandchild.pid")
			if b, err := os.ReadFile(pidFile); err == nil {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				time.Sleep(50 * time.Millisecond)
				if pid > 0 && alive(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("grandchild %d outlived the self-test: the process group was not ended", pid)
				}
			}
		})
	}
}

func TestRunInterpreterProblems(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "python3")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, python, want string
		status             Status
	}{
		{"a missing interpreter is an error naming it", filepath.Join(dir, "nope", "python3"), "not found", Error},
		{"a file that is not executable is an error", notExec, "not executable", Error},
		{"a directory is an error", dir, "is a directory", Error},
		{"no interpreter at all is a skip", "", "no Python interpreter found", Skip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(context.Background(), opts(tt.python, time.Second))
			if r.Status != tt.status || !strings.Contains(r.Detail, tt.want) {
				t.Errorf("got %s %q; want %s containing %q", r.Status, r.Detail, tt.status, tt.want)
			}
		})
	}
}

func TestChildEnv(t *testing.T) {
	got := ChildEnv([]string{"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "https_proxy=x", "CUDA_VISIBLE_DEVICES=1",
		"HF_HUB_OFFLINE=0", "PYTORCH_ENABLE_MPS_FALLBACK=1", "XLA_PYTHON_CLIENT_PREALLOCATE=true", "weird"})
	want := []string{"CUDA_VISIBLE_DEVICES=1", "HF_DATASETS_OFFLINE=1", "HF_HUB_OFFLINE=1", "PATH=/bin", "PYTHONDONTWRITEBYTECODE=1",
		"PYTHONUNBUFFERED=1", "TF_FORCE_GPU_ALLOW_GROWTH=true", "TRANSFORMERS_OFFLINE=1", "XLA_PYTHON_CLIENT_PREALLOCATE=false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ChildEnv (-want +got):\n%s", diff)
	}
}

// TestRunPassesConfig checks what the child is given: the script, its
// framework and a config with the claims and the memory limit.
func TestRunPassesConfig(t *testing.T) {
	dir := t.TempDir()
	py := fake(t, `printf '%s' "$5" > "$(dirname "$0")/cfg.$fw"; pwd > "$(dirname "$0")/pwd"; [ "$3" = "" ] && exit 9; exit 0`)
	o := opts(py, 5*time.Second)
	o.MemoryLimit = 1 << 33
	o.Dir = dir
	Run(context.Background(), o)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(py), "cfg.torch"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatalf("config %q: %v", b, err)
	}
	want := map[string]any{"claims": map[string]any{"cuda": []any{"fp32", "fp16"}}, "memory_limit": float64(1 << 33), "max_devices": float64(8)}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	pwd, _ := os.ReadFile(filepath.Join(filepath.Dir(py), "pwd"))
	if got, _ := filepath.EvalSymlinks(strings.TrimSpace(string(pwd))); got != mustEval(t, dir) {
		t.Errorf("child ran in %s, want %s", got, dir)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// alive reports a process that exists and is not a zombie (a killed
// grandchild stays a zombie until init, which may not reap, waits for it).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
