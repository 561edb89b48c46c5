package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/guard"
	"github.com/devctl/devctl/internal/suggest"
)

// Status is a finding's verdict.
type Status string

// Statuses. Error and Timeout say the check itself broke, not the machine.
const (
	Pass    Status = "pass"
	Warn    Status = "warn"
	Fail    Status = "fail"
	Skip    Status = "skip"
	Error   Status = "error"
	Timeout Status = "timeout"
)

// StatusOrder is the order findings are grouped in: what needs action first.
var StatusOrder = []Status{Fail, Error, Timeout, Warn, Pass, Skip}

// Evidence is one fact a finding rests on: where it was read and what it said.
type Evidence struct {
	Source string `json:"source"`
	Value  string `json:"value"`
}

// Finding is what one check concluded, before rendering. Msg names the
// finding's message: "<check id>.<Msg>" in the catalogue (messages_en.go),
// else "common.<Msg>"; Args fill its templates.
type Finding struct {
	Status   Status
	Msg      string
	Args     Args
	Evidence []Evidence
}

// Check is one diagnosis. Run must honour ctx and only read the machine
// through env.Host (or env's shared facts). Its title and findings' texts
// are in the message catalogue under its ID, kept apart from the logic so
// that they can be translated and tested as data.
type Check struct {
	ID  string
	Run func(ctx context.Context, env *Env) Finding
}

// Result is a rendered finding: devctl's JSON schema for `checks[]`.
type Result struct {
	ID         string     `json:"id"`
	Title      string     `json:"title"`
	Status     Status     `json:"status"`
	Detail     string     `json:"detail"`
	Fix        string     `json:"fix,omitempty"`
	Evidence   []Evidence `json:"evidence,omitempty"`
	DurationMS int64      `json:"duration_ms"`
	// FixID is the catalogue id of the finding Fix came from, so that a
	// log report lists one action once (fixes.go).
	FixID string `json:"-"`
}

// Outcome is a check's finding with how long it took.
type Outcome struct {
	Check    *Check
	Finding  Finding
	Duration time.Duration
}

// Options controls a run.
type Options struct {
	// Timeout is each check's deadline; zero means 5 s.
	Timeout time.Duration
}

// Run executes checks concurrently, under one deadline. It returns
// the outcomes in the order of checks.
func Run(ctx context.Context, checks []*Check, env *Env, opts Options) []Outcome {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	answers := guard.All(ctx, timeout, len(checks), func(ctx context.Context, i int) (Finding, error) {
		return checks[i].Run(ctx, env), nil
	})
	out := make([]Outcome, len(checks))
	for i, a := range answers {
		out[i] = outcome(checks[i], a, timeout)
	}
	return out
}

func outcome(c *Check, a guard.Answer[Finding], timeout time.Duration) Outcome {
	f, err := a.Value, a.Err
	switch {
	case errors.Is(err, guard.ErrPanic):
		f = broken(Error, "check "+err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		f = broken(Timeout, fmt.Sprintf("no answer within %s", timeout))
	case err != nil:
		f = broken(Error, err.Error())
	}
	return Outcome{Check: c, Finding: f, Duration: a.Took}
}

// msgBroken is the common message of a check that could not run.
const msgBroken = "broken"

// broken is the finding of a check that failed to run.
func broken(s Status, why string) Finding {
	return Finding{Status: s, Msg: msgBroken, Args: Args{"error": why}}
}

// skip reports a check that does not apply, with the reason as a common
// message key.
func skip(reason string, args Args) Finding {
	return Finding{Status: Skip, Msg: reason, Args: args}
}

// Render turns an outcome into text in lang. A finding whose message is
// missing from the catalogue shows its key as the detail, so that a gap in
// a translation table is visible rather than blank.
func Render(o Outcome, lang Lang) Result {
	c, f := o.Check, o.Finding
	r := Result{
		ID:         c.ID,
		Title:      title(c.ID, lang),
		Status:     f.Status,
		Evidence:   f.Evidence,
		DurationMS: o.Duration.Milliseconds(),
	}
	m, ok := findingMessage(c.ID, f.Msg, lang)
	if !ok {
		r.Detail = f.Msg
	} else {
		m = m.Render(localArgs(f.Args, lang))
		r.Detail = m.Detail
		if f.Status != Pass && f.Status != Skip {
			r.Fix, r.FixID = strings.Join(m.Fixes, "; "), m.ID
		}
	}
	if len(f.Evidence) > 0 {
		parts := make([]string, len(f.Evidence))
		for i, e := range f.Evidence {
			parts[i] = e.Source + ": " + localValue(e.Value, lang)
		}
		r.Detail += " [" + strings.Join(parts, "; ") + "]"
	}
	return r
}

// orNone and orUnknown name a value that was not there, for templates.
func orNone(s string) string    { return cmp.Or(s, "none") }
func orUnknown(s string) string { return cmp.Or(s, "unknown") }

// RenderAll renders outcomes, keeping their order.
func RenderAll(os []Outcome, lang Lang) []Result {
	out := make([]Result, len(os))
	for i, o := range os {
		out[i] = Render(o, lang)
	}
	return out
}

// Counts tallies results by status.
func Counts(rs []Result) map[Status]int {
	m := map[Status]int{}
	for _, r := range rs {
		m[r.Status]++
	}
	return m
}

// Failed reports whether any result needs the user's action: a failure, a
// broken check, or (strict) a warning.
func Failed(rs []Result, strict bool) bool {
	for _, r := range rs {
		switch r.Status {
		case Fail, Error, Timeout:
			return true
		case Warn:
			if strict {
				return true
			}
		}
	}
	return false
}

// Select returns the checks with the given ids, in registry order. Unknown
// ids are returned as an error listing them.
func Select(all []*Check, ids []string) ([]*Check, error) {
	if len(ids) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id != "" {
			want[id] = true
		}
	}
	var out []*Check
	for _, c := range all {
		if want[c.ID] {
			out = append(out, c)
			delete(want, c.ID)
		}
	}
	if len(want) > 0 {
		var unknown []string
		for id := range want {
			unknown = append(unknown, id)
		}
		sort.Strings(unknown)
		ids := make([]string, len(all))
		for i, c := range all {
			ids[i] = c.ID
		}
		parts := make([]string, len(unknown))
		for i, id := range unknown {
			parts[i] = fmt.Sprintf("unknown check %q", id)
			if s := suggest.Closest(id, ids); s != "" {
				parts[i] += fmt.Sprintf(": did you mean %q?", s)
			}
		}
		return nil, errors.New(strings.Join(parts, "; "))
	}
	return out, nil
}
