package run

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/supervise"
	"github.com/devctl/devctl/internal/target"
)

type session struct {
	o     *Options
	runID string
	// log is this machine's history (nil: not recorded, a replay).
	log    *history.Log
	report supervise.Report
	last   explain.Explanation
	// openLine: the job's stderr ended mid-line, so devctl's next line
	// must start with a newline (and only then: a job whose output stands
	// alone keeps it byte for byte).
	openLine bool
}

// say prints one line on stderr with devctl's prefix, so it stands apart
// from the command's own output.
func (s *session) say(format string, args ...any) {
	if s.openLine {
		fmt.Fprintln(s.o.IO.ErrOut)
		s.openLine = false
	}
	fmt.Fprintf(s.o.IO.ErrOut, "devctl run: "+format+"\n", args...)
}

// record classifies one finished attempt, appends it to the history and
// the report, and returns it.
func (s *session) record(n int, dev supervise.Candidate, step supervise.Step, res supervise.Result, mem *devmem.Measurement, memErr error) supervise.Attempt {
	a := supervise.Attempt{Attempt: n, Time: s.o.Now().UTC().Add(-res.Duration), Device: dev.ID, Step: step.ID, Set: step.Set,
		ExitCode: res.ExitCode, Signal: res.Signal, DurationMS: res.Duration.Milliseconds(), Memory: mem}
	if memErr != nil {
		a.MemoryNote = "not measured: " + memErr.Error()
	}
	switch {
	case res.ExitCode == 0:
		a.Outcome = history.Success
	case res.Interrupted:
		a.Outcome = history.Interrupted
	default:
		s.last = explain.Classify(res.Tail)
		a.Category = string(s.last.Category)
		a.Outcome = history.Failure
		if s.last.Category == explain.CategoryUnknown {
			a.Outcome = history.Unrelated // not the device's fault, as doctor --log records it
		}
	}
	s.report.Attempts = append(s.report.Attempts, a)
	if s.log != nil {
		r := history.Record{Time: a.Time, Device: dev.Backend, Operation: s.o.Operation, Source: history.SourceRun,
			Category: a.Category, Outcome: a.Outcome, Run: s.runID, Attempt: n, Step: step.ID, DurationMS: a.DurationMS, Memory: mem}
		if a.Outcome == history.Failure {
			r.MessageID = s.last.MessageID
		}
		if err := s.log.Append(r); err != nil {
			s.say("could not record the attempt in the history: %v", err)
		}
	}
	return a
}

// finish prints the summary, writes --report and returns devctl's exit:
// the command's own exit code.
func (s *session) finish(code int) error {
	r := &s.report
	last := r.Attempts[len(r.Attempts)-1]
	r.Outcome, r.ExitCode = last.Outcome, code
	r.Recovered = last.Outcome == history.Success && len(r.Attempts) > 1
	var steps []string
	for _, a := range r.Attempts[1:] {
		steps = append(steps, a.Step)
	}
	switch {
	case last.Outcome == history.Success && r.Recovered:
		s.say("succeeded on attempt %d on %s after %s", len(r.Attempts), last.Device, strings.Join(steps, ", then "))
	case last.Outcome == history.Success:
		// A clean first run says nothing: devctl run is then invisible.
	case last.Outcome == history.Interrupted:
		s.say("interrupted on attempt %d (exit %d%s); not retried", len(r.Attempts), code, sigNote(last.Signal))
	case last.Outcome == history.Unrelated:
		// The program's own failure: one line, its output already said why.
		s.say("exit %d%s on attempt %d; no device error recognised in the output, so not retried", code, sigNote(last.Signal), len(r.Attempts))
	default:
		msg := s.last.Message(explain.NewCatalog(), "en")
		r.Explanation = &supervise.Explanation{Category: last.Category, Title: msg.Title, Fixes: msg.Fixes}
		tried := ""
		if len(steps) > 0 {
			tried = " after trying " + strings.Join(steps, ", ")
		}
		s.say("failed on attempt %d on %s (exit %d%s)%s: %s", len(r.Attempts), last.Device, code, sigNote(last.Signal), tried, last.Category)
		if msg.Title != "" {
			s.say("%s", msg.Title)
		}
		for i, fx := range msg.Fixes {
			if i == 2 {
				break
			}
			s.say("fix: %s", fx)
		}
		if r.Stopped != "" {
			s.say("not retried: %s", r.Stopped)
		}
	}
	if s.o.ReportFile != "" {
		if err := writeReport(s.o.ReportFile, r); err != nil {
			s.say("could not write --report %s: %v", s.o.ReportFile, err)
		}
	}
	if code == 0 {
		return nil
	}
	return &cmdutil.ExitError{Code: code}
}

func sigNote(sig string) string {
	if sig == "" {
		return ""
	}
	return ", " + sig
}

func recommendSupport(d probe.Device) capability.Support {
	return capability.Support{FP16: d.SupportsFP16, BF16: d.SupportsBF16, Int8: d.Supports8Bit, FP8: d.SupportsFP8}
}

// writeReport writes the report whole or not at all, scrubbed, under the
// one output policy (internal/target).
func writeReport(path string, r *supervise.Report) error {
	return target.RunReport.WriteJSON(path, r)
}
