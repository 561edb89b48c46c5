// Package history is `devctl history`: this machine's record of runs on
// each device, the rule that steers device selection by it, the memory
// runs measured beside their plans, and `history clear`.
package history

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/units"
)

// formats are what -o offers.
var formats = output.Spec{output.Table, output.JSON, output.YAML}

// MeasuredRows is how many measured attempts the table shows.
const MeasuredRows = 10

// Options are `devctl history`'s flags and dependencies.
type Options struct {
	IO *iostreams.IOStreams
	// Log opens this machine's history (the file and the machine's id).
	Log    func() (*history.Log, error)
	Output string
	// Device lists that device's records instead of the summary.
	Device string

	format output.Format // set by Complete
}

// ClearOptions are `devctl history clear`'s.
type ClearOptions struct {
	IO  *iostreams.IOStreams
	Log func() (*history.Log, error)
	// Yes clears without asking (scripts).
	Yes bool
	// Terminal reports whether the user can be asked: standard input and
	// standard error are terminals.
	Terminal func() bool
}

// NewCmdHistory builds `devctl history` and `devctl history clear`. runF,
// when not nil, replaces the run step (tests stop after flag parsing).
func NewCmdHistory(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := NewOptions(f)
	open := opts.Log
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show how runs went on each device of this machine, or forget them",
		Long: `History shows this machine's record of runs ($XDG_STATE_HOME/devctl/history.jsonl),
written by 'devctl run' (every attempt), 'devctl doctor --log --record',
'devctl doctor --record-success' and self-tests: per device the attempts,
successes and failures, which failures count against the device, the
history rule's verdict, the verdicts per operation, and the device memory
runs measured beside their plans.

The rule: a device is passed over for the next in priority by probe,
recommend and run when, over its last 5 counted runs (at least 3), fewer
than 80% succeeded. Only failures that say the device is unwell count (lost
from the bus, Xid and ECC faults, driver and runtime failures), and, for one
operation, an operation the backend does not implement; out of memory and
bugs in the program are recorded but never count. An explicit --device
wins; with device.fallback_enabled false devctl warns and never moves.

Records hold the time, this machine's hashed id, device, operation,
category, outcome, recovery step, duration and measured memory: never
output, arguments or environment values.`,
		Example: `  devctl history
  devctl history --device cuda
  devctl history -o json
  devctl history clear --yes`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.Execute(c.Context(), opts, runF)
		},
	}
	formats.Register(cmd.Flags(), &opts.Output, "")
	cmd.Flags().StringVar(&opts.Device, "device", "", "list this device's records (cuda, mps, cpu, ...)")

	co := &ClearOptions{IO: f.IO, Log: open, Terminal: func() bool { return isTerminal(f.IO.In) && isTerminal(f.IO.ErrOut) }}
	clear := &cobra.Command{
		Use:   "clear",
		Short: "Forget every recorded run",
		Long: `Clear forgets every record in the history file. On a terminal it asks
first; a script must say --yes (without a terminal and without --yes it
refuses, exit 2).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return co.Run() },
	}
	clear.Flags().BoolVarP(&co.Yes, "yes", "y", false, "clear without asking")
	cmd.AddCommand(clear)
	return cmd
}

// NewOptions are `devctl history`'s options with the factory's
// dependencies: `doctor history` and `doctor --history` run the same.
func NewOptions(f *cmdutil.Factory) *Options {
	return &Options{IO: f.IO, Log: func() (*history.Log, error) {
		// This machine's history, also under --from or --sysroot: reading
		// it says nothing about the replayed machine.
		l, err := history.Open(f.LookupEnv, f.MachineID(), f.Now)
		if err != nil {
			return nil, cmdutil.Usagef("%w", err)
		}
		return l, nil
	}}
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Complete parses -o.
func (o *Options) Complete() (err error) {
	o.format, err = formats.Parse(o.Output)
	return err
}

// Validate has nothing to check beyond -o.
func (o *Options) Validate() error { return nil }

// Run loads this machine's history and prints it.
func (o *Options) Run(context.Context) error {
	l, err := o.Log()
	if err != nil {
		return err
	}
	recs, others, err := l.Load()
	if err != nil {
		return err
	}
	s := Build(l, recs, others, o.Device, o.format != output.Table)
	if ok, err := output.Export(o.IO.Out, o.format, s); ok {
		return err
	}
	if o.Device != "" {
		return recordsTable(o.IO.Out, s.Records, history.NormalizeDevice(o.Device))
	}
	return summaryTables(o.IO.Out, s)
}

// Build assembles the report: every device's summary and verdict, the
// verdicts per operation, the newest measured attempts, and the records
// (of one device, or all when withRecords).
func Build(l *history.Log, recs history.Records, others int, device string, withRecords bool) history.Report {
	s := history.Report{SchemaVersion: history.ReportVersion, File: l.Path, Machine: l.Machine, OtherMachines: others, Devices: []history.DeviceReport{}}
	dev := history.NormalizeDevice(device)
	for _, sum := range recs.Summaries() {
		if dev != "" && sum.Device != dev {
			continue
		}
		s.Devices = append(s.Devices, history.DeviceReport{DeviceSummary: sum, Rule: recs.Judge(sum.Device)})
		for _, op := range sum.Operations {
			s.Operations = append(s.Operations, recs.JudgeFor(sum.Device, op))
		}
	}
	for _, r := range recs.Measured(MeasuredRows) {
		if dev == "" || r.Device == dev {
			s.Measured = append(s.Measured, r)
		}
	}
	if dev != "" || withRecords {
		for _, r := range recs {
			if dev == "" || r.Device == dev {
				s.Records = append(s.Records, r)
			}
		}
	}
	return s
}

// Empty is what `devctl history` (and `doctor history`) print when this
// machine has no record.
func Empty(file string) string {
	return fmt.Sprintf("No runs recorded on this machine yet (%s). `devctl run -- CMD` records every attempt; `devctl doctor --log FILE --record` and `devctl doctor --record-success` record one outcome.", file)
}

func summaryTables(w io.Writer, s history.Report) error {
	if len(s.Devices) == 0 {
		_, err := fmt.Fprintln(w, Empty(s.File))
		return err
	}
	rows := make([][]string, len(s.Devices))
	for i, d := range s.Devices {
		last := ""
		if !d.LastTime.IsZero() {
			last = d.LastTime.UTC().Format(time.RFC3339)
		}
		rows[i] = []string{d.Device, strconv.Itoa(d.Attempts), strconv.Itoa(d.Successes), strconv.Itoa(d.Failures),
			strconv.Itoa(d.DeviceFaults + d.OperationFaults), fmt.Sprintf("%d/%d", d.Rule.Successes, d.Rule.Runs), verdict(d.Rule), d.LastCategory, last}
	}
	if err := report.RenderTable(w, []string{"DEVICE", "ATTEMPTS", "OK", "FAILED", "COUNTED", "LAST 5 COUNTED OK", "RULE", "LAST FAILURE", "LAST SEEN"}, rows); err != nil {
		return err
	}
	if len(s.Operations) > 0 {
		fmt.Fprintln(w)
		rows = rows[:0]
		for _, v := range s.Operations {
			rows = append(rows, []string{v.Device, v.Operation, fmt.Sprintf("%d/%d", v.OperationSuccesses, v.OperationRuns), verdict(v), v.TopCategory})
		}
		if err := report.RenderTable(w, []string{"DEVICE", "OPERATION", "LAST 5 OK", "RULE", "MOST OFTEN"}, rows); err != nil {
			return err
		}
	}
	if len(s.Measured) > 0 {
		fmt.Fprintf(w, "\nDevice memory of the newest measured attempts (peak of the busiest device, beside the plan's estimate per device):\n")
		rows = rows[:0]
		for _, r := range s.Measured {
			rows = append(rows, measuredRow(r))
		}
		if err := report.RenderTable(w, []string{"TIME", "DEVICE", "OUTCOME", "PEAK", "PLAN", "PEAK/PLAN", "PLANNED FOR", "METHOD"}, rows); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "Rule: a device is passed over when fewer than %.0f%% of its last %d counted runs (at least %d) succeeded; only device faults (and, per operation, unsupported operations) count, never out of memory or bugs in the program. An explicit --device wins; with device.fallback_enabled false devctl only warns.\n",
		history.RuleThreshold*100, history.RuleWindow, history.RuleMinRuns)
	if s.OtherMachines > 0 {
		fmt.Fprintf(w, "%d records of other machines sharing this file are not shown.\n", s.OtherMachines)
	}
	return nil
}

func verdict(v history.Verdict) string {
	switch {
	case v.PassOver:
		return "PASSED OVER"
	case v.Runs == 0 && v.OperationRuns == 0:
		return "-"
	}
	return "ok"
}

func measuredRow(r history.Record) []string {
	m := r.Memory
	plan, ratio, planned := "-", "-", "-"
	if m.Plan != nil {
		plan, planned = units.Bytes(m.Plan.Bytes).String(), m.Plan.Settings()
		if x := m.Ratio(); x > 0 {
			ratio = fmt.Sprintf("%.2f", x)
		}
	}
	return []string{r.Time.UTC().Format(time.RFC3339), r.Device, r.Outcome, units.Bytes(m.PeakBytes).String(), plan, ratio, planned, m.Method}
}

func recordsTable(w io.Writer, rs history.Records, dev string) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintf(w, "No runs recorded on %s on this machine.\n", dev)
		return err
	}
	rows := make([][]string, len(rs))
	for i, r := range rs {
		dur, att, peak, plan := "", "", "", ""
		if r.DurationMS > 0 {
			dur = (time.Duration(r.DurationMS) * time.Millisecond).String()
		}
		if r.Attempt > 0 {
			att = strconv.Itoa(r.Attempt)
		}
		if m := r.Memory; m != nil && m.PeakBytes > 0 {
			peak = units.Bytes(m.PeakBytes).String()
			if m.Plan != nil {
				plan = units.Bytes(m.Plan.Bytes).String()
			}
		}
		src := r.Source
		switch {
		case r.Run != "":
			src = "run " + r.Run
		case src == "":
			src = "doctor"
		}
		counts := ""
		if r.Outcome == history.Failure {
			counts = history.ScopeOf(r.Category, r.MessageID).String()
		}
		rows[i] = []string{r.Time.UTC().Format(time.RFC3339), r.Outcome, r.Category, counts, r.Operation, src, att, r.Step, dur, peak, plan}
	}
	return report.RenderTable(w, []string{"TIME", "OUTCOME", "CATEGORY", "COUNTS AGAINST", "OPERATION", "FROM", "ATTEMPT", "STEP", "DURATION", "PEAK", "PLAN"}, rows)
}

// Run clears the history after asking (or with --yes).
func (o *ClearOptions) Run() error {
	l, err := o.Log()
	if err != nil {
		return err
	}
	if !o.Yes {
		if !o.Terminal() {
			return cmdutil.Usagef("history clear forgets every record in %s: give --yes to clear without a terminal to ask on", l.Path)
		}
		fmt.Fprintf(o.IO.ErrOut, "Forget every record in %s? [y/N] ", l.Path)
		line, _ := bufio.NewReader(o.IO.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(o.IO.ErrOut, "history not cleared")
			return &cmdutil.ExitError{Code: 1, Msg: ""}
		}
	}
	if err := l.Clear(); err != nil {
		return err
	}
	fmt.Fprintf(o.IO.ErrOut, "history cleared (%s)\n", l.Path)
	return nil
}
