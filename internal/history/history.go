// Package history keeps the per-device record of how runs went, so that
// `devctl doctor --history` can show it and `devctl recommend` can steer away
// from a device whose recent runs mostly failed (the "operation history" of
// the Apple-silicon device-manager design, made persistent).
//
// What is stored: only the time, the device backend, the error category and
// the outcome (and, for `devctl run`, the run id, attempt number, recovery
// step and duration). Never log text, arguments, environment values, paths
// or numbers from a log: the file lives in the user's state directory and
// may be shared in bug reports.
//
// What counts as a success: `doctor --log` only ever sees failed runs, so its
// outcomes are failures (or "unrelated" when the log names no device
// problem). A success is recorded explicitly with
// `devctl doctor --record-success --device <backend>`, meant for the end of a
// job script (`python train.py && devctl doctor --record-success --device cuda
// || devctl doctor --log train.log`). A clean `devctl doctor` run is NOT a
// success: a machine that passes its checks can still fail a job, and
// counting check runs would drown the job record.
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
	"sort"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/state"
)

// FileName is the history file inside the state directory.
const FileName = "history.jsonl"

// Outcomes a record can have.
const (
	// Success is a run the user reported as finished (--record-success).
	Success = "success"
	// Failure is a run whose log `doctor --log` classified as a device problem.
	Failure = "failure"
	// Unrelated is a failed run whose log named no device problem (category
	// "unknown"); it counts neither for nor against the device.
	Unrelated = "unrelated"
	// Interrupted is a `devctl run` attempt the user stopped (a forwarded
	// signal); it counts neither way either.
	Interrupted = "interrupted"
)

// Record is one run's outcome. Field names are stable: the file outlives
// devctl versions.
type Record struct {
	Time time.Time `json:"time"`
	// Device is a backend: cuda, rocm, mps, xla, xpu, neuron, cpu or any.
	Device string `json:"device"`
	// Category is the log category (out_of_memory, mps_unsupported_op, ...)
	// for failures, "" for successes.
	Category string `json:"category,omitempty"`
	Outcome  string `json:"outcome"`

	// The fields below are written by `devctl run`, one record per attempt.
	// Run is a random id shared by the attempts of one run; Attempt counts
	// from 1; Step is the recovery step the attempt ran with ("" for the
	// first); DurationMS is how long it ran. Never its output, arguments or
	// environment values: they can hold secrets.
	Run        string `json:"run,omitempty"`
	Attempt    int    `json:"attempt,omitempty"`
	Step       string `json:"step,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
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

// Summary gives the record of one device: runs counts successes and
// failures (unrelated logs are left out), failures the failed ones, and
// lastCategory the category of the most recent failure ("" if none).
func (rs Records) Summary(device string) (runs, failures int, lastCategory string) {
	device = NormalizeDevice(device)
	for _, r := range rs {
		if r.Device != device {
			continue
		}
		switch r.Outcome {
		case Success:
			runs++
		case Failure:
			runs++
			failures++
			lastCategory = r.Category
		}
	}
	return runs, failures, lastCategory
}

// Recent returns the last n success/failure records of a device, oldest
// first. The device-manager design judged a device by its last 5 runs.
func (rs Records) Recent(device string, n int) Records {
	device = NormalizeDevice(device)
	var out Records
	for i := len(rs) - 1; i >= 0 && len(out) < n; i-- {
		r := rs[i]
		if r.Device == device && (r.Outcome == Success || r.Outcome == Failure) {
			out = append(out, r)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// The one rule devctl follows everywhere (probe's default device, recommend,
// run), from the device-manager design: a device whose success rate over
// its last RuleWindow recorded runs is below RuleThreshold is passed over
// for the next device in priority. An explicitly requested device is used
// anyway, with the verdict shown as a warning.
const (
	RuleWindow    = 5
	RuleThreshold = 0.8
)

// Verdict is the rule applied to one device.
type Verdict struct {
	Device string `json:"device"`
	// Runs and Successes count the runs the rule looked at (at most
	// RuleWindow, newest first).
	Runs      int     `json:"runs"`
	Successes int     `json:"successes"`
	Rate      float64 `json:"rate"`
	// PassOver is true when Rate < RuleThreshold (never with no runs).
	PassOver bool `json:"pass_over"`
	// TopCategory is the most frequent failure category among those runs.
	TopCategory string `json:"top_category,omitempty"`
}

// Reason renders the verdict as the one line probe, recommend and run show.
func (v Verdict) Reason() string {
	s := fmt.Sprintf("%s: %d of its last %d recorded runs succeeded (%.0f%%, below %.0f%%)", v.Device, v.Successes, v.Runs, v.Rate*100, RuleThreshold*100)
	if v.TopCategory != "" {
		s += ", most often " + v.TopCategory
	}
	return s + "; see devctl history"
}

// Judge applies the rule to a device. A run is one job: the attempts of one
// `devctl run` on one device count once, by their last outcome (an attempt
// that ran out of memory and then succeeded with a smaller batch is a
// successful run); a doctor record counts on its own. Unrelated and
// interrupted outcomes do not count.
func (rs Records) Judge(device string) Verdict {
	device = NormalizeDevice(device)
	v := Verdict{Device: device}
	seen := map[string]bool{}
	counts := map[string]int{}
	for i := len(rs) - 1; i >= 0 && v.Runs < RuleWindow; i-- {
		r := rs[i]
		if r.Device != device || (r.Outcome != Success && r.Outcome != Failure) {
			continue
		}
		if r.Run != "" {
			if seen[r.Run] {
				continue
			}
			seen[r.Run] = true
		}
		v.Runs++
		if r.Outcome == Success {
			v.Successes++
		} else {
			counts[r.Category]++
		}
	}
	if v.Runs == 0 {
		return v
	}
	v.Rate = float64(v.Successes) / float64(v.Runs)
	v.PassOver = v.Rate < RuleThreshold
	best := 0
	for c, n := range counts {
		if n > best || (n == best && c < v.TopCategory) {
			v.TopCategory, best = c, n
		}
	}
	return v
}

// PassOver applies the rule to every device in the history and returns the
// reasons of those to pass over, by backend.
func (rs Records) PassOver() map[string]string {
	out := map[string]string{}
	done := map[string]bool{}
	for _, r := range rs {
		if done[r.Device] {
			continue
		}
		done[r.Device] = true
		if v := rs.Judge(r.Device); v.PassOver {
			out[r.Device] = v.Reason()
		}
	}
	return out
}

// DeviceSummary is one device's line in `doctor --history`.
type DeviceSummary struct {
	Device       string         `json:"device"`
	Runs         int            `json:"runs"`
	Successes    int            `json:"successes"`
	Failures     int            `json:"failures"`
	Unrelated    int            `json:"unrelated"`
	LastCategory string         `json:"last_category,omitempty"`
	LastTime     time.Time      `json:"last_time"`
	Categories   map[string]int `json:"categories,omitempty"`
}

// Summaries gives every device's record, sorted by device name.
func (rs Records) Summaries() []DeviceSummary {
	by := map[string]*DeviceSummary{}
	for _, r := range rs {
		s := by[r.Device]
		if s == nil {
			s = &DeviceSummary{Device: r.Device}
			by[r.Device] = s
		}
		switch r.Outcome {
		case Success:
			s.Runs++
			s.Successes++
		case Failure:
			s.Runs++
			s.Failures++
			s.LastCategory = r.Category
			if s.Categories == nil {
				s.Categories = map[string]int{}
			}
			s.Categories[r.Category]++
		case Unrelated:
			s.Unrelated++
		}
		if r.Time.After(s.LastTime) {
			s.LastTime = r.Time
		}
	}
	out := make([]DeviceSummary, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}
