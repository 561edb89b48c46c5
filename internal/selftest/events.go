package selftest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/explain"
)

// Marker starts every event line the script prints; other lines (a
// framework's own prints, warnings sent to stdout) are not events.
const Marker = "@@devctl-selftest@@ "

// Bounds on what one child's events may add to the report, whatever it
// prints.
const (
	maxDevices = 64
	maxOps     = 256
	maxNotes   = 16
	maxText    = 2000
)

// event is one line of the script's output.
type event struct {
	Ev          string   `json:"ev"`
	Framework   string   `json:"framework"`
	Device      string   `json:"device"`
	Backend     string   `json:"backend"`
	Name        string   `json:"name"`
	Op          string   `json:"op"`
	Precision   string   `json:"precision"`
	Precisions  []string `json:"precisions"`
	OK          *bool    `json:"ok"`
	MS          *float64 `json:"ms"`
	Error       string   `json:"error"`
	Note        string   `json:"note"`
	Version     string   `json:"version"`
	Python      string   `json:"python"`
	MemoryLimit *int64   `json:"memory_limit"`
}

// collector folds one child's events into its Framework result as they
// arrive, so that a child cut off half-way still reports what it did and
// which operation it was in.
type collector struct {
	fw          Framework
	started     bool
	imported    bool
	importBegun bool
	done        bool
	python      string
	memLimit    *int64
	// pending is the operation announced (op_begin) and not yet ended.
	pending    *Op
	pendingDev string
	events     int
	garbage    int
	firstJunk  string
}

func newCollector(name string) *collector {
	return &collector{fw: Framework{Name: name, Devices: []Device{}}}
}

// Line feeds one line of standard output (without its newline).
func (c *collector) Line(line []byte) {
	line = bytes.TrimRight(line, "\r")
	rest, ok := bytes.CutPrefix(line, []byte(Marker))
	if !ok {
		if len(bytes.TrimSpace(line)) > 0 {
			c.junk(line)
		}
		return
	}
	var e event
	if err := json.Unmarshal(rest, &e); err != nil || e.Ev == "" {
		c.junk(line)
		return
	}
	c.events++
	c.apply(e)
}

func (c *collector) junk(line []byte) {
	c.garbage++
	if c.firstJunk == "" {
		c.firstJunk = clip(string(line), 200)
	}
}

func (c *collector) apply(e event) {
	fw := &c.fw
	switch e.Ev {
	case "limit":
		c.memLimit = e.MemoryLimit
	case "start":
		c.started = true
		c.python = clip(e.Python, 64)
	case "absent":
		fw.Present = false
	case "import_begin":
		c.importBegun = true
		fw.Present = true
	case "import_ms":
		c.imported = true
		fw.ImportMS = e.MS
	case "import":
		c.imported = true
		fw.Present = true
		fw.Version = clip(e.Version, 64)
	case "import_error":
		fw.Present = true
		fw.ImportMS = e.MS
		fw.Error = classify(clip(e.Error, maxText))
	case "error":
		fw.Error = classify(clip(e.Error, maxText))
	case "note":
		if len(fw.Notes) < maxNotes {
			fw.Notes = append(fw.Notes, clip(e.Note, maxText))
		}
	case "device":
		if len(fw.Devices) < maxDevices {
			ps := []string{}
			for i, p := range e.Precisions {
				if i < 8 {
					ps = append(ps, clip(p, 16))
				}
			}
			fw.Devices = append(fw.Devices, Device{ID: clip(e.Device, 128), Backend: backend.Backend(clip(e.Backend, 16)),
				Name: clip(e.Name, 200), Precisions: ps, Ops: []Op{}})
		}
	case "op_begin":
		c.pending = &Op{Name: clip(e.Op, 32), Precision: clip(e.Precision, 16), Status: OpUnfinished}
		c.pendingDev = clip(e.Device, 128)
	case "op":
		op := Op{Name: clip(e.Op, 32), Precision: clip(e.Precision, 16), Status: OpOK, DurationMS: e.MS}
		if e.OK == nil || !*e.OK {
			op.Status = OpFailed
			op.Error = classify(clip(e.Error, maxText))
		}
		c.addOp(clip(e.Device, 128), op)
		if c.pending != nil && c.pending.Name == op.Name && c.pending.Precision == op.Precision {
			c.pending = nil
		}
	case "done":
		c.done = true
	}
}

// addOp files an operation under its device (the last one of that id).
func (c *collector) addOp(device string, op Op) {
	ds := c.fw.Devices
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].ID == device {
			if len(ds[i].Ops) < maxOps {
				ds[i].Ops = append(ds[i].Ops, op)
			}
			return
		}
	}
}

// ended is how a child process ended, as the runner saw it.
type ended struct {
	// StartErr is why the process could not start.
	StartErr error
	// Exit is "exit N" or "signal SIGSEGV"; empty when the process was not
	// reaped (stuck in the kernel after SIGKILL).
	Exit string
	// Code is the exit code (-1 for a signal).
	Code int
	// Signal is the signal that ended the process, "" for a normal exit.
	Signal string
	// Killed says why devctl ended it: "" (it ended alone), killedTimeout
	// or killedOutput.
	Killed string
	// Reaped is false when the process had not exited a moment after
	// SIGKILL: it is stuck in the kernel, typically in a device driver.
	Reaped  bool
	Stderr  string
	Timeout string // the time limit, for messages ("10s")
}

// Why devctl ended a child.
const (
	killedTimeout = "timeout"
	killedOutput  = "output"
)

// Finish decides the framework's status from its events and how its
// process ended.
func (c *collector) Finish(x ended) Framework {
	fw := c.fw
	fw.Exit = exitWords(x)
	failedTail := func() {
		fw.StderrTail = tail(x.Stderr, 12, maxText)
	}
	where := ""
	if c.pending != nil {
		op := *c.pending
		c.addOp(c.pendingDev, op)
		where = fmt.Sprintf("%s %s %s", c.pendingDev, op.Name, op.Precision)
	}
	switch {
	case x.StartErr != nil:
		fw.Status, fw.Detail = Error, "could not start the interpreter: "+x.StartErr.Error()
		return fw
	case !c.started:
		failedTail()
		switch {
		case x.Killed == killedTimeout:
			fw.Status, fw.Detail = Timeout, fmt.Sprintf("the interpreter printed nothing of the self-test within %s", x.Timeout)
		case c.garbage > 0:
			fw.Status, fw.Detail = Error, fmt.Sprintf("the interpreter did not run devctl's script: %d line(s) of other output (first: %q), %s", c.garbage, c.firstJunk, fw.Exit)
		default:
			fw.Status, fw.Detail = Error, "the interpreter did not run devctl's script: "+fw.Exit
		}
		if x.Killed == killedOutput {
			fw.Status = Error
		}
		return fw
	}
	if !fw.Present && c.done && !c.importBegun {
		fw.Status, fw.Detail = Skip, fw.Name+" is not installed for this interpreter"
		return fw
	}
	// A failure is the device or the framework not working, except one in
	// a reduced precision the probe claims that the classifier reads as
	// "no kernel for this precision" (unsupported_dtype): the claim does
	// not hold for this framework build, a warning.
	failed, reduced, total := 0, 0, 0
	var firstFailed, reducedPrecs []string
	for _, d := range fw.Devices {
		for _, op := range d.Ops {
			total++
			if op.Status != OpFailed {
				continue
			}
			failed++
			if op.Precision != "fp32" && op.Error != nil && op.Error.Category == explain.CategoryUnsupportedDType {
				reduced++
				if p := d.ID + " " + op.Precision; !slices.Contains(reducedPrecs, p) {
					reducedPrecs = append(reducedPrecs, p)
				}
			}
			if len(firstFailed) < 3 {
				firstFailed = append(firstFailed, fmt.Sprintf("%s %s %s (%s)", d.ID, op.Name, op.Precision, op.Error.Category))
			}
		}
	}
	switch {
	case x.Killed == killedOutput:
		failedTail()
		fw.Status, fw.Detail = Error, "killed: "+fw.Exit
	case c.importBegun && !c.imported && fw.Error == nil:
		failedTail()
		fw.Status, fw.Detail = stopped(x), fmt.Sprintf("import %s did not finish: %s", fw.Name, fw.Exit)
		fw.Error = stderrFailure(x.Stderr)
	case fw.Error != nil && !c.imported:
		failedTail()
		fw.Status, fw.Detail = Fail, fmt.Sprintf("import %s failed (%s): %s", fw.Name, fw.Error.Category, firstLine(fw.Error.Message))
	case where != "":
		failedTail()
		fw.Status, fw.Detail = stopped(x), fmt.Sprintf("%s did not finish: %s", where, fw.Exit)
		if x.Killed == killedTimeout {
			fw.Detail += "; the device may be wedged"
		}
		if fw.Error == nil && x.Killed == "" {
			fw.Error = stderrFailure(x.Stderr)
		}
	case !c.done:
		failedTail()
		fw.Status, fw.Detail = stopped(x), "the self-test stopped between operations: "+fw.Exit
	case fw.Error != nil:
		failedTail()
		fw.Status, fw.Detail = Fail, fmt.Sprintf("%s raised outside an operation (%s): %s", fw.Name, fw.Error.Category, firstLine(fw.Error.Message))
	case failed > reduced:
		fw.Status, fw.Detail = Fail, fmt.Sprintf("%d of %d operations failed: %s", failed, total, strings.Join(firstFailed, ", "))
	case failed > 0:
		fw.Status, fw.Detail = Warn, fmt.Sprintf("the probe claims %s, but %d of %d operations failed in it: %s", strings.Join(reducedPrecs, ", "), failed, total, strings.Join(firstFailed, ", "))
	case total == 0:
		fw.Status, fw.Detail = Warn, fw.Name+" exposed no device to test"
	default:
		fw.Status, fw.Detail = Pass, fmt.Sprintf("%d operations on %d device(s) passed", total, len(fw.Devices))
	}
	if failed > 0 && fw.Status != Fail && fw.Status != Warn {
		fw.Detail += fmt.Sprintf("; %d of %d operations failed before", failed, total)
	}
	return fw
}

// stopped is the status of a process that ended before its script did:
// the time limit ran out, or it died (a crash, the OOM killer).
func stopped(x ended) Status {
	if x.Killed == killedTimeout {
		return Timeout
	}
	return Fail
}

// stderrFailure classifies the end of standard error: a crash leaves no
// Python exception event, but often a message ("Illegal instruction", a
// CUDA error printed by a C++ library).
func stderrFailure(stderr string) *Failure {
	t := tail(stderr, 12, maxText)
	if strings.TrimSpace(t) == "" {
		return nil
	}
	return classify(t)
}

func exitWords(x ended) string {
	switch {
	case x.StartErr != nil:
		return "did not start"
	case x.Killed == killedTimeout && !x.Reaped:
		return fmt.Sprintf("killed at the time limit (%s); the process did not exit after SIGKILL: it is stuck in the kernel, typically in a device driver", x.Timeout)
	case x.Killed == killedTimeout:
		return fmt.Sprintf("killed at the time limit (%s)", x.Timeout)
	case x.Killed == killedOutput:
		return fmt.Sprintf("output over %d MiB", MaxOutput>>20)
	case x.Signal == "SIGKILL":
		return "signal SIGKILL (not sent by devctl: the kernel's OOM killer or another process)"
	case x.Signal != "":
		return "signal " + x.Signal
	case x.Exit != "":
		return x.Exit
	}
	return "unknown"
}

// tail keeps the last n lines of s, at most max bytes, valid UTF-8.
func tail(s string, n, max int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "\n")
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return strings.ToValidUTF8(out, "\uFFFD")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s, 200)
}

// clip bounds a string from the child to n bytes of valid UTF-8.
func clip(s string, n int) string {
	if len(s) > n {
		s = s[:n]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
