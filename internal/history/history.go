// Package history keeps this machine's record of how runs went on each
// device, and the rule that judges devices by it: probe, recommend and run
// pass over a device that keeps failing because the device itself is
// unwell, never because a model was too big for it (the "operation
// history" of the Apple-silicon device-manager design, seed 003, made
// persistent and keyed the same way: by device and operation).
//
// What is stored: the time, this machine's hashed id, the device backend,
// the operation, the classifier's category and message id, the outcome,
// and for `devctl run` the run id, attempt, recovery step, duration and the
// measured device memory beside the plan's estimate. Never log text,
// arguments, environment values or paths: the file lives in the user's
// state directory and may be shared in bug reports.
//
// Records are written by `devctl run` (every attempt), `devctl doctor
// --log --record` and `--record-success`, and self-tests
// (Log.AppendOperation). Replays (--from, --sysroot) never write: they are
// another machine.
//
// The file format (Record) is versioned: records without "v" are version
// 1 (written before devctl knew machines and operations) and are read as
// this machine's, with no operation; docs/run.md describes the migration.
package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/state"
)

// FileName is the history file inside the state directory.
const FileName = "history.jsonl"

// Outcomes a record can have.
const (
	// Success is a run (or attempt, or self-test) that finished.
	Success = "success"
	// Failure is one whose output the classifier recognised. Whether it
	// counts against the device is the rule's call (Scope): out of memory
	// and bugs in the program are recorded but never count.
	Failure = "failure"
	// Unrelated is a failed run whose log named no device problem (category
	// "unknown"); it counts neither for nor against the device.
	Unrelated = "unrelated"
	// Interrupted is a `devctl run` attempt the user stopped (a forwarded
	// signal); it counts neither way either.
	Interrupted = "interrupted"
)

// SchemaVersion is the version of the records devctl writes ("v"). 1 (no
// "v"): time, device, category, outcome and the run fields. 2 adds machine,
// operation, source, message_id and memory; version 1 records are read as
// this machine's with no operation.
const SchemaVersion = 2

// Sources of a record.
const (
	SourceRun      = "run"      // devctl run, one record per attempt
	SourceDoctor   = "doctor"   // doctor --log --record, --record-success
	SourceSelfTest = "selftest" // a framework self-test (Log.AppendOperation)
)

// Record is one outcome. Field names are stable: the file outlives devctl
// versions.
type Record struct {
	// V is the record's SchemaVersion (0: a version 1 record).
	V    int       `json:"v,omitempty"`
	Time time.Time `json:"time"`
	// Machine is this machine's id, hashed (MachineID); "" in version 1
	// records and on machines without an id.
	Machine string `json:"machine,omitempty"`
	// Device is a backend: cuda, rocm, mps, xla, xpu, neuron, cpu or any.
	Device string `json:"device"`
	// Operation names what ran: a self-test's operation, run's --operation
	// ("" for a job that named none). The rule judges a device per
	// operation for failures of an operation the backend does not
	// implement (Scope).
	Operation string `json:"operation,omitempty"`
	// Source says who wrote the record (run, doctor, selftest).
	Source string `json:"source,omitempty"`
	// Category is the log category (out_of_memory, mps_unsupported_op, ...)
	// for failures, "" for successes; MessageID the classifier's refinement
	// of it (other.gpu_lost, cuda_launch_failure.illegal_access), which
	// decides whether the failure counts against the device (Scope).
	Category  string `json:"category,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	Outcome   string `json:"outcome"`

	// The fields below are written by `devctl run`, one record per attempt.
	// Run is a random id shared by the attempts of one run; Attempt counts
	// from 1; Step is the recovery step the attempt ran with ("" for the
	// first); DurationMS is how long it ran. Never its output, arguments or
	// environment values: they can hold secrets.
	Run        string `json:"run,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	Step       string `json:"step,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	// Memory is the device memory the attempt's processes held at their
	// peak, beside the plan's estimate (nil: not measured).
	Memory *devmem.Measurement `json:"memory,omitempty"`
}

// Records are history entries, oldest first.
type Records []Record

// Path returns $XDG_STATE_HOME/devctl/history.jsonl (or ~/.local/state/...).
func Path(lookupEnv func(string) (string, bool)) (string, error) {
	dir, err := state.Dir(lookupEnv)
	if err != nil {
		return "", fmt.Errorf("history: %w", err)
	}
	return filepath.Join(dir, FileName), nil
}

// Load reads the history. A missing file is an empty history, not an error:
// most machines have never recorded a run.
func Load(lookupEnv func(string) (string, bool)) (Records, error) {
	p, err := Path(lookupEnv)
	if err != nil {
		return nil, err
	}
	return LoadFile(p)
}

// LoadFile reads a history file at an explicit path.
func LoadFile(path string) (Records, error) {
	rs, err := state.Read[Record](path)
	if errors.Is(err, fs.ErrNotExist) {
		return Records{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading history %s: %w", path, err)
	}
	out := make(Records, 0, len(rs))
	for _, r := range rs {
		if r.Device == "" || !validOutcome(r.Outcome) {
			continue // a damaged or foreign line must not skew the record
		}
		out = append(out, r)
	}
	return out, nil
}

// RecentBytes is how much of the history's end LoadRecent reads: about
// 180 attempts, enough for the rule's last 5 runs of every device in use.
// Reading it costs well under a millisecond, where decoding the whole
// 1000-record file costs several: probe reads it on every run.
const RecentBytes = 32 << 10

// LoadRecent reads the newest RecentBytes of the history, for the rule
// (Judge, PassOver). A device whose last record is older than that is not
// judged. A missing file is an empty history.
func LoadRecent(lookupEnv func(string) (string, bool)) (Records, error) {
	p, err := Path(lookupEnv)
	if err != nil {
		return nil, err
	}
	return LoadRecentFile(p)
}

// LoadRecentFile reads the newest RecentBytes of the history at path.
func LoadRecentFile(path string) (Records, error) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Records{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading history %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reading history %s: %w", path, state.ErrNotRegular)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading history %s: %w", path, err)
	}
	defer f.Close()
	off := max(0, st.Size()-RecentBytes)
	buf := make([]byte, st.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading history %s: %w", path, err)
	}
	buf = buf[:n]
	if off > 0 { // the first line is cut: skip it
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	var out Records
	for len(buf) > 0 {
		line := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		var r Record
		if json.Unmarshal(line, &r) != nil || r.Device == "" || !validOutcome(r.Outcome) {
			continue // a damaged or foreign line must not skew the record
		}
		out = append(out, r)
	}
	return out, nil
}

// Append records one outcome (bounded by state.MaxRecords).
func Append(lookupEnv func(string) (string, bool), r Record) error {
	p, err := Path(lookupEnv)
	if err != nil {
		return err
	}
	return AppendFile(p, r)
}

// AppendFile records one outcome in the file at path.
func AppendFile(path string, r Record) error {
	if r.V == 0 {
		r.V = SchemaVersion
	}
	r.Device = NormalizeDevice(r.Device)
	if r.Device == "" {
		return errors.New("history record without a device")
	}
	if !validOutcome(r.Outcome) {
		return fmt.Errorf("history record outcome %q: want %s, %s, %s or %s", r.Outcome, Success, Failure, Unrelated, Interrupted)
	}
	if err := state.Append(path, r); err != nil {
		return fmt.Errorf("writing history %s: %w", path, err)
	}
	return nil
}

func validOutcome(o string) bool {
	return o == Success || o == Failure || o == Unrelated || o == Interrupted
}

// Clear forgets the history at path. A missing file is already clear.
func Clear(path string) error {
	if err := state.Clear(path); err != nil {
		return fmt.Errorf("clearing history %s: %w", path, err)
	}
	return nil
}

// NormalizeDevice maps what users and the classifier call a device onto the
// backend key history is kept by: "cuda:1" -> "cuda", "tpu" -> "xla",
// "GPU" stays unknown-cased -> "gpu".
func NormalizeDevice(d string) string { return string(backend.Of(d)) }
