// Package run is `devctl run`: start a training or inference command with
// the chosen device's environment, pass its output through, and when it
// fails for a reason a changed environment can fix, rerun it with the next
// recovery step. The work is done by internal/supervise; this file turns
// flags into a supervise.LadderConfig and results into messages.
package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/supervise"
	"github.com/devctl/devctl/internal/target"
)

// Options are `devctl run`'s flags and dependencies.
type Options struct {
	IO  *iostreams.IOStreams
	Now func() time.Time
	// Probe probes this machine with the effective configuration.
	Probe func(ctx context.Context) (*probe.Report, error)
	// Config is the effective configuration.
	Config func() (*config.Config, error)
	// PlanDeps are the planner's dependencies, for --model.
	PlanDeps recommend.Deps
	// HistoryLog opens this machine's history (cmdutil.HistoryLog: a
	// replay gets cmdutil.ErrReplay and records nothing).
	HistoryLog func() (*history.Log, error)
	// OpenMemory opens the source that samples a backend's device memory
	// per process (devmem.ErrUnavailable when there is none).
	OpenMemory func(method string, b backend.Backend, interval time.Duration) (devmem.Source, error)
	// IsJob tells the job's processes (devctl's descendants).
	IsJob func(pid int) bool

	// Command is CMD and its arguments, everything after "--".
	Command []string

	Retries      int
	Grace        time.Duration
	BatchEnv     string
	AccumEnv     string
	PrecisionEnv string
	AllowCPU     bool
	// AllowCPUSet is true when --allow-cpu was given (either way): it then
	// overrides device.fallback_enabled.
	AllowCPUSet bool
	ReportFile  string
	// Devices runs on the first N devices of the chosen backend (0: all).
	Devices int
	// Operation names what the job does; the history judges devices per
	// operation.
	Operation string
	// MemoryInterval is the device-memory sampling period (0: off);
	// MemorySource picks how (auto, nvml, nvidia-smi, drm, off).
	MemoryInterval time.Duration
	MemorySource   string

	// Model flags, passed to recommend when one is given.
	ModelParams string
	Model       string
	ModelConfig string
	Mode        string

	// Environ is the inherited environment (tests inject one).
	Environ func() []string
	// Signals, when not nil, replaces the process's SIGINT/SIGTERM/SIGHUP.
	Signals <-chan os.Signal

	inherited []string               // set by Complete
	ladder    supervise.LadderConfig // set by Validate, without the devices
	planned   *recommend.Result      // the plan of the first device, with --model
}

// NewCmdRun builds `devctl run`. runF, when not nil, replaces the run step
// (tests stop after flag parsing).
func NewCmdRun(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO: f.IO, Now: f.Now, Config: f.Config, PlanDeps: cmdutil.PlanDeps(f),
		HistoryLog: func() (*history.Log, error) { return cmdutil.HistoryLog(f) },
		OpenMemory: openMemory(f),
		Environ:    os.Environ,
	}
	opts.IsJob = newJob().Has
	opts.Probe = func(ctx context.Context) (*probe.Report, error) {
		rep, _, err := cmdutil.RunProbeFor(ctx, f, nil, opts.Operation)
		return rep, err
	}
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Run a job on the best device and recover from device failures",
		Long: `Run starts CMD with the environment 'devctl recommend -o env' gives for the
chosen device, passes its stdout and stderr through unchanged, forwards
SIGINT, SIGTERM and SIGHUP to its process group (a second Ctrl-C kills it; a
child that ignores SIGTERM is killed after --grace) and exits with its exit
code (128+N when signal N ended it).

When CMD fails, the end of its output (at most 32 MiB are kept) goes through
the log classifier of 'devctl doctor --log'. With retries left, a recoverable
failure reruns CMD with the next recovery step, cheapest first:

  out of memory        PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (CUDA),
                       the batch halved (--batch-env, keeping the effective
                       batch through --accum-env), a lower precision
                       (--precision-env), the CPU (--allow-cpu)
  XLA RESOURCE_EXHAUSTED  XLA_PYTHON_CLIENT_PREALLOCATE=false, then
                       XLA_PYTHON_CLIENT_MEM_FRACTION 0.75 and 0.60, then as above
  MPS unsupported op   PYTORCH_ENABLE_MPS_FALLBACK=1, then the CPU (--allow-cpu)
  a failed device      the next device in priority order (the CPU with --allow-cpu)

Other failures stop with the explanation. Every change is printed on stderr
before the retry ("devctl run: ..."), a summary at the end, and --report FILE
writes it all as JSON. Every attempt is recorded in the history (devctl
history): time, device, category, outcome, duration and recovery step, never
output, arguments or environment values.`,
		Example: `  devctl run -- python train.py
  devctl run --retries 4 --batch-env BATCH_SIZE=32 --accum-env GRAD_ACCUM=1 -- python train.py
  devctl run --retries 2 --precision-env DTYPE=bf16 --allow-cpu --report run.json -- ./infer.sh
  devctl run --device cuda:1 --model llama-2-7b --mode lora -- accelerate launch train.py`,
		Args: func(c *cobra.Command, args []string) error {
			// "--" is optional (flags end at CMD), but recommended.
			if len(args) == 0 {
				return &cmdutil.FlagError{Err: errors.New("give the command after --: devctl run [flags] -- CMD [ARGS...]")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = args
			opts.AllowCPUSet = c.Flags().Changed("allow-cpu")
			return cmdutil.Execute(c.Context(), opts, runF)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Retries, "retries", 3, "reruns allowed after a recoverable failure (0: never rerun)")
	fl.DurationVar(&opts.Grace, "grace", supervise.DefaultGrace, "time CMD gets to exit after a forwarded SIGTERM before it is killed")
	fl.StringVar(&opts.BatchEnv, "batch-env", "", "the variable CMD reads its batch size from, NAME=N or NAME (value from the environment); halved on out of memory")
	fl.StringVar(&opts.AccumEnv, "accum-env", "", "the gradient-accumulation variable, NAME=N or NAME (default 1); doubled when the batch is halved")
	fl.StringVar(&opts.PrecisionEnv, "precision-env", "", "the precision variable, NAME=fp32|bf16|fp16|8bit|4bit (or float32, bfloat16, ...); lowered on out of memory")
	fl.BoolVar(&opts.AllowCPU, "allow-cpu", false, "let (or with =false, forbid) the last recovery step run CMD on the CPU; default: on when device.fallback_enabled or device.allow_cpu (DEVCTL_ALLOW_CPU) is")
	fl.IntVar(&opts.Devices, "devices", 0, "run on the first N devices of the chosen backend (default: all of them)")
	fl.StringVar(&opts.Operation, "operation", "", "what the job does (e.g. train, transcribe): the history judges a device per operation")
	fl.DurationVar(&opts.MemoryInterval, "memory-interval", time.Second, "how often to sample the job's device memory (0 turns sampling off)")
	fl.StringVar(&opts.MemorySource, "memory-source", memAuto, "how to read device memory: "+strings.Join(memSources, ", "))
	fl.StringVar(&opts.ReportFile, "report", "", "write the attempts and the outcome as JSON to this file")
	fl.StringVar(&opts.ModelParams, "model-params", "", "plan the environment for a model of this size (as recommend)")
	fl.StringVar(&opts.Model, "model", "", "plan the environment for a catalogued model (as recommend)")
	fl.StringVar(&opts.ModelConfig, "model-config", "", "plan the environment for a Hugging Face config.json (as recommend)")
	fl.StringVar(&opts.Mode, "mode", "inference", "with a model: inference, training, lora or qlora")
	fl.SetInterspersed(false)
	return cmd
}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// knob parses NAME=VALUE or NAME (the value then comes from the inherited
// environment, or def when def is not "").
func knob(flag, spec, def string, lookup func(string) (string, bool)) (name, value string, err error) {
	name, value, hasValue := strings.Cut(strings.TrimSpace(spec), "=")
	if !envName().MatchString(name) {
		return "", "", cmdutil.Usagef("invalid %s %q: want NAME=VALUE or NAME, NAME a shell variable name (letters, digits, _)", flag, spec)
	}
	if !hasValue {
		v, ok := lookup(name)
		switch {
		case ok && v != "":
			value = v
		case def != "":
			value = def
		default:
			return "", "", cmdutil.Usagef("invalid %s %q: %s is not set; give its value as %s=VALUE", flag, spec, name, name)
		}
	}
	return name, strings.TrimSpace(value), nil
}

func intKnob(flag, spec, def string, lookup func(string) (string, bool)) (*supervise.IntVar, error) {
	if spec == "" {
		return nil, nil
	}
	name, v, err := knob(flag, spec, def, lookup)
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > supervise.MaxKnob {
		return nil, cmdutil.Usagef("invalid %s %q: want %s=N with N a whole number from 1 to %d", flag, spec, name, supervise.MaxKnob)
	}
	return &supervise.IntVar{Name: name, Value: n}, nil
}

// Complete reads the inherited environment, which --batch-env NAME and the
// child start from.
func (o *Options) Complete() error {
	o.inherited = o.Environ()
	return nil
}

// lookup reads one inherited variable (the last assignment wins).
func (o *Options) lookup(k string) (string, bool) {
	for i := len(o.inherited) - 1; i >= 0; i-- {
		if n, v, ok := strings.Cut(o.inherited[i], "="); ok && n == k {
			return v, true
		}
	}
	return "", false
}

// Validate checks the flags that need no I/O and reads the knobs.
func (o *Options) Validate() (err error) {
	if err = target.RunReport.Allow(o.ReportFile); err != nil {
		return err
	}
	o.ladder, err = o.validate(o.lookup)
	return err
}

func (o *Options) validate(lookup func(string) (string, bool)) (supervise.LadderConfig, error) {
	var cfg supervise.LadderConfig
	if o.Retries < 0 || o.Retries > 100 {
		return cfg, cmdutil.Usagef("invalid --retries %d: want 0 to 100", o.Retries)
	}
	if o.Grace <= 0 {
		return cfg, cmdutil.Usagef("invalid --grace %s: want a positive duration such as 10s", o.Grace)
	}
	var err error
	if cfg.Batch, err = intKnob("--batch-env", o.BatchEnv, "", lookup); err != nil {
		return cfg, err
	}
	if cfg.Accum, err = intKnob("--accum-env", o.AccumEnv, "1", lookup); err != nil {
		return cfg, err
	}
	if cfg.Accum != nil && cfg.Batch == nil {
		return cfg, cmdutil.Usagef("--accum-env needs --batch-env: accumulation only changes when the batch is halved")
	}
	if cfg.Batch != nil && cfg.Accum != nil && cfg.Batch.Name == cfg.Accum.Name {
		return cfg, cmdutil.Usagef("--batch-env and --accum-env name the same variable %s", cfg.Batch.Name)
	}
	if o.PrecisionEnv != "" {
		name, v, err := knob("--precision-env", o.PrecisionEnv, "", lookup)
		if err != nil {
			return cfg, err
		}
		cfg.Precision = &supervise.StrVar{Name: name, Value: v}
	}
	cfg.AllowCPU = o.AllowCPU
	if o.Devices < 0 || o.Devices > 4096 {
		return cfg, cmdutil.Usagef("invalid --devices %d: want a number of devices from 1, or 0 for all", o.Devices)
	}
	if o.MemoryInterval < 0 || o.MemoryInterval > 0 && o.MemoryInterval < 10*time.Millisecond {
		return cfg, cmdutil.Usagef("invalid --memory-interval %s: want 0 (off) or at least 10ms", o.MemoryInterval)
	}
	if !slices.Contains(memSources, o.MemorySource) {
		return cfg, cmdutil.Usagef("invalid --memory-source %q: want one of %s", o.MemorySource, strings.Join(memSources, ", "))
	}
	if len(o.Operation) > 128 || strings.ContainsAny(o.Operation, "\n\r") {
		return cfg, cmdutil.Usagef("invalid --operation: want a short name on one line (at most 128 bytes)")
	}
	if o.model().Given() > 1 {
		return cfg, cmdutil.Usagef("give at most one of --model-params, --model or --model-config")
	}
	if _, ok := oomsim.Parse(o.Mode, oomsim.Modes); !ok {
		return cfg, cmdutil.Usagef("invalid --mode %q: want one of %s", o.Mode, oomsim.List(oomsim.Modes))
	}
	return cfg, nil
}

// Run completes the options, validates, and supervises the command.
func Run(ctx context.Context, o *Options) error { return cmdutil.RunSteps(ctx, o) }

// Run probes, chooses the device and supervises the command, rerunning it
// with the ladder's next step after a recoverable failure.
func (o *Options) Run(ctx context.Context) error {
	inherited, cfg := o.inherited, o.ladder
	path, err := supervise.LookPath(o.Command[0])
	if err != nil {
		return startError(o.Command[0], err)
	}
	// The forwarded signals are caught from the start: Ctrl-C while devctl
	// still probes (a hung nvidia-smi) cancels the probe, starts nothing
	// and exits 128+N (130), as a shell does.
	sigs := o.Signals
	if sigs == nil {
		c := make(chan os.Signal, 4)
		signal.Notify(c, supervise.ForwardedSignals...)
		defer signal.Stop(c)
		sigs = c
	}
	pre, stopPre, interrupted := beforeStart(ctx, sigs)
	rep, conf, cands, err := o.prepare(pre)
	stopPre()
	if sig := interrupted(); sig != nil {
		return interruptedBeforeStart(sig)
	}
	if err != nil {
		return err
	}
	cfg.Devices = cands
	// The CPU rung follows device.fallback_enabled, or device.allow_cpu
	// (DEVCTL_ALLOW_CPU) when that turns it on; --allow-cpu (=true or
	// =false) overrides both.
	cfg.AllowCPU = conf.Device.FallbackEnabled || conf.Device.AllowCPU
	if o.AllowCPUSet {
		cfg.AllowCPU = o.AllowCPU
	}
	ladder, err := supervise.NewLadder(cfg)
	if err != nil {
		return cmdutil.Usagef("%v", err)
	}

	// A reader of devctl's output that goes away must stop the child (it
	// gets the broken pipe), not kill devctl before it records the attempt:
	// with SIGPIPE notified, Go returns EPIPE from writes to fd 1 and 2.
	// (Notify, not Ignore: an ignored signal would be inherited by CMD.)
	pipeSig := make(chan os.Signal, 1)
	signal.Notify(pipeSig, syscall.SIGPIPE)
	defer signal.Stop(pipeSig)
	s := &session{o: o, runID: newRunID(), report: supervise.Report{Command: filepath.Base(o.Command[0]), Retries: o.Retries, Operation: o.Operation}}
	log, err := o.HistoryLog()
	switch {
	case errors.Is(err, cmdutil.ErrReplay):
		// A replay is another machine: nothing is recorded, silently.
	case err != nil:
		s.say("not recording history: %v", err)
	default:
		s.log = log
	}
	if sel := rep.Selection; sel != nil && (sel.FellBack || len(sel.PassedOver) > 0) {
		s.say("device %s: %s", ladder.Device().ID, sel.Reason)
	} else if s.log != nil {
		// An explicit --device (or device.fallback_enabled false) keeps a
		// device the rule would pass over, with a warning.
		if recs, err := s.log.Recent(); err == nil {
			if v := recs.JudgeFor(ladder.Device().Backend, o.Operation); v.PassOver {
				s.say("warning: device %s is used (requested, or device.fallback_enabled is false), although the history rule would pass it over: %s", ladder.Device().ID, v.Reason())
			}
		}
	}
	m := &meter{open: o.OpenMemory, method: o.MemorySource, interval: o.MemoryInterval, isJob: o.IsJob,
		sources: map[backend.Backend]devmem.Source{}, failed: map[backend.Backend]error{}}
	defer m.close()
	step := supervise.Step{}
	for attempt := 1; ; attempt++ {
		if attempt == 1 {
			// A signal that arrived after the probe and before the start:
			// nothing was started yet.
			select {
			case sig := <-sigs:
				return interruptedBeforeStart(sig)
			default:
			}
		}
		dev := ladder.Device()
		est := o.estimate(ladder)
		stop := m.begin(ctx, backend.Backend(dev.Backend))
		res, err := supervise.Run(ctx, supervise.Spec{
			Path: path, Args: o.Command[1:], Env: ladder.Env(inherited),
			Stdin: o.IO.In, Stdout: o.IO.Out, Stderr: o.IO.ErrOut,
			Signals: sigs, Grace: o.Grace, Subreaper: true, Cgroup: true,
		})
		mem, memErr := stop()
		var se *supervise.StartError
		switch {
		case errors.As(err, &se):
			return startError(o.Command[0], err)
		case errors.Is(err, supervise.ErrCanceled):
			return &cmdutil.ExitError{Code: 130, Msg: "run: interrupted before the job started; nothing was started"}
		case err != nil:
			return fmt.Errorf("run: %w", err)
		}
		s.openLine = res.StderrOpenLine // devctl's lines start on a line of their own
		if mem != nil {
			mem.Plan = est
		}
		a := s.record(attempt, dev, step, res, mem, memErr)
		if a.Outcome == history.Success || a.Outcome == history.Interrupted {
			return s.finish(res.ExitCode)
		}
		if attempt > o.Retries {
			if supervise.Recoverable(explain.Category(a.Category)) && o.Retries > 0 {
				s.report.Stopped = fmt.Sprintf("no retries left (--retries %d)", o.Retries)
			} else if o.Retries == 0 {
				s.report.Stopped = "--retries 0"
			} else {
				s.report.Stopped = fmt.Sprintf("%s is not a failure a changed environment can fix", a.Category)
			}
			return s.finish(res.ExitCode)
		}
		// Ctrl-C between attempts means stop, not "interrupt the retry".
		select {
		case sig := <-sigs:
			s.report.Stopped = fmt.Sprintf("%v received before the retry", sig)
			return s.finish(res.ExitCode)
		default:
		}
		next, ok, why := ladder.Next(explain.Category(a.Category), inherited)
		if !ok {
			s.report.Stopped = why
			return s.finish(res.ExitCode)
		}
		step = next
		s.say("attempt %d of %d failed on %s: %s. Retrying with %s: %s%s", attempt, o.Retries+1, dev.ID, a.Category, next.ID, next.Why, setList(next))
	}
}

func candidate(id string, t recommend.Target, env []envvar.Var) supervise.Candidate {
	c := supervise.Candidate{ID: id, Backend: string(t.Backend), Support: t.Support}
	for _, e := range env {
		c.Env = append(c.Env, envvar.Var{Name: e.Name, Value: e.Value})
	}
	return c
}

// targetFor builds recommend's target for one probed device. A device
// whose memory size the probe did not report still gets its selection
// variables: the environment needs no size.
func targetFor(rep *probe.Report, d probe.Device) recommend.Target {
	r := *rep
	r.Selection = &probe.Selection{Chosen: d.ID}
	if t, err := recommend.TargetFromProbe(&r); err == nil {
		return t
	}
	n := 0
	for _, x := range rep.Devices {
		if x.Backend == d.Backend {
			n++
		}
	}
	return recommend.Target{Name: d.ID, Backend: d.Backend, Index: d.Index, Count: n,
		Support: recommendSupport(d)}
}

// model is the model the flags name, if any.
func (o *Options) model() recommend.ModelSpec {
	return recommend.ModelSpec{Params: o.ModelParams, Name: o.Model, Config: o.ModelConfig}
}

// plan asks the planner for the model on the probed device id over
// devices devices, with the recommend flags' defaults and the user's batch
// and precision: the environment is what `recommend --model ... --device
// id --devices N -o env` prints, the visibility variable widened to the
// devices the job sees.
func (o *Options) plan(ctx context.Context, rep *probe.Report, id string, devices int, cfg *config.Config) (*recommend.Result, error) {
	mode, _ := oomsim.Parse(o.Mode, oomsim.Modes)
	deps := o.PlanDeps
	deps.Probe = func(context.Context) (*probe.Report, error) {
		r := *rep
		r.Selection = &probe.Selection{Chosen: id}
		return &r, nil
	}
	req := recommend.Request{Model: o.model(), Run: recommend.RunSettings{Mode: mode, Devices: devices}, Settings: cmdutil.PlanSettings(cfg)}
	// The user's own batch and precision are the plan's: its estimate is
	// then the one the measured peak is compared with.
	if b := o.ladder.Batch; b != nil {
		req.Run.BatchSize = b.Value
	}
	if p := o.ladder.Precision; p != nil {
		if v, err := capability.ParsePrecision(p.Value); err == nil {
			req.Settings.Precision, req.Settings.PrecisionSource = v, "--precision-env "+p.Name
		}
	}
	res, err := recommend.Plan(ctx, req, deps)
	if errors.Is(err, recommend.ErrInput) || errors.Is(err, recommend.ErrContradiction) {
		return nil, cmdutil.Usagef("%w", err)
	}
	return res, err
}

func setList(s supervise.Step) string {
	if len(s.Set) == 0 {
		return ""
	}
	parts := make([]string, len(s.Set))
	for i, e := range s.Set {
		parts[i] = e.Name + "=" + envvar.Quote(e.Value)
	}
	return " (" + strings.Join(parts, " ") + ")"
}

func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startError is a program that could not be started, with the shell's
// exit code: 127 when it is not there, 126 when it cannot be executed.
func startError(name string, err error) error {
	var se *supervise.StartError
	if errors.As(err, &se) {
		return &cmdutil.ExitError{Code: se.Code, Msg: fmt.Sprintf("run: %s: %v", name, se.Err)}
	}
	return fmt.Errorf("run: %w", err)
}

// prepare probes the machine and lists the devices, with ctx cancelled by
// an interrupt before the start.
func (o *Options) prepare(ctx context.Context) (*probe.Report, *config.Config, []supervise.Candidate, error) {
	rep, err := o.Probe(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	conf, err := o.Config()
	if err != nil {
		return nil, nil, nil, err
	}
	cands, err := o.candidates(ctx, rep, conf)
	return rep, conf, cands, err
}

// beforeStart watches sigs until stop is called: a signal cancels the
// returned context and is what interrupted returns (nil when none came).
// After stop, the signals are the job's (supervise.Run forwards them).
func beforeStart(ctx context.Context, sigs <-chan os.Signal) (context.Context, func(), func() os.Signal) {
	pre, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	finished := make(chan struct{})
	var got os.Signal
	go func() {
		defer close(finished)
		select {
		case sig := <-sigs:
			got = sig
			cancel(fmt.Errorf("%v received before the job started", sig))
		case <-done:
		}
	}()
	stop := func() { close(done); <-finished; cancel(nil) }
	return pre, stop, func() os.Signal { return got }
}

// interruptedBeforeStart is devctl's exit when a signal came before the
// job started: 128+N (130 for Ctrl-C), nothing started, nothing recorded.
func interruptedBeforeStart(sig os.Signal) error {
	code := 130
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	return &cmdutil.ExitError{Code: code, Msg: fmt.Sprintf("run: %v before the job started; nothing was started", sig)}
}
