package history

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Log is this machine's history: the file and who this machine is. Every
// writer goes through one: `devctl run`, doctor, and self-tests
// (AppendOperation). Commands get theirs from cmdutil.HistoryLog, which
// refuses replays: a --from or --sysroot run is another machine and never
// writes here.
type Log struct {
	// Path is the history file (Path).
	Path string
	// Machine is MachineID of this machine ("" when none is readable).
	Machine string
	// Now stamps records that carry no time.
	Now func() time.Time
}

// Open returns the log in the state directory lookupEnv names
// ($XDG_STATE_HOME/devctl/history.jsonl, or ~/.local/state/...).
func Open(lookupEnv func(string) (string, bool), machine string, now func() time.Time) (*Log, error) {
	p, err := Path(lookupEnv)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Log{Path: p, Machine: machine, Now: now}, nil
}

// Append records one outcome, stamped with this machine and the schema
// version (and the time, when r has none).
func (l *Log) Append(r Record) error {
	r.V, r.Machine = SchemaVersion, l.Machine
	if r.Time.IsZero() {
		r.Time = l.Now().UTC()
	}
	return AppendFile(l.Path, r)
}

// OperationResult is one try of one operation on one device, as a
// framework self-test reports it.
type OperationResult struct {
	// Device is a backend or a device id ("mps", "cuda:1"); history keeps
	// the backend.
	Device string
	// Operation names what was tried (required): "matmul_bf16",
	// "conv2d", "sdpa". The rule judges (device, operation) by it.
	Operation string
	// OK is true when the operation ran and gave the expected answer.
	OK bool
	// Category and MessageID are the classifier's reading of the failure
	// (explain.Classify on its output); "" when OK. They decide whether
	// the failure counts (Scope): an unsupported operator counts against
	// (device, operation), a lost GPU against the device, an out-of-memory
	// against nothing.
	Category  string
	MessageID string
	// DurationMS is how long the try took (0: not measured).
	DurationMS int64
	// Source names the writer (default SourceSelfTest).
	Source string
}

// ErrNoOperation is returned by AppendOperation for a result without an
// operation name.
var ErrNoOperation = errors.New("history: an operation result needs an operation name")

// AppendOperation records one self-test result. A failure the classifier
// did not recognise (category "" or unknown) is recorded as unrelated:
// it counts for nothing.
func (l *Log) AppendOperation(res OperationResult) error {
	op := strings.TrimSpace(res.Operation)
	if op == "" {
		return ErrNoOperation
	}
	if len(op) > 128 {
		return fmt.Errorf("history: operation name of %d bytes: want at most 128", len(op))
	}
	r := Record{Device: res.Device, Operation: op, Source: res.Source, DurationMS: res.DurationMS}
	if r.Source == "" {
		r.Source = SourceSelfTest
	}
	switch {
	case res.OK:
		r.Outcome = Success
	case res.Category == "" || res.Category == "unknown":
		r.Outcome, r.Category = Unrelated, res.Category
	default:
		r.Outcome, r.Category, r.MessageID = Failure, res.Category, res.MessageID
	}
	return l.Append(r)
}

// Recent returns this machine's records among the newest RecentBytes of
// the file: what the rule reads on every probe.
func (l *Log) Recent() (Records, error) {
	rs, err := LoadRecentFile(l.Path)
	if err != nil {
		return nil, err
	}
	return rs.ForMachine(l.Machine), nil
}

// Load returns this machine's records from the whole file and how many
// belong to other machines sharing it.
func (l *Log) Load() (mine Records, others int, err error) {
	rs, err := LoadFile(l.Path)
	if err != nil {
		return nil, 0, err
	}
	mine = rs.ForMachine(l.Machine)
	return mine, len(rs) - len(mine), nil
}

// Clear forgets every record in the file, this machine's and others'.
func (l *Log) Clear() error { return Clear(l.Path) }
