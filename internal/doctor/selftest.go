package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/selftest"
)

// SelftestMemoryLimit is the address space each self-test child may use
// where devctl sets one (machines whose probe sees no accelerator). It is
// devctl's choice, not a measured need: the Debian torch 1.13 self-test
// peaked at 636 MiB of address space (VmPeak; 246 MiB resident) on the
// 2-vCPU development VM, and address space grows with threads (glibc keeps
// up to 8 malloc arenas per core, mallopt(3) M_ARENA_MAX), so the limit is
// wide: it stops a runaway self-test, not a normal one.
const SelftestMemoryLimit = 16 << 30

// SelftestRequest is what the command asks of the self-test.
type SelftestRequest struct {
	// Python is --python ("" to choose from the probe's environments).
	Python string
	// Timeout is --selftest-timeout (selftest.DefaultTimeout when zero).
	Timeout time.Duration
	// Environ is the user's environment, for the children.
	Environ []string
	// Live is false for --sysroot and --from: the interpreter of a tree or
	// a snapshot cannot be run.
	Live bool
}

// RunSelftest runs the on-device self-test with the interpreter the
// software probe found (or req.Python), the precisions the probe claims
// for each backend, and the limits this machine allows.
func RunSelftest(ctx context.Context, e *Env, req SelftestRequest) *selftest.Outcome {
	if !req.Live {
		return &selftest.Outcome{Status: selftest.Skip, Frameworks: []selftest.Framework{},
			Detail: "the self-test runs this machine's Python; not with --sysroot or --from"}
	}
	o := SelftestOptions(ctx, e, req)
	rep := selftest.Run(ctx, o)
	if rep.Status == selftest.Skip && o.Python != "" {
		if hint := elsewhere(ctx, e, o.Python); hint != "" {
			rep.Detail += "; " + hint
		}
	}
	return rep
}

// SelftestOptions chooses the interpreter, the claims and the limits.
func SelftestOptions(ctx context.Context, e *Env, req SelftestRequest) selftest.Options {
	o := selftest.Options{Timeout: req.Timeout, Environ: req.Environ, Claims: Claims(e.Report), NetNS: true}
	o.Python, o.PythonSource = chooseInterpreter(ctx, e, req.Python)
	accel, tpu := false, false
	if e.Report != nil {
		for _, d := range e.Report.Devices {
			if d.Backend != backend.CPU {
				accel = true
			}
			if d.Backend == backend.XLA {
				tpu = true
			}
		}
	}
	if accel {
		o.MemoryNote = "not set: CUDA and ROCm reserve address space in proportion to device memory " +
			"(NVIDIA/cuda-python#2381 measured twice the device memory per memory pool), so RLIMIT_AS would fail their start-up; " +
			"devctl creates no cgroup (cgroup v2 needs a delegated subtree, e.g. systemd-run --user --scope -p MemoryMax=...)"
	} else {
		o.MemoryLimit = SelftestMemoryLimit
	}
	if tpu {
		o.NetNS = false
		o.NetNote = "no network namespace on a TPU host: libtpu asks the GCE metadata server for its topology " +
			"(unless TPU_SKIP_MDS_QUERY and the TPU_* topology variables are given); proxies unset, Hugging Face libraries offline"
	}
	return o
}

// chooseInterpreter picks --python, else the active environment (VIRTUAL_ENV,
// CONDA_PREFIX), else the first Python on PATH (shims resolved), and says
// which.
func chooseInterpreter(ctx context.Context, e *Env, explicit string) (string, string) {
	if explicit != "" {
		return explicit, "--python"
	}
	var first *probe.PythonEnv
	for _, env := range environments(ctx, e) {
		if env.Interpreter == "" {
			continue
		}
		if env.Active {
			return env.Interpreter, "the active " + env.Kind + " environment " + env.Prefix
		}
		if first == nil {
			env := env
			first = &env
		}
	}
	if first == nil {
		return "", "no VIRTUAL_ENV, CONDA_PREFIX or python3/python on PATH"
	}
	src := "the first Python on PATH"
	if first.Via != "" {
		src += " (" + first.Via + ")"
	}
	return first.Interpreter, src
}

// elsewhere names another environment that has a framework, when the one
// tested had none (a pyenv Python first on PATH, torch in Debian's).
func elsewhere(ctx context.Context, e *Env, tested string) string {
	for _, env := range environments(ctx, e) {
		if env.Interpreter == "" || env.Interpreter == tested {
			continue
		}
		var have []string
		for _, p := range env.Packages {
			switch p.Name {
			case "torch", "pytorch", "jax", "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly":
				have = append(have, p.Name+" "+p.Version)
			}
		}
		if len(have) > 0 {
			return fmt.Sprintf("%s has %s: devctl doctor --selftest --python %s", env.Interpreter, strings.Join(have, ", "), env.Interpreter)
		}
	}
	return ""
}

// Claims are the precisions the probe says each backend runs, for the
// self-test to try: fp32 always, fp16 and bf16 where any usable device of
// the backend claims them. The CPU is always listed.
func Claims(rep *probe.Report) map[backend.Backend][]string {
	out := map[backend.Backend][]string{backend.CPU: {"fp32"}}
	if rep == nil {
		return out
	}
	for _, d := range rep.Devices {
		if !d.Usable() {
			continue
		}
		ps := out[d.Backend]
		if !slices.Contains(ps, "fp32") {
			ps = append(ps, "fp32")
		}
		if d.SupportsFP16 && !slices.Contains(ps, "fp16") {
			ps = append(ps, "fp16")
		}
		if d.SupportsBF16 && !slices.Contains(ps, "bf16") {
			ps = append(ps, "bf16")
		}
		out[d.Backend] = ps
	}
	return out
}

// SelftestFailed reports whether the self-test needs the user's action, by
// the rule the checks follow: a failure, a self-test that broke or timed
// out, or (strict) a warning.
func SelftestFailed(r *selftest.Outcome, strict bool) bool {
	if r == nil {
		return false
	}
	switch r.Status {
	case selftest.Fail, selftest.Error, selftest.Timeout:
		return true
	case selftest.Warn:
		return strict
	}
	return false
}

// SelftestResults are the self-test's outcomes as history records, one per
// (device, operation): the operation is "<framework>.<op>_<precision>"
// ("torch.matmul_bf16"; allocate and the copies without a precision), the
// device its backend. A failure carries the classifier's category and
// message id, which decide what it counts against (history.ScopeOf); an
// operation the process never finished (a crash, a wedge cut at the time
// limit) carries the classification of its standard error, else "other",
// which counts for nothing. Nothing is recorded for a framework that did
// not import or that is not installed.
func SelftestResults(r *selftest.Outcome) []history.OperationResult {
	if r == nil {
		return nil
	}
	var out []history.OperationResult
	for _, fw := range r.Frameworks {
		for _, d := range fw.Devices {
			for _, op := range d.Ops {
				name := selftest.HistoryOperation(fw.Name, op.Name, op.Precision)
				res := history.OperationResult{Device: string(d.Backend), Operation: name, OK: op.Status == selftest.OpOK}
				if op.DurationMS != nil {
					res.DurationMS = int64(*op.DurationMS)
				}
				switch {
				case op.Status == selftest.OpFailed && op.Error != nil:
					res.Category, res.MessageID = string(op.Error.Category), op.Error.MessageID
				case op.Status == selftest.OpUnfinished && fw.Error != nil && fw.Error.Category != explain.CategoryUnknown:
					res.Category, res.MessageID = string(fw.Error.Category), fw.Error.MessageID
				case op.Status == selftest.OpUnfinished:
					res.Category, res.MessageID = string(explain.CategoryOther), string(explain.CategoryOther)
				}
				out = append(out, res)
			}
		}
	}
	return out
}
