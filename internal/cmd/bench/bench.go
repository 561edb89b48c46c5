// Package bench is the `devctl bench` command: what the machine's CPU,
// memory and accelerator links really deliver, against their theoretical
// figures, with a history to catch a machine that got slower.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/report"
)

// formats are what -o offers.
var formats = output.Spec{output.Table, output.JSON, output.YAML}

// Options are the command's flags and the dependencies it uses.
type Options struct {
	IO        *iostreams.IOStreams
	LookupEnv func(string) (string, bool)
	Now       func() time.Time
	Version   string
	// Elsewhere reports whether --sysroot or --from describe another
	// machine.
	Elsewhere func() bool
	Host      func() (*host.Host, error)
	// Probe runs the drivers named by only.
	Probe func(ctx context.Context, only []string) (*probe.Report, error)

	Suites           []string
	Duration         time.Duration
	Threads          int
	ThreadsSet       bool
	Output           string
	Quiet            bool
	Compare          bool
	FailOnRegression bool

	format output.Format // set by Complete
	// sampleLoad looks at how busy the machine is (tests replace it).
	sampleLoad func(read func(string) ([]byte, error)) bench.LoadSample
}

// NewCmdBench builds `devctl bench`. runF, when not nil, replaces the run
// step (tests stop after flag parsing).
func NewCmdBench(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO: f.IO, LookupEnv: f.LookupEnv, Now: f.Now, Version: f.Version, Host: f.Host,
		Elsewhere: func() bool { return f.Global != nil && (f.Global.Sysroot != "" || f.Global.From != "") },
		Probe: func(ctx context.Context, only []string) (*probe.Report, error) {
			rep, _, err := cmdutil.RunProbe(ctx, f, only)
			return rep, err
		},
	}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure peak compute, memory bandwidth and accelerator links against their theoretical figures",
		Long: `Bench measures what the machine really delivers:

  cpu     peak compute with hand-written SIMD kernels (FMA3/AVX-512 fp32 and fp64,
          AVX512_BF16 and VNNI int8 dot products, NEON on arm64), one pinned
          thread per CPU, single-core and all-core, beside the theoretical peak
          (cores x max frequency x ops/cycle);
  memory  STREAM copy, scale, add and triad over arrays at least 4x the last-level
          cache, single-threaded and all threads, best of N trials, decimal GB/s,
          with non-temporal stores when the arrays exceed the last-level cache;
  link    each accelerator's PCIe generation and width, current against maximum,
          and the host<->device bandwidth they allow: COMPUTED from the link the
          device reports, not measured by a transfer.

Every test repeats its trials until the best three agree within 1% or its share
of --duration ends, and reports the spread between its best and median trial.
Bench samples the machine before and after (other processes' CPU use, steal
time, load average) and warns when it was busy.

Each run is appended to $XDG_STATE_HOME/devctl/bench.jsonl; --compare shows
the change since the previous run of the same suite on this host and marks
figures that fell by more than 10% plus both runs' measured spread
(--fail-on-regression exits 3); a run on a busy machine is not judged.`,
		Example: `  devctl bench
  devctl bench --suite memory --threads 4 -o json
  devctl bench --duration 30s --compare --fail-on-regression`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ThreadsSet = cmd.Flags().Changed("threads")
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&opts.Suites, "suite", bench.AllSuites, "suites to run (comma-separated): cpu, memory, link")
	fl.DurationVar(&opts.Duration, "duration", 10*time.Second, "about how long all suites together may take")
	fl.IntVar(&opts.Threads, "threads", 0, "threads for the all-core figures (default: logical CPUs, lowered to a cgroup CPU quota)")
	formats.Register(fl, &opts.Output, "")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress on stderr")
	fl.BoolVar(&opts.Compare, "compare", false, "show the change since the previous run on this host")
	fl.BoolVar(&opts.FailOnRegression, "fail-on-regression", false, "exit 3 when a figure fell by more than 10% plus the measured noise since the previous run (implies --compare)")
	return cmd
}

// Run completes, validates, measures, records and prints.
func Run(ctx context.Context, opts *Options) error { return cmdutil.RunSteps(ctx, opts) }

// Complete parses -o.
func (opts *Options) Complete() (err error) {
	opts.format, err = formats.Parse(opts.Output)
	return err
}

// Validate checks the flags (pure: no machine access) and normalises the
// suite list to the canonical order.
func (opts *Options) Validate() error {
	want := map[string]bool{}
	for _, s := range opts.Suites {
		s = strings.ToLower(strings.TrimSpace(s))
		ok := false
		for _, a := range bench.AllSuites {
			ok = ok || s == a
		}
		if !ok {
			return cmdutil.Usagef("unknown --suite %q: want one or more of %s (comma-separated)", s, strings.Join(bench.AllSuites, ", "))
		}
		want[s] = true
	}
	if len(want) == 0 {
		return cmdutil.Usagef("empty --suite: want one or more of %s (comma-separated)", strings.Join(bench.AllSuites, ", "))
	}
	opts.Suites = opts.Suites[:0]
	for _, a := range bench.AllSuites {
		if want[a] {
			opts.Suites = append(opts.Suites, a)
		}
	}
	if opts.Duration <= 0 {
		return cmdutil.Usagef("invalid --duration %s: want a positive duration such as 10s or 500ms", opts.Duration)
	}
	if opts.ThreadsSet && (opts.Threads < 1 || opts.Threads > bench.MaxThreads) {
		return cmdutil.Usagef("invalid --threads %d: want a positive number of threads, at most %d", opts.Threads, bench.MaxThreads)
	}
	return nil
}

// Run measures, records and prints.
func (opts *Options) Run(ctx context.Context) error {
	f, format := opts, opts.format
	measuresHere := false
	for _, s := range opts.Suites {
		measuresHere = measuresHere || s == bench.SuiteCPU || s == bench.SuiteMemory
	}
	if measuresHere && f.Elsewhere() {
		return cmdutil.Usagef("--sysroot and --from describe another machine: bench can only measure this one (use --suite link to read a recorded machine's links)")
	}
	h, err := f.Host()
	if err != nil {
		return err
	}
	rep, perr := f.Probe(ctx, probeDrivers(opts.Suites))
	if perr != nil && rep == nil {
		fmt.Fprintf(f.IO.ErrOut, "devctl: warning: probe failed, theoretical figures may be missing: %v\n", perr)
	}
	m := bench.Facts(h, rep)
	if m.LogicalCPUs == 0 && !f.Elsewhere() {
		// Only this machine's count: a replayed tree that does not say
		// stays unknown rather than borrowing the runner's.
		m.LogicalCPUs = runtime.NumCPU()
	}
	threads := opts.Threads
	if !opts.ThreadsSet {
		threads = bench.DefaultThreads(runtime.NumCPU(), m.CPUQuota)
	}

	sample := opts.sampleLoad
	if sample == nil {
		sample = func(read func(string) ([]byte, error)) bench.LoadSample { return bench.SampleLoad(read, time.Now()) }
	}
	var sp *spinner
	if f.IO.IsStderrTTY() && !opts.Quiet {
		sp = startSpinner(f.IO.ErrOut)
	}
	run, err := bench.Measure(ctx, bench.Options{
		Suites:   opts.Suites,
		Duration: opts.Duration,
		Threads:  threads,
		Machine:  m,
		Now:      f.Now,
		Version:  f.Version,
		Load:     func() bench.LoadSample { return sample(h.FS.ReadFile) },
		Progress: func(p bench.Progress) {
			if sp != nil {
				sp.set(fmt.Sprintf("[%d/%d] %s: %s", p.Step, p.Total, p.Suite, p.Test))
			}
		},
	})
	if sp != nil {
		sp.stop()
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}

	if c := run.Conditions; c != nil && c.Busy {
		fmt.Fprintf(f.IO.ErrOut, "devctl: warning: the machine was busy, so these figures are low and noisy and are not judged against the history: %s\n", strings.Join(c.Reasons, "; "))
	}

	path, perr := bench.HistoryPath(f.LookupEnv)
	if opts.Compare || opts.FailOnRegression {
		var hist []bench.Run
		if perr == nil {
			hist, err = bench.LoadHistory(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(f.IO.ErrOut, "devctl: warning: cannot read bench history %s: %v\n", path, err)
			}
		}
		run.Compare = bench.Compare(run, hist, bench.RegressionThreshold)
	}
	if perr == nil {
		perr = bench.AppendHistory(path, run)
	}
	if perr != nil {
		fmt.Fprintf(f.IO.ErrOut, "devctl: warning: bench history not saved (results are printed but not recorded): %v\n", perr)
	}

	if ok, xerr := output.Export(f.IO.Out, format, run); ok {
		err = xerr
	} else {
		err = Table(f.IO.Out, run, report.NewStyle(f.IO.Out, f.IO.ColorEnabled()))
	}
	if err != nil {
		return err
	}
	if opts.FailOnRegression && run.Compare != nil && run.Compare.Regressions > 0 {
		n := run.Compare.Regressions
		return &cmdutil.ExitError{Code: cmdutil.ExitFound, Msg: fmt.Sprintf("%d figure(s) fell by more than %.0f%% plus the measured noise since the previous run", n, bench.RegressionThreshold*100)}
	}
	return nil
}

// probeDrivers limits the probe to what the suites need: the CPU and
// memory drivers for the measured suites, every driver for links.
func probeDrivers(suites []string) []string {
	for _, s := range suites {
		if s == bench.SuiteLink {
			return nil
		}
	}
	return []string{"cpu", "memory"}
}

// spinner shows the current test on a terminal's stderr.
type spinner struct {
	w    io.Writer
	mu   sync.Mutex
	text string
	quit chan struct{}
	done chan struct{}
}

func startSpinner(w io.Writer) *spinner {
	s := &spinner{w: w, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		frames := `|/-\`
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			s.mu.Lock()
			if s.text != "" {
				fmt.Fprintf(s.w, "\r\033[K%c bench %s", frames[i%len(frames)], s.text)
			}
			s.mu.Unlock()
			select {
			case <-s.quit:
				fmt.Fprint(s.w, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *spinner) set(text string) {
	s.mu.Lock()
	s.text = text
	s.mu.Unlock()
}

func (s *spinner) stop() {
	close(s.quit)
	<-s.done
}
