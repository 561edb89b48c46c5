// Package serve is the `devctl serve` command: Prometheus metrics and the
// probe and doctor JSON of this machine over HTTP.
package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/nfd"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/drivers"
	"github.com/devctl/devctl/internal/serve"
)

// DefaultListen is loopback: exposing the endpoint is a choice.
const DefaultListen = "127.0.0.1:9455"

// Options are the command's flags and the dependencies it uses.
type Options struct {
	IO *iostreams.IOStreams
	// Host is the Host of this invocation: Run builds it once to fail
	// early on a bad --sysroot, --from or configuration.
	Host func() (*host.Host, error)
	// FreshHost builds a new Host for every probe: a Host remembers what
	// it read, and serve must see the machine change.
	FreshHost func() (*host.Host, error)
	Config    func() (*config.Config, error)
	// Probe runs every driver against h with the effective configuration.
	Probe func(ctx context.Context, h *host.Host) (*probe.Report, []probe.Outcome, error)
	// Timeout is --timeout, each driver's and check's deadline.
	Timeout func() time.Duration
	// Replaying reports --from or --sysroot: the bench history then
	// describes another machine and is not exported.
	Replaying func() bool
	// BenchHistory is the path of this machine's bench history.
	BenchHistory func() (string, error)
	Version      string
	Now          func() time.Time

	Listen         string
	Interval       time.Duration
	MaxInFlight    int
	RequestTimeout time.Duration
	NoBench        bool
	RuntimeMetrics bool
	// NFDFile, when set, receives the node labels after every probe.
	NFDFile string
	// Listener, when set, is used instead of listening on Listen (tests).
	Listener net.Listener
	// Ready, when set, receives the address once the server listens.
	Ready func(addr string)
	// Signals delivers the signals that stop the server (see
	// shutdownSignals); tests inject them. Nil: Run listens for them.
	Signals <-chan os.Signal
}

// NewOptions fills the dependencies from the Factory, reading it only when
// they are called (so a test may still replace a Factory field). The flags
// keep their zero values; NewCmdServe sets their defaults.
func NewOptions(f *cmdutil.Factory) *Options {
	return &Options{
		IO:        f.IO,
		Host:      func() (*host.Host, error) { return f.Host() },
		FreshHost: func() (*host.Host, error) { return f.HostFunc() },
		Config:    func() (*config.Config, error) { return f.Config() },
		Probe: func(ctx context.Context, h *host.Host) (*probe.Report, []probe.Outcome, error) {
			return cmdutil.ProbeHost(ctx, f, h, drivers.All())
		},
		Timeout:      func() time.Duration { return f.Global.Timeout },
		Replaying:    func() bool { return f.Global.From != "" || f.Global.Sysroot != "" },
		BenchHistory: func() (string, error) { return bench.HistoryPath(f.LookupEnv) },
		Version:      f.Version,
		Now:          func() time.Time { return f.Now() },
	}
}

// NewCmdServe builds `devctl serve`. runF, when not nil, replaces the run
// step (tests stop after flag parsing).
func NewCmdServe(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := NewOptions(f)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve Prometheus metrics and the probe and doctor JSON over HTTP",
		Long: `Serve probes the machine and runs the doctor checks at most once per --interval,
however many clients ask, and serves the cached result:

  /metrics     Prometheus: device info, memory total/free, precisions, PCIe links,
               per-check health, driver status, the last recorded bench figures
  /v1/probe    the capability report (devctl probe -o json)
  /v1/doctor   the check results (devctl doctor -o json)
  /healthz     liveness: 200 while the server runs
  /readyz      readiness: 200 once the first probe finished

Requests beyond --max-in-flight are answered 503; each has --request-timeout.

Stopping: SIGTERM, SIGINT (Ctrl-C) and SIGHUP (the terminal closed) all shut it
down gracefully: no new connections, and in-flight requests get 5s. The exit
code is 0 after SIGTERM (a service manager's stop), 130 after SIGINT and 129
after SIGHUP (128 + the signal, as a shell reports it). A second signal closes
every connection at once. SIGINT or SIGHUP ignored when serve starts (nohup, a
background job) stay ignored. See docs/cluster.md.`,
		Example: `  devctl serve
  devctl serve --listen :9455 --interval 30s
  curl -s localhost:9455/metrics | grep devctl_device_memory`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", DefaultListen, "address to listen on: host:port with a port from 1 to 65535 (:9455 for every interface; port 0: any free port)")
	fl.DurationVar(&opts.Interval, "interval", 30*time.Second, "probe at most once per this interval (at least 1s)")
	fl.IntVar(&opts.MaxInFlight, "max-in-flight", 64, "requests handled at once; more are answered 503")
	fl.DurationVar(&opts.RequestTimeout, "request-timeout", 10*time.Second, "deadline for handling one request")
	fl.BoolVar(&opts.NoBench, "no-bench", false, "do not export the last recorded bench figures")
	fl.StringVar(&opts.NFDFile, "nfd-file", "", "also write node labels to this NFD feature file after every probe, probing every --interval even without scrapes (e.g. "+nfd.DefaultPath+")")
	fl.BoolVar(&opts.RuntimeMetrics, "runtime-metrics", false, "also export Go runtime and process metrics (go_*, process_*; gathered on every scrape, so slower)")
	return cmd
}

// Complete has nothing to fill in: every flag is used as given.
func (o *Options) Complete() error { return nil }

// Validate checks the flags.
func (o *Options) Validate() error {
	if o.Interval < time.Second {
		return cmdutil.Usagef("invalid --interval %s: want at least 1s (the probe is not free)", o.Interval)
	}
	if o.MaxInFlight < 1 {
		return cmdutil.Usagef("invalid --max-in-flight %d: want 1 or more", o.MaxInFlight)
	}
	if o.RequestTimeout <= 0 {
		return cmdutil.Usagef("invalid --request-timeout %s: want a positive duration such as 10s", o.RequestTimeout)
	}
	if o.NFDFile == "-" {
		return cmdutil.Usagef("invalid --nfd-file -: serve writes a file; want a path such as %s", nfd.DefaultPath)
	}
	if o.Listener == nil {
		return validateListen(o.Listen)
	}
	return nil
}

// listenAccepted is what every --listen message says is accepted.
const listenAccepted = "want host:port with a port from 1 to 65535, e.g. 127.0.0.1:9455 (this machine only) or :9455 (every interface); port 0 picks a free one"

// validateListen refuses a --listen that cannot be meant: no port (":"
// would listen on every interface on a port the kernel picks), a port out
// of range or not a number (net.Listen would take a service name such as
// "http" too).
func validateListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	switch {
	case err != nil:
		return cmdutil.Usagef("invalid --listen %q: %s", addr, listenAccepted)
	case port == "":
		return cmdutil.Usagef("invalid --listen %q: the port is empty; %s", addr, listenAccepted)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return cmdutil.Usagef("invalid --listen %q: port %q is not a number from 0 to 65535; %s", addr, port, listenAccepted)
	}
	return nil
}

// listenError turns a failure to listen on the address the user chose
// into a usage error (exit 2) that says why and what would work; other
// failures stay runtime errors.
func listenError(addr string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return cmdutil.Usagef("invalid --listen %q: the address is already in use (another program, or another devctl serve, listens there); want a free port, e.g. :9456", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return cmdutil.Usagef("invalid --listen %q: no network interface of this machine has that address; want one of its addresses, 127.0.0.1 for this machine only, or no host (:9455) for every interface", addr)
	case errors.Is(err, syscall.EACCES):
		return cmdutil.Usagef("invalid --listen %q: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE); want a port from 1024 to 65535, e.g. :9455", addr)
	case errors.As(err, &dns):
		return cmdutil.Usagef("invalid --listen %q: cannot resolve host %q (%s); want an IP address or a host name this machine resolves", addr, dns.Name, dns.Err)
	}
	return fmt.Errorf("listening on %s: %w", addr, err)
}

// shutdownSignals are the signals that stop serve: SIGTERM, and SIGINT and
// SIGHUP unless they were ignored when devctl started (nohup, a background
// job of a script), since asking to be told of a signal would undo that.
func shutdownSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, s := range []os.Signal{syscall.SIGINT, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// signalName is how messages name a signal.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// stoppedBy is the result of a graceful shutdown after sig: nil (exit 0)
// for SIGTERM, which is how service managers stop a service; 128 + the
// signal number, as a shell reports a process a signal ended, for SIGINT
// (130) and SIGHUP (129), so a script sees it was interrupted and a service
// manager that sent SIGHUP for a reload sees a stop it did not ask for.
func stoppedBy(sig os.Signal) error {
	switch sig {
	case syscall.SIGINT:
		return &cmdutil.ExitError{Code: 128 + 2}
	case syscall.SIGHUP:
		return &cmdutil.ExitError{Code: 128 + 1}
	}
	return nil
}

// Run serves until ctx ends or a stop signal arrives.
func (opts *Options) Run(ctx context.Context) error {
	// Fail early on a bad --sysroot, --from or config rather than serve errors.
	if _, err := opts.Host(); err != nil {
		return err
	}
	if _, err := opts.Config(); err != nil {
		return err
	}
	if opts.Signals == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, shutdownSignals()...)
		defer signal.Stop(ch)
		opts.Signals = ch
	}
	timeout := max(4*opts.Timeout(), 30*time.Second)
	// Bench history describes this machine: not a --from snapshot or --sysroot tree.
	withBench := !opts.NoBench && !opts.Replaying()
	cache := serve.NewCache(opts.refresher(withBench, nfdExpiry(opts.Interval)), opts.Interval, timeout, opts.Now)
	handler := serve.Handler(cache, serve.Options{Version: opts.Version, MaxInFlight: opts.MaxInFlight, Timeout: opts.RequestTimeout, RuntimeMetrics: opts.RuntimeMetrics})

	ln := opts.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", opts.Listen); err != nil {
			return listenError(opts.Listen, err)
		}
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      opts.RequestTimeout + 5*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	ctx, cancel := context.WithCancel(ctx) // a stop signal cancels it
	defer cancel()
	go func() { _, _ = cache.Get(ctx) }() // probe now, not at the first scrape
	if opts.NFDFile != "" {
		// The labels must not expire for want of a scrape.
		go func() {
			t := time.NewTicker(opts.Interval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					_, _ = cache.Get(ctx)
				}
			}
		}()
	}
	fmt.Fprintf(opts.IO.ErrOut, "devctl: serving http://%s/metrics (probe at most every %s)\n", ln.Addr(), opts.Interval)
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	// A signal cancels ctx, which starts the graceful shutdown; a second
	// one closes every connection at once.
	stopped := make(chan os.Signal, 1)
	served := make(chan struct{})
	go func() {
		select {
		case sig := <-opts.Signals:
			fmt.Fprintf(opts.IO.ErrOut, "devctl: %s: shutting down; in-flight requests get %s\n", signalName(sig), serve.ShutdownGrace)
			stopped <- sig
			cancel()
		case <-served:
			return
		}
		select {
		case sig := <-opts.Signals:
			fmt.Fprintf(opts.IO.ErrOut, "devctl: %s again: closing every connection now\n", signalName(sig))
			_ = srv.Close()
		case <-served:
		}
	}()
	err := serve.Serve(ctx, srv, func() error { return srv.Serve(ln) })
	close(served)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err != nil {
		return err
	}
	select {
	case sig := <-stopped:
		return stoppedBy(sig)
	default:
		return nil
	}
}

// nfdExpiry is how long NFD keeps serve's labels: three probe intervals,
// and at least five minutes, so one slow or failed probe does not drop them.
func nfdExpiry(interval time.Duration) time.Duration {
	return max(3*interval, 5*time.Minute)
}

// refresher probes a fresh Host, runs every doctor check on that one
// probe, writes the NFD labels when asked, and reads the last recorded
// bench run.
func (opts *Options) refresher(withBench bool, expiry time.Duration) serve.RefreshFunc {
	return func(ctx context.Context) *serve.Snapshot {
		snap := &serve.Snapshot{}
		h, err := opts.FreshHost()
		if err != nil {
			snap.Err = err
			return snap
		}
		cfg, err := opts.Config()
		if err != nil {
			snap.Err = err
			return snap
		}
		rep, outcomes, err := opts.Probe(ctx, h)
		snap.Probe, snap.Err = rep, err
		if rep == nil {
			return snap
		}
		env := &doctor.Env{Host: h, Config: cfg, Report: rep, Outcomes: outcomes}
		results := doctor.RenderAll(doctor.Run(ctx, doctor.All(), env, doctor.Options{Timeout: opts.Timeout()}), doctor.English)
		snap.Doctor = &doctor.Report{SchemaVersion: doctor.SchemaVersion, Lang: doctor.English, Checks: results, Summary: doctor.Counts(results)}
		if opts.NFDFile != "" && snap.Err == nil {
			if err := opts.writeLabels(rep, expiry); err != nil {
				fmt.Fprintf(opts.IO.ErrOut, "devctl: %v\n", err)
			}
		}
		if withBench {
			if path, err := opts.BenchHistory(); err == nil {
				if runs, err := bench.LoadHistory(path); err == nil && len(runs) > 0 {
					last := runs[len(runs)-1]
					snap.Bench = &last
				}
			}
		}
		return snap
	}
}

func (opts *Options) writeLabels(rep *probe.Report, expiry time.Duration) error {
	data, err := nfd.Render(nfd.Labels(rep), opts.Version, opts.Now().Add(expiry))
	if err != nil {
		return err
	}
	return nfd.Write(opts.NFDFile, data)
}
