// Package doctor is the `devctl doctor` command: diagnose the machine's
// devices, and explain a failed run's log grounded in this machine's state.
package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	historycmd "github.com/devctl/devctl/internal/cmd/history"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/interrupt"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/drivers"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/selftest"
	"github.com/devctl/devctl/internal/userfile"
)

// formats are what -o offers.
var formats = output.Spec{output.Table, output.JSON, output.YAML}

// Options are the command's flags and the dependencies it uses.
type Options struct {
	IO        *iostreams.IOStreams
	LookupEnv func(string) (string, bool)
	Now       func() time.Time
	// Timeout is each check's deadline and how long a --log read may wait
	// (--timeout).
	Timeout func() time.Duration
	// Env probes the machine once for all checks (see buildEnv).
	Env func(ctx context.Context) (*doctor.Env, error)

	Output        string
	Checks        []string
	List          bool
	Log           string
	ModelParams   string
	Mode          string
	Lang          string
	Strict        bool
	FailOn        string
	History       bool
	RecordSuccess bool
	// Record, with Log, appends the log's outcome to the history. Off by
	// default: a log pasted from another machine, a colleague's job or an
	// issue thread says nothing about this one.
	Record bool
	// RunChecks, with Log, also runs the checks related to the log's
	// category and adds this machine's facts.
	RunChecks bool
	// Selftest runs the on-device self-test beside the checks, with
	// Python (--python, "" to choose from the probe) and SelftestTimeout.
	Selftest        bool
	Python          string
	SelftestTimeout time.Duration
	// Environ is the user's environment, which the self-test's children
	// inherit (less proxies); Live is false with --sysroot or --from.
	Environ func() []string
	Live    func() bool
	// Operation names what the recorded run did (--operation): the
	// history judges a device per operation.
	Operation string

	// HistoryLog opens this machine's history for --record and
	// --record-success (cmdutil.HistoryLog: a replay is refused).
	HistoryLog func() (*history.Log, error)
	// ShowHistory prints `devctl history` in the format (--history).
	ShowHistory func(ctx context.Context, format string) error
	// Verbose lists every skipped check; plain `doctor` folds them into
	// one line.
	Verbose bool

	format output.Format // set by Complete
	lang   doctor.Lang
}

// NewCmdDoctor builds `devctl doctor`. runF, when not nil, replaces the run
// step (tests stop after flag parsing).
func NewCmdDoctor(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO: f.IO, LookupEnv: f.LookupEnv, Now: f.Now,
		Env:        func(ctx context.Context) (*doctor.Env, error) { return buildEnv(ctx, f) },
		Environ:    os.Environ,
		Live:       func() bool { return f.Global == nil || (f.Global.Sysroot == "" && f.Global.From == "") },
		HistoryLog: func() (*history.Log, error) { return cmdutil.HistoryLog(f) },
		ShowHistory: func(ctx context.Context, format string) error {
			o := historycmd.NewOptions(f)
			o.Output = format
			return cmdutil.RunSteps(ctx, o)
		},
		Timeout: func() time.Duration {
			if f.Global == nil {
				return 0
			}
			return f.Global.Timeout
		},
	}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Find what is wrong with the machine's devices, or explain a failed run's log",
		Long: `Doctor runs checks on the machine's devices and their software (NVIDIA driver,
NVML, device nodes, containers, framework CUDA runtimes, visibility variables,
ECC, throttling, MIG, /dev/shm, cgroup limits, IOMMU, ROCm, TPU, Apple, WSL2,
Jetson, CPU features, DEVCTL_/XLA_/PYTORCH_ variables). Each finding names its
evidence and one fix.

With --log it reads a traceback or job log, names what went wrong (category,
device, evidence, numbers), explains it and lists fixes. That is all it does
by default: a log may come from another machine, so nothing about this one is
probed, checked or recorded. --checks adds the checks that bear on the log's
category and this machine's facts (driver, memory, other processes); --check
runs the named ones. --record appends the outcome to the per-device history
($XDG_STATE_HOME/devctl/history.jsonl: time, device, category, outcome; never
log text).

Exit codes:
  0  no check reached --fail-on; with --log, the log was read (explained, or
     nothing device-related recognised: see the category)
  1  a runtime error (devctl itself failed)
  2  bad usage: a bad flag, value, or an unreadable --log
  3  a check reached --fail-on (fail by default, warn with --fail-on warn or
     --strict); with --log only when checks ran (--checks or --check)
Messages are in English, or Polish with --lang pl or a Polish LANG/LC_ALL.`,
		Example: `  devctl doctor
  devctl doctor --check nvidia.driver_loaded,env.visible_devices
  devctl doctor list
  devctl doctor --log train.log
  devctl doctor --log train.log --checks --record
  python train.py 2>&1 | tail -200 | devctl doctor --log - --model-params 7B
  devctl doctor --record-success --device mps
  devctl doctor history
  devctl doctor -o json --fail-on warn
  devctl doctor --selftest
  devctl doctor --selftest --python ~/venvs/train/bin/python -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	fl := cmd.Flags()
	formats.Register(fl, &opts.Output, "table is plain when piped")
	fl.StringSliceVar(&opts.Checks, "check", nil, "run only these checks (comma-separated ids; see 'devctl doctor list')")
	fl.BoolVar(&opts.List, "list", false, "same as 'devctl doctor list' (kept for scripts)")
	fl.StringVar(&opts.Log, "log", "", "explain this error log or traceback (- reads standard input)")
	fl.StringVar(&opts.ModelParams, "model-params", "", "with --log on an out-of-memory error: the model's parameter count (e.g. 7B) to plan a fit")
	fl.StringVar(&opts.Mode, "mode", "training", "with --model-params: what the run did: training, inference, lora, qlora")
	fl.StringVar(&opts.Lang, "lang", "", "message language: en or pl (default from LC_ALL, LC_MESSAGES, LANG)")
	fl.BoolVar(&opts.Strict, "strict", false, "exit 3 on warnings too (same as --fail-on warn)")
	fl.StringVar(&opts.FailOn, "fail-on", "fail", "lowest check status that exits 3: warn or fail (fail also counts checks that broke or timed out)")
	fl.BoolVar(&opts.History, "history", false, "same as 'devctl history' (kept for scripts)")
	fl.BoolVar(&opts.RecordSuccess, "record-success", false, "record a successful run for the device (--device, or the default device) and exit")
	fl.BoolVar(&opts.Record, "record", false, "with --log: record the log's outcome in this machine's history (off: a log may come from elsewhere)")
	fl.StringVar(&opts.Operation, "operation", "", "with --record or --record-success: what the run did (the history judges a device per operation)")
	fl.BoolVar(&opts.RunChecks, "checks", false, "with --log: also run the checks related to the log's category and show this machine's facts")
	fl.BoolVar(&opts.Selftest, "selftest", false, "also run the on-device self-test: your Python runs small operations on each device torch, jax and tensorflow expose (bounded: --selftest-timeout, a process group, no network)")
	fl.StringVar(&opts.Python, "python", "", "with --selftest: the interpreter to test (default: the active venv or conda env, else the first python on PATH, pyenv/asdf shims resolved)")
	fl.DurationVar(&opts.SelftestTimeout, "selftest-timeout", selftest.DefaultTimeout, "with --selftest: the self-test's time limit (its children are killed when it ends)")
	fl.BoolVarP(&opts.Verbose, "verbose", "v", false, "list every skipped check with its reason (plain doctor counts them in one line)")
	cmd.AddCommand(newCmdList(f), newCmdHistory(f))
	return cmd
}

// newCmdHistory is `doctor history`: the same command as `devctl history`,
// kept for scripts (--lang is accepted and ignored: the history is not
// translated).
func newCmdHistory(f *cmdutil.Factory) *cobra.Command {
	cmd := historycmd.NewCmdHistory(f, nil)
	cmd.Short = "Same as 'devctl history'"
	cmd.Flags().String("lang", "", "ignored (kept for scripts)")
	_ = cmd.Flags().MarkHidden("lang")
	return cmd
}

// ModeOptions are the flags of the modes that only print a list: `doctor
// list` and `doctor history` (and their old spellings --list, --history).
type ModeOptions struct {
	IO        *iostreams.IOStreams
	LookupEnv func(string) (string, bool)
	Output    string
	Lang      string

	format output.Format
	lang   doctor.Lang
}

// Complete parses -o and --lang (default from the locale variables).
func (o *ModeOptions) Complete() error {
	format, err := formats.Parse(o.Output)
	if err != nil {
		return err
	}
	o.format, o.lang = format, doctor.DetectLang(o.LookupEnv)
	if o.Lang != "" {
		if o.lang, err = doctor.ParseLang(o.Lang); err != nil {
			return cmdutil.Usagef("%w", err)
		}
	}
	return nil
}

func newModeCmd(f *cmdutil.Factory, use, short string, run func(*ModeOptions) error) *cobra.Command {
	o := &ModeOptions{IO: f.IO, LookupEnv: f.LookupEnv}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			return run(o)
		},
	}
	formats.Register(cmd.Flags(), &o.Output, "")
	cmd.Flags().StringVar(&o.Lang, "lang", "", "message language: en or pl (default from LC_ALL, LC_MESSAGES, LANG)")
	return cmd
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	return newModeCmd(f, "list", "List every check (id, title)", runList)
}

func runList(o *ModeOptions) error {
	infos := doctor.List(doctor.All(), o.lang)
	if ok, err := output.Export(o.IO.Out, o.format, map[string]any{"checks": infos}); ok {
		return err
	}
	return ListTable(o.IO.Out, infos, o.lang)
}

// Run completes, validates, diagnoses and prints.
func Run(ctx context.Context, opts *Options) error { return cmdutil.RunSteps(ctx, opts) }

// Complete parses -o and --lang (default from the locale variables).
func (opts *Options) Complete() error {
	var err error
	if opts.format, err = formats.Parse(opts.Output); err != nil {
		return err
	}
	opts.lang = doctor.DetectLang(opts.LookupEnv)
	if opts.Lang != "" {
		if opts.lang, err = doctor.ParseLang(opts.Lang); err != nil {
			return cmdutil.Usagef("%w", err)
		}
	}
	return nil
}

// Validate refuses flag combinations that mean nothing.
func (opts *Options) Validate() error { return validate(opts) }

// Run diagnoses and prints; the options are complete and valid.
func (opts *Options) Run(ctx context.Context) error {
	format, lang := opts.format, opts.lang
	all := doctor.All()
	mode := &ModeOptions{IO: opts.IO, LookupEnv: opts.LookupEnv, format: format, lang: lang}
	switch {
	case opts.List:
		return runList(mode)
	case opts.History:
		return opts.ShowHistory(ctx, opts.Output)
	}
	var hist *history.Log
	if opts.Record || opts.RecordSuccess {
		var err error
		if hist, err = opts.HistoryLog(); err != nil {
			if errors.Is(err, cmdutil.ErrReplay) {
				return cmdutil.Usagef("--record and --record-success write this machine's history: %w", err)
			}
			return cmdutil.Usagef("%w", err)
		}
	}
	checks, err := doctor.Select(all, opts.Checks)
	if err != nil {
		return cmdutil.Usagef("%w (see 'devctl doctor list')", err)
	}

	var params int64
	if opts.ModelParams != "" {
		if params, err = recommend.ParseParams(opts.ModelParams); err != nil {
			return cmdutil.Usagef("invalid --model-params %q: %w", opts.ModelParams, err)
		}
	}
	var logExp *explain.Explanation
	if opts.Log != "" {
		e, err := readLog(opts.IO.In, opts.Timeout(), opts.Log)
		if err != nil {
			return err
		}
		logExp = &e
	}
	// A log alone needs nothing from this machine; probing it would only
	// cost time and mix its state into an explanation of someone else's run.
	runChecks := logExp == nil || opts.RunChecks || len(opts.Checks) > 0
	var env *doctor.Env
	if runChecks || opts.Record || params > 0 {
		if env, err = opts.Env(ctx); err != nil {
			return err
		}
	}
	if opts.RecordSuccess {
		dev := deviceKey(env, "")
		if err := presentDevice(env, dev); err != nil {
			return err
		}
		if err := hist.Append(history.Record{Device: dev, Operation: opts.Operation, Source: history.SourceDoctor, Outcome: history.Success}); err != nil {
			return fmt.Errorf("recording success: %w", err)
		}
		fmt.Fprintln(opts.IO.Out, recordedSuccess(dev, lang))
		return nil
	}
	if logExp != nil && len(opts.Checks) == 0 {
		checks = doctor.RelatedChecks(all, logExp.Category)
	}
	// The self-test runs beside the checks, under its own time limit: a
	// wedged device delays neither.
	var selftestDone chan *selftest.Outcome
	if opts.Selftest {
		selftestDone = make(chan *selftest.Outcome, 1)
		req := doctor.SelftestRequest{Python: opts.Python, Timeout: opts.SelftestTimeout, Environ: opts.Environ(), Live: opts.Live()}
		go func() { selftestDone <- doctor.RunSelftest(ctx, env, req) }()
	}
	results := []doctor.Result{}
	if runChecks {
		outcomes := doctor.Run(ctx, checks, env, doctor.Options{Timeout: opts.Timeout()})
		if err := interrupt.Err(ctx); err != nil {
			return err // checks a signal cut short neither passed nor timed out
		}
		results = doctor.RenderAll(outcomes, lang)
	}
	rep := &doctor.Report{SchemaVersion: doctor.SchemaVersion, Lang: lang, Checks: results, Summary: doctor.Counts(results)}
	if selftestDone != nil {
		rep.Selftest = <-selftestDone
		opts.recordSelftest(rep.Selftest)
	}

	if logExp != nil {
		cat := explain.NewCatalog()
		m := logExp.Message(cat, string(lang))
		facts := env
		if !runChecks {
			facts = nil // the explanation alone: no facts about this machine
		}
		rep.Log = doctor.BuildLogReport(ctx, *logExp, doctor.LogMessage{ID: m.ID, Title: m.Title, Explanation: m.Explanation, Fixes: m.Fixes}, facts, results, lang)
		if params > 0 && (logExp.Category == explain.CategoryOutOfMemory || logExp.Category == explain.CategoryXLAResourceExhausted) {
			mode, _ := oomsim.Parse(opts.Mode, oomsim.Modes)
			o := doctor.OOMOptions{Params: params, Mode: mode, Fraction: 1, Fallback: true}
			if env.Config != nil {
				o.Precision = env.Config.Device.Precision
				o.Fallback = env.Config.Device.FallbackEnabled
			}
			if plan, err := doctor.PlanOOM(*logExp, env, o); err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "devctl: no out-of-memory plan: %v\n", err)
			} else {
				rep.Log.OOMPlan = plan
			}
		}
		if opts.Record {
			opts.recordLog(hist, env, *logExp)
		}
	}

	if ok, xerr := output.Export(opts.IO.Out, format, rep); ok {
		err = xerr
	} else {
		// All checks on a machine that has none of most vendors' hardware
		// skip most of them: a count says as much as 23 lines, unless -v,
		// --check or --log asked for those very checks.
		fold := !opts.Verbose && len(opts.Checks) == 0 && opts.Log == ""
		err = TableWith(opts.IO.Out, rep, report.NewStyle(opts.IO.Out, opts.IO.ColorEnabled()), TableOptions{FoldSkips: fold})
	}
	if err != nil {
		return err
	}
	// Explaining a log is not a finding about this machine: only checks
	// decide exit 3.
	if doctor.Failed(results, opts.Strict) || doctor.SelftestFailed(rep.Selftest, opts.Strict) {
		return &cmdutil.ExitError{Code: cmdutil.ExitFound}
	}
	return nil
}

// validate refuses flag combinations that mean nothing.
func validate(opts *Options) error {
	modes := 0
	for _, on := range []bool{opts.List, opts.History, opts.RecordSuccess, opts.Log != ""} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return cmdutil.Usagef("--list, --history, --record-success and --log cannot be combined: pick one")
	}
	switch opts.FailOn {
	case "fail":
	case "warn":
		opts.Strict = true
	default:
		return cmdutil.Usagef("invalid --fail-on %q: want warn or fail", opts.FailOn)
	}
	if opts.Log == "" && (opts.Record || opts.RunChecks) {
		return cmdutil.Usagef("--record and --checks go with --log: without a log, doctor always runs its checks and records nothing")
	}
	if opts.Selftest && (opts.Log != "" || opts.List || opts.History || opts.RecordSuccess) {
		return cmdutil.Usagef("--selftest goes with the checks: it cannot be combined with --log, --list, --history or --record-success")
	}
	if !opts.Selftest && (opts.Python != "" || opts.SelftestTimeout != selftest.DefaultTimeout) {
		return cmdutil.Usagef("--python and --selftest-timeout go with --selftest")
	}
	if opts.Selftest && opts.SelftestTimeout <= 0 {
		return cmdutil.Usagef("invalid --selftest-timeout %s: want a positive duration such as 10s or 1m", opts.SelftestTimeout)
	}
	if opts.ModelParams != "" && opts.Log == "" {
		return cmdutil.Usagef("--model-params needs --log: it plans a fit for an out-of-memory log")
	}
	if _, ok := oomsim.Parse(opts.Mode, oomsim.Modes); !ok {
		return cmdutil.Usagef("invalid --mode %q: want training, inference, lora or qlora", opts.Mode)
	}
	return nil
}

// MaxLogStream bounds what is read from a log that is a stream (standard
// input, a pipe): only its last explain.MaxTail bytes count, and a stream
// that never ends (--log - < /dev/zero) must not keep doctor reading.
const MaxLogStream = 1 << 30

// readLog classifies the log at path ("-" is standard input), reading at
// most explain.MaxTail bytes of its end. A file's reads wait at most
// --timeout for data (/proc/kmsg, a FIFO nobody writes); a stream is
// bounded by MaxLogStream bytes, not by time, so a job can be piped in.
func readLog(stdin io.Reader, timeout time.Duration, path string) (explain.Explanation, error) {
	var r io.Reader
	skippedLines := 0
	if path == "-" {
		r = stdin
	} else {
		fh, st, err := userfile.OpenWithin(path, timeout)
		switch {
		case errors.Is(err, userfile.ErrDirectory):
			return explain.Explanation{}, cmdutil.Usagef("cannot read --log %q: it is a directory; want a log file or - for standard input", path)
		case errors.Is(err, userfile.ErrDevice):
			return explain.Explanation{}, cmdutil.Usagef("cannot read --log %q: it is a device or socket; want a log file, a pipe or - for standard input", path)
		case err != nil:
			return explain.Explanation{}, cmdutil.Usagef("cannot read --log %q: %w", path, err)
		}
		defer fh.Close()
		// The primary error sits at the end of a failed run: only the tail
		// of a large file is classified. Its lines are counted on the way
		// (a fast byte count) so line numbers count from the file's start.
		if st.Mode().IsRegular() && st.Size() > explain.MaxTail {
			n, err := countLines(io.LimitReader(fh, st.Size()-explain.MaxTail))
			if err != nil {
				return explain.Explanation{}, cmdutil.Usagef("cannot read --log %q: %w", path, userfile.Bare(err))
			}
			skippedLines = n
		}
		r = fh
	}
	e, err := explain.ClassifyReader(userfile.Limit(r, MaxLogStream))
	var big *userfile.TooLargeError
	switch {
	case errors.As(err, &big):
		return e, cmdutil.Usagef("cannot read --log %q: more than %d MiB without an end; give the log file's path (doctor reads only its last %d MiB)", path, MaxLogStream>>20, explain.MaxTail>>20)
	case err != nil:
		return e, cmdutil.Usagef("cannot read --log %q: %w", path, userfile.Bare(errors.Unwrap(err)))
	}
	if e.Line > 0 {
		e.Line += skippedLines
	}
	return e, nil
}

// countLines counts the newlines in r.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 1<<20)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// buildEnv probes the machine once for all checks. A configuration that
// does not load because of DEVCTL_* variables or the user file is a finding
// (env.devctl), not a reason to stop: doctor is what users run when things
// are broken. Only a bad flag stops it (exit 2).
func buildEnv(ctx context.Context, f *cmdutil.Factory) (*doctor.Env, error) {
	h, err := f.Host()
	if err != nil {
		return nil, err
	}
	env := &doctor.Env{Host: h}
	cfg, cfgErr := f.Config()
	if cfgErr != nil {
		if !errors.Is(cfgErr, config.ErrInvalid) {
			return nil, cfgErr
		}
		flagsOnly, err := config.Load(config.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }, Flags: f.Global.ConfigFlags})
		if err != nil {
			return nil, cfgErr
		}
		env.ConfigErr, cfg = cfgErr, flagsOnly
	}
	env.Config = cfg
	if cfgErr == nil {
		rep, outcomes, err := cmdutil.RunProbe(ctx, f, nil)
		// A requested device that is absent with fallback off is a usage
		// error (exit 2), as it is for probe and recommend.
		if err != nil && (rep == nil || errors.Is(err, probe.ErrDeviceUnavailable)) {
			return nil, err
		}
		env.Report, env.Outcomes = rep, outcomes
		return env, nil
	}
	// The configuration is broken: probe with what the flags say and fall
	// back freely, so the checks still see the machine.
	o := f.ProbeOptions(cfg)
	o.FallbackEnabled = true
	rep, outcomes, _ := probe.Run(ctx, h, drivers.All(), o)
	env.Report, env.Outcomes = rep, outcomes
	return env, nil
}

// deviceKey is the backend a history record is kept under: the log's own
// device, else --device/DEVCTL_DEVICE, else the probe's default backend.
func deviceKey(env *doctor.Env, logDevice string) string {
	if logDevice != "" && logDevice != string(explain.DeviceAny) {
		return history.NormalizeDevice(logDevice)
	}
	if env.Config != nil {
		if p := history.NormalizeDevice(env.Config.Device.Preferred); p != "" && p != "auto" {
			return p
		}
	}
	if env.Report != nil && env.Report.Summary.Backend != "" {
		return string(env.Report.Summary.Backend)
	}
	return "cpu"
}

// presentDevice refuses a success for a device this machine does not have
// (--record-success --device mps on a Linux server): the record would
// teach the rule about hardware that is not here.
func presentDevice(env *doctor.Env, backendKey string) error {
	if env == nil || env.Report == nil {
		return nil
	}
	var ids []string
	for _, d := range env.Report.Devices {
		if !d.Usable() {
			continue
		}
		if string(d.Backend) == backendKey {
			return nil
		}
		ids = append(ids, d.ID)
	}
	if len(ids) == 0 {
		ids = []string{"none"}
	}
	return cmdutil.Usagef("--record-success: this machine has no usable %s device (found: %s); record a success for the device the job ran on", backendKey, strings.Join(ids, ", "))
}

// recordLog appends the log's outcome to the history. Failing to record
// is reported but never fails the command: the diagnosis matters more.
func (opts *Options) recordLog(hist *history.Log, env *doctor.Env, e explain.Explanation) {
	outcome := history.Failure
	if e.Category == explain.CategoryUnknown {
		outcome = history.Unrelated
	}
	r := history.Record{Device: deviceKey(env, string(e.Device)), Operation: opts.Operation, Source: history.SourceDoctor,
		Category: string(e.Category), MessageID: e.MessageID, Outcome: outcome}
	if err := hist.Append(r); err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "devctl: not recorded in history: %v\n", err)
	}
}

// recordSelftest writes the self-test's (device, operation) outcomes to
// this machine's history, so the rule judges devices by what really ran.
// A replay, or a history that cannot be written, records nothing and says
// so in the report: the self-test's findings matter more.
func (opts *Options) recordSelftest(r *selftest.Outcome) {
	results := doctor.SelftestResults(r)
	if len(results) == 0 {
		return
	}
	log, err := opts.HistoryLog()
	if err != nil {
		r.RecordNote = "not recorded: " + err.Error()
		return
	}
	for _, res := range results {
		if err := log.AppendOperation(res); err != nil {
			r.RecordNote = fmt.Sprintf("recorded %d of %d: %v", r.Recorded, len(results), err)
			return
		}
		r.Recorded++
	}
}
