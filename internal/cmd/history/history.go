// Package history is `devctl history`: the per-device record of runs
// that `devctl run` and `devctl doctor` keep, the rule that steers device
// selection by it, and `history clear`.
package history

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/report"
)

// formats are what -o offers.
var formats = output.Spec{output.Table, output.JSON, output.YAML}

// Options are `devctl history`'s flags and dependencies.
type Options struct {
	IO        *iostreams.IOStreams
	LookupEnv func(string) (string, bool)
	Output    string
	// Device lists that device's records instead of the summary.
	Device string

	format output.Format // set by Complete
}

// NewCmdHistory builds `devctl history` and `devctl history clear`. runF,
// when not nil, replaces the run step (tests stop after flag parsing).
func NewCmdHistory(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, LookupEnv: f.LookupEnv}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show how recent runs went on each device, or forget them",
		Long: `History shows, per device, the runs 'devctl run' and 'devctl doctor' recorded
($XDG_STATE_HOME/devctl/history.jsonl): attempts, successes, failures by
category, and the history rule's verdict. The rule: a device whose success rate
over its last 5 recorded runs is below 0.8 is passed over for the next device
in priority by probe, recommend and run; an explicit --device wins. The
attempts of one 'devctl run' count as one run, by their last outcome on the
device. Records hold only the time, device, category, outcome, recovery step
and duration: never output, arguments or environment values.`,
		Example: `  devctl history
  devctl history --device cuda
  devctl history -o json
  devctl history clear`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.Execute(c.Context(), opts, runF)
		},
	}
	formats.Register(cmd.Flags(), &opts.Output, "")
	cmd.Flags().StringVar(&opts.Device, "device", "", "list this device's records (cuda, mps, cpu, ...)")
	cmd.AddCommand(&cobra.Command{
		Use:   "clear",
		Short: "Forget every recorded run",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			p, err := history.Path(f.LookupEnv)
			if err != nil {
				return cmdutil.Usagef("%w", err)
			}
			if err := history.Clear(p); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "history cleared (%s)\n", p)
			return nil
		},
	})
	return cmd
}

// Complete parses -o.
func (o *Options) Complete() (err error) {
	o.format, err = formats.Parse(o.Output)
	return err
}

// Validate has nothing to check beyond -o.
func (o *Options) Validate() error { return nil }

// Run loads the history and prints it.
func (o *Options) Run(context.Context) error {
	format := o.format
	p, err := history.Path(o.LookupEnv)
	if err != nil {
		return cmdutil.Usagef("%w", err)
	}
	recs, err := history.LoadFile(p)
	if err != nil {
		return err
	}
	s := history.Report{File: p, Devices: []history.DeviceReport{}}
	dev := history.NormalizeDevice(o.Device)
	for _, sum := range recs.Summaries() {
		if dev == "" || sum.Device == dev {
			s.Devices = append(s.Devices, history.DeviceReport{DeviceSummary: sum, Rule: recs.Judge(sum.Device)})
		}
	}
	if dev != "" || format != output.Table {
		for _, r := range recs {
			if dev == "" || r.Device == dev {
				s.Records = append(s.Records, r)
			}
		}
	}
	if ok, err := output.Export(o.IO.Out, format, s); ok {
		return err
	}
	if dev != "" {
		return recordsTable(o.IO.Out, s.Records, dev)
	}
	return devicesTable(o.IO.Out, s)
}

func devicesTable(w io.Writer, s history.Report) error {
	if len(s.Devices) == 0 {
		_, err := fmt.Fprintf(w, "No runs recorded yet (%s). `devctl run -- CMD` and `devctl doctor --log` record them.\n", s.File)
		return err
	}
	rows := make([][]string, len(s.Devices))
	for i, d := range s.Devices {
		rule := "ok"
		switch {
		case d.Rule.Runs == 0:
			rule = "-"
		case d.Rule.PassOver:
			rule = "PASSED OVER"
		}
		last := ""
		if !d.LastTime.IsZero() {
			last = d.LastTime.UTC().Format(time.RFC3339)
		}
		rows[i] = []string{d.Device, strconv.Itoa(d.Runs), strconv.Itoa(d.Successes), strconv.Itoa(d.Failures),
			fmt.Sprintf("%d/%d", d.Rule.Successes, d.Rule.Runs), rule, d.LastCategory, last}
	}
	if err := report.RenderTable(w, []string{"DEVICE", "ATTEMPTS", "OK", "FAILED", "LAST 5 RUNS OK", "RULE", "LAST FAILURE", "LAST SEEN"}, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "Rule: a device whose success rate over its last %d runs is below %.1f is passed over (an explicit --device wins).\n", history.RuleWindow, history.RuleThreshold)
	return err
}

func recordsTable(w io.Writer, rs history.Records, dev string) error {
	if len(rs) == 0 {
		_, err := fmt.Fprintf(w, "No runs recorded on %s.\n", dev)
		return err
	}
	rows := make([][]string, len(rs))
	for i, r := range rs {
		dur, att := "", ""
		if r.DurationMS > 0 {
			dur = (time.Duration(r.DurationMS) * time.Millisecond).String()
		}
		if r.Attempt > 0 {
			att = strconv.Itoa(r.Attempt)
		}
		src := "run " + r.Run
		if r.Run == "" {
			src = "doctor"
		}
		rows[i] = []string{r.Time.UTC().Format(time.RFC3339), r.Outcome, r.Category, src, att, r.Step, dur}
	}
	return report.RenderTable(w, []string{"TIME", "OUTCOME", "CATEGORY", "FROM", "ATTEMPT", "STEP", "DURATION"}, rows)
}
