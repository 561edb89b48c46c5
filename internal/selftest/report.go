package selftest

import (
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/explain"
)

// Status is a verdict, in the words doctor's checks use, so that the
// self-test and the checks share one exit-code rule.
type Status string

// Statuses. Error says the self-test itself could not run (no interpreter,
// output that is not the script's), Timeout that the time limit ended it.
const (
	Pass    Status = "pass"
	Warn    Status = "warn"
	Fail    Status = "fail"
	Skip    Status = "skip"
	Error   Status = "error"
	Timeout Status = "timeout"
)

// worse orders statuses by how much they need the user's action.
var worse = map[Status]int{Skip: 0, Pass: 1, Warn: 2, Error: 3, Timeout: 4, Fail: 5}

// Worst returns the status that needs the most action.
func Worst(a, b Status) Status {
	if worse[b] > worse[a] {
		return b
	}
	return a
}

// OpStatus is how one operation went.
type OpStatus string

// Operation outcomes. Unfinished: the operation started and neither
// finished nor failed before the process ended (a hang cut off by the time
// limit, a crash, the kernel's OOM killer).
const (
	OpOK         OpStatus = "ok"
	OpFailed     OpStatus = "failed"
	OpUnfinished OpStatus = "unfinished"
)

// The operations, in the order the script runs them; the history keeps
// outcomes under these names.
const (
	OpImport    = "import"
	OpAllocate  = "allocate"
	OpCopyH2D   = "copy_h2d"
	OpCopyD2H   = "copy_d2h"
	OpMatmul    = "matmul"
	OpConv1D    = "conv1d"
	OpLinear    = "linear"
	OpLayerNorm = "layernorm"
	OpBackward  = "backward"
)

// Operations lists the operations a device runs, in order.
var Operations = []string{OpAllocate, OpCopyH2D, OpCopyD2H, OpMatmul, OpConv1D, OpLinear, OpLayerNorm, OpBackward}

// untyped are the operations that run in no particular precision.
func untyped(op string) bool { return op == OpAllocate || op == OpCopyH2D || op == OpCopyD2H }

// HistoryOperation is the name an operation's outcome is kept under in
// the history: "torch.matmul_bf16", "torch.allocate".
func HistoryOperation(framework, op, precision string) string {
	if untyped(op) || precision == "" {
		return framework + "." + op
	}
	return framework + "." + op + "_" + precision
}

// ParseHistoryOperation splits a HistoryOperation name; ok is false for
// a name the self-test did not write.
func ParseHistoryOperation(name string) (framework, op, precision string, ok bool) {
	framework, rest, found := strings.Cut(name, ".")
	if !found || framework == "" {
		return "", "", "", false
	}
	for _, o := range Operations {
		switch {
		case rest == o && untyped(o):
			return framework, o, "", true
		case strings.HasPrefix(rest, o+"_") && !untyped(o) && len(rest) > len(o)+1:
			return framework, o, rest[len(o)+1:], true
		}
	}
	return "", "", "", false
}

// Frameworks are the frameworks the self-test knows, in the order it
// reports them.
var Frameworks = []string{"torch", "jax", "tensorflow"}

// Outcome is the self-test's result: `doctor --selftest -o json` puts it
// under "selftest". Field names are stable.
type Outcome struct {
	Status Status `json:"status"`
	// Detail says in one line what happened.
	Detail string `json:"detail"`
	// Python is the interpreter that ran ("" when none was found), and
	// PythonSource how it was chosen ("--python", "active venv", ...).
	Python        string `json:"python"`
	PythonSource  string `json:"python_source"`
	PythonVersion string `json:"python_version,omitempty"`
	// BudgetMS is the time limit; DurationMS how long the self-test took.
	BudgetMS   int64       `json:"budget_ms"`
	DurationMS int64       `json:"duration_ms"`
	Isolation  Isolation   `json:"isolation"`
	Frameworks []Framework `json:"frameworks"`
	// Recorded is how many (device, operation) outcomes went into this
	// machine's history; RecordNote says why none did, when none did.
	Recorded   int    `json:"recorded"`
	RecordNote string `json:"record_note,omitempty"`
}

// Isolation says what bounded the child processes, and what did not.
type Isolation struct {
	// ProcessGroup: each child ran in a process group of its own, ended
	// with SIGKILL on every exit path.
	ProcessGroup bool `json:"process_group"`
	// TimeLimitMS is the deadline every child shared.
	TimeLimitMS int64 `json:"time_limit_ms"`
	// MemoryLimitBytes is the address-space limit (RLIMIT_AS) the script
	// set on itself first thing; null when none was set, and Memory says
	// why.
	MemoryLimitBytes *int64 `json:"memory_limit_bytes"`
	Memory           string `json:"memory"`
	// Network is "namespace" (a network namespace of its own: no
	// interface but a down loopback) or "environment" (proxies unset and
	// the Hugging Face libraries told to stay offline; sockets still work).
	Network     string `json:"network"`
	NetworkNote string `json:"network_note,omitempty"`
}

// Network isolation levels.
const (
	NetworkNamespace   = "namespace"
	NetworkEnvironment = "environment"
)

// Framework is one framework's child process and what it found.
type Framework struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	// Present is false when the framework is not installed for this
	// interpreter.
	Present  bool     `json:"present"`
	Version  string   `json:"version,omitempty"`
	ImportMS *float64 `json:"import_ms,omitempty"`
	// Error is the import failure, or a failure outside any operation.
	Error *Failure `json:"error,omitempty"`
	// Exit is how the process ended: "exit 0", "exit 1", "signal
	// SIGSEGV", "killed at the time limit", "killed: output over 1 MiB".
	Exit       string   `json:"exit"`
	DurationMS int64    `json:"duration_ms"`
	Devices    []Device `json:"devices"`
	// Notes are what the script reported without failing (a device API
	// that raised while listing devices).
	Notes []string `json:"notes,omitempty"`
	// StderrTail is the end of the process's standard error when it
	// failed, secrets masked, at most a few lines.
	StderrTail string `json:"stderr_tail,omitempty"`
}

// Device is one device a framework exposed, with its operations.
type Device struct {
	// ID is the framework's own device string (cuda:0, mps, cpu:0,
	// /device:GPU:0).
	ID      string          `json:"id"`
	Backend backend.Backend `json:"backend"`
	Name    string          `json:"name"`
	// Precisions are the ones the probe claims for this backend, which the
	// compute operations ran in.
	Precisions []string `json:"precisions"`
	Ops        []Op     `json:"ops"`
}

// Op is one operation in one precision.
type Op struct {
	Name       string   `json:"name"`
	Precision  string   `json:"precision"`
	Status     OpStatus `json:"status"`
	DurationMS *float64 `json:"duration_ms"`
	Error      *Failure `json:"error,omitempty"`
}

// Failure is an error the framework raised, as devctl's log classifier
// reads it.
type Failure struct {
	// Message is the exception as a traceback's last line shows it
	// ("RuntimeError: ..."), at most 2000 characters.
	Message   string           `json:"message"`
	Category  explain.Category `json:"category"`
	Device    explain.Device   `json:"device"`
	MessageID string           `json:"message_id"`
}

// classify reads an error message with the log classifier. A message it
// finds nothing device-related in is still a failure of this operation:
// category unknown.
func classify(msg string) *Failure {
	e := explain.Classify([]byte(msg))
	return &Failure{Message: msg, Category: e.Category, Device: e.Device, MessageID: e.MessageID}
}
