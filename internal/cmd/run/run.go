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
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/envvar"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/recommend"
	"github.com/devctl/devctl/internal/supervise"
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
	// LookupEnv reads devctl's own environment (the history's location).
	LookupEnv func(string) (string, bool)

	// Command is CMD and its arguments, everything after "--".
	Command []string

	Retries      int
	Grace        time.Duration
	BatchEnv     string
	AccumEnv     string
	PrecisionEnv string
	AllowCPU     bool
	ReportFile   string

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
}

// NewCmdRun builds `devctl run`. runF, when not nil, replaces the run step
// (tests stop after flag parsing).
func NewCmdRun(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO: f.IO, Now: f.Now, Config: f.Config, PlanDeps: cmdutil.PlanDeps(f), LookupEnv: f.LookupEnv,
		Probe: func(ctx context.Context) (*probe.Report, error) {
			rep, _, err := cmdutil.RunProbe(ctx, f, nil)
			return rep, err
		},
		Environ: os.Environ,
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
			return cmdutil.Execute(c.Context(), opts, runF)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Retries, "retries", 3, "reruns allowed after a recoverable failure (0: never rerun)")
	fl.DurationVar(&opts.Grace, "grace", supervise.DefaultGrace, "time CMD gets to exit after a forwarded SIGTERM before it is killed")
	fl.StringVar(&opts.BatchEnv, "batch-env", "", "the variable CMD reads its batch size from, NAME=N or NAME (value from the environment); halved on out of memory")
	fl.StringVar(&opts.AccumEnv, "accum-env", "", "the gradient-accumulation variable, NAME=N or NAME (default 1); doubled when the batch is halved")
	fl.StringVar(&opts.PrecisionEnv, "precision-env", "", "the precision variable, NAME=fp32|bf16|fp16|8bit|4bit (or float32, bfloat16, ...); lowered on out of memory")
	fl.BoolVar(&opts.AllowCPU, "allow-cpu", false, "let the last recovery step run CMD on the CPU")
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
	path, err := exec.LookPath(o.Command[0])
	if err != nil {
		code := 127
		if !errors.Is(err, exec.ErrNotFound) {
			code = 126
		}
		return &cmdutil.ExitError{Code: code, Msg: fmt.Sprintf("run: %s: %v", o.Command[0], unwrapExec(err))}
	}
	rep, err := o.Probe(ctx)
	if err != nil {
		return err
	}
	if cfg.Devices, err = o.candidates(ctx, rep); err != nil {
		return err
	}
	if c, err := o.Config(); err == nil && c.Device.AllowCPU {
		cfg.AllowCPU = true // device.allow_cpu or DEVCTL_ALLOW_CPU, as --allow-cpu
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
	sigs := o.Signals
	if sigs == nil {
		c := make(chan os.Signal, 4)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer signal.Stop(c)
		sigs = c
	}
	hist, histErr := history.Path(o.LookupEnv)
	s := &session{o: o, runID: newRunID(), hist: hist, report: supervise.Report{Command: filepath.Base(o.Command[0]), Retries: o.Retries}}
	if histErr != nil {
		s.say("not recording history: %v", histErr)
	}
	if sel := rep.Selection; sel != nil && (sel.FellBack || len(sel.PassedOver) > 0) {
		s.say("device %s: %s", ladder.Device().ID, sel.Reason)
	} else if recs, err := history.LoadRecent(o.LookupEnv); err == nil {
		// An explicit --device wins over the rule, with a warning.
		if v := recs.Judge(ladder.Device().Backend); v.PassOver {
			s.say("warning: device %s is used as requested, although the history rule would pass it over: %s", ladder.Device().ID, v.Reason())
		}
	}
	step := supervise.Step{}
	for attempt := 1; ; attempt++ {
		dev := ladder.Device()
		res, err := supervise.Run(ctx, supervise.Spec{
			Path: path, Args: o.Command[1:], Env: ladder.Env(inherited),
			Stdin: o.IO.In, Stdout: o.IO.Out, Stderr: o.IO.ErrOut,
			Signals: sigs, Grace: o.Grace, Subreaper: true,
		})
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		if res.StderrOpenLine {
			fmt.Fprintln(o.IO.ErrOut) // devctl's lines start on a line of their own
		}
		a := s.record(attempt, dev, step, res)
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

// candidates lists the devices in priority order, the chosen one first,
// each with the environment recommend gives for it; the CPU is last.
func (o *Options) candidates(ctx context.Context, rep *probe.Report) ([]supervise.Candidate, error) {
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	strategy, frac := cfg.Device.MemoryStrategy, cfg.Device.MemoryFraction
	if f, ok := strategy.Fraction(); ok {
		frac = f
	}
	chosen := ""
	if rep.Selection != nil {
		chosen = rep.Selection.Chosen
	}
	priority := cfg.Device.PlatformPriority
	if len(priority) == 0 {
		priority = backend.All()
	}
	var order []probe.Device
	for _, d := range rep.Devices {
		if d.ID == chosen && d.Usable() {
			order = append(order, d)
		}
	}
	for _, b := range priority {
		for _, d := range rep.Devices {
			if d.Backend == b && d.ID != chosen && d.Usable() {
				order = append(order, d)
			}
		}
	}
	var out []supervise.Candidate
	hasCPU := false
	for i, d := range order {
		t := targetFor(rep, d)
		env := recommend.Env(t, strategy, frac, oomsim.Plan{}, 1)
		if i == 0 && o.model().Given() > 0 {
			res, err := o.plan(ctx, rep, d.ID, cfg)
			if err != nil {
				return nil, err
			}
			env = res.Env
		}
		out = append(out, candidate(d.ID, t, env))
		hasCPU = hasCPU || d.Backend == backend.CPU
	}
	if !hasCPU {
		t := recommend.Target{Name: "cpu", Backend: backend.CPU, Count: 1}
		out = append(out, candidate("cpu", t, recommend.Env(t, strategy, frac, oomsim.Plan{}, 1)))
	}
	return out, nil
}

func candidate(id string, t recommend.Target, env []envvar.Var) supervise.Candidate {
	c := supervise.Candidate{ID: id, Backend: string(t.Backend), BF16: t.Support.BF16}
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

// plan asks the planner for the model on the probed device id, with the
// recommend flags' defaults: the environment is exactly what `recommend
// --model ... --device id -o env` prints.
func (o *Options) plan(ctx context.Context, rep *probe.Report, id string, cfg *config.Config) (*recommend.Result, error) {
	mode, _ := oomsim.Parse(o.Mode, oomsim.Modes)
	deps := o.PlanDeps
	deps.Probe = func(context.Context) (*probe.Report, error) {
		r := *rep
		r.Selection = &probe.Selection{Chosen: id}
		return &r, nil
	}
	req := recommend.Request{Model: o.model(), Run: recommend.RunSettings{Mode: mode}, Settings: cmdutil.PlanSettings(cfg)}
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

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}
