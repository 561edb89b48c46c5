// Package snapshot is the `devctl snapshot` command: record what devctl
// reads on this machine into a file that replays anywhere with --from.
package snapshot

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/snapshot"
	"github.com/devctl/devctl/internal/target"
	"github.com/devctl/devctl/internal/units"
)

// Options are the command's flags and the dependencies it uses: the
// machine and settings to record, and how to probe them.
type Options struct {
	IO     *iostreams.IOStreams
	Host   func() (*host.Host, error)
	Config func() (*config.Config, error)
	Probe  func(ctx context.Context, h *host.Host, cfg *config.Config) (*probe.Report, []probe.Outcome, error)
	// Timeout is --timeout, each driver's and program's deadline.
	Timeout func() time.Duration
	Version string
	Now     func() time.Time

	Output     string
	Force      bool
	RedactHost bool
}

// NewCmdSnapshot builds the command.
func NewCmdSnapshot(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO: f.IO, Host: f.Host, Config: f.Config, Version: f.Version, Now: f.Now,
		Probe: func(ctx context.Context, h *host.Host, cfg *config.Config) (*probe.Report, []probe.Outcome, error) {
			return cmdutil.RunProbeOn(ctx, f, h, cfg, nil)
		},
		Timeout: func() time.Duration {
			if f.Global == nil {
				return 0
			}
			return f.Global.Timeout
		},
	}
	cmd := &cobra.Command{
		Use:   "snapshot -o FILE.tar.gz",
		Short: "Record what devctl reads on this machine, for bug reports and replay",
		Long: `Snapshot runs every probe driver through a recorder and writes what they read
to a tar.gz: the files (contents, listings, stat results, link targets, missing
paths), the output of the programs run, sysctl and NVML answers, and the
environment variables the drivers looked up. Nothing else is recorded. The
values of variables whose name looks secret (TOKEN, SECRET, PASSWORD, KEY,
CREDENTIAL, AUTH, COOKIE, SESSION, PRIVATE, ...) are never stored, and
secret-shaped values anywhere (tokens such as ghp_/hf_/sk-/AKIA..., URL
userinfo, key=value with a secret-looking key in the kernel command line,
mount options or flags) are replaced with [withheld], --redact-host or not.

-o names a new file, or an existing regular file with --force (replaced
atomically). A FIFO is written into (so -o /dev/stdout works when standard
output is a pipe); a symbolic link, a device or a socket is refused.

Replay it anywhere, on any OS, with --from:
  devctl --from FILE.tar.gz probe|doctor|recommend ...`,
		Example: `  devctl snapshot -o my-machine.tar.gz
  devctl snapshot --redact-host -o bug-1234.tar.gz
  devctl --from bug-1234.tar.gz probe -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "file to write (required), e.g. snap.tar.gz")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite the file if it exists")
	cmd.Flags().BoolVar(&opts.RedactHost, "redact-host", false, "replace the hostname, serial numbers and UUIDs with stable placeholders")
	return cmd
}

// Validate checks the output path before anything is probed, under the
// one output policy (internal/target): only a regular file is ever
// replaced (and only with --force); a FIFO is written into; a symlink is
// never replaced, a device, socket or directory never written: `-o
// /dev/stdout --force` once turned a container's /dev/stdout into a gzip
// file.
func (opts *Options) Validate() error {
	if opts.Output == "" {
		return cmdutil.Usagef("snapshot needs -o FILE: where to write the archive (e.g. -o snap.tar.gz)")
	}
	if err := target.Snapshot(opts.Force).Allow(opts.Output); err != nil {
		return cmdutil.Usagef("%w", err)
	}
	return nil
}

// Complete has nothing to fill in: every flag is used as given.
func (opts *Options) Complete() error { return nil }

// Run completes, validates, records and writes.
func Run(ctx context.Context, opts *Options) error { return cmdutil.RunSteps(ctx, opts) }

// Run records the probe (and doctor's checks when plugged in) and writes
// the archive atomically: a failed run leaves no half-written file.
func (opts *Options) Run(ctx context.Context) error {
	base, err := opts.Host()
	if err != nil {
		return err
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	// The recorder wraps the factory's host for this command only.
	rec := snapshot.NewRecorder(base)
	rep, outcomes, err := opts.Probe(ctx, rec.Host(), cfg)
	// A missing preferred device (exit 2 for probe) is a finding worth
	// recording, not a reason to refuse the snapshot.
	if err != nil && rep == nil {
		return err
	}
	// Doctor's checks read more than the drivers (ld.so.cache, cgroup
	// limits, mounts); run them too so `--from FILE doctor` replays them.
	env := &doctor.Env{Host: rec.Host(), Report: rep, Outcomes: outcomes, Config: cfg}
	doctor.Run(ctx, doctor.All(), env, doctor.Options{Timeout: opts.Timeout()})

	wopts := snapshot.WriteOptions{RedactHost: opts.RedactHost, DevctlVersion: opts.Version}
	if opts.Now != nil {
		wopts.Created = opts.Now()
	}
	// The path is checked again: what stands there must still be what
	// Validate allowed, and again just before the rename.
	out, err := target.Snapshot(opts.Force).Create(opts.Output)
	if err != nil {
		return err
	}
	sum, err := rec.Write(out, wopts)
	if err != nil {
		out.Abort()
		return fmt.Errorf("writing %s: %w", opts.Output, err)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	withheld := ""
	if sum.EnvWithheld > 0 {
		withheld = fmt.Sprintf(" (%d more withheld: secret-looking names)", sum.EnvWithheld)
	}
	redacted := ""
	if opts.RedactHost {
		redacted = ", host identifiers redacted"
	}
	fmt.Fprintf(opts.IO.Out, "wrote %s: %d files, %d commands, %d env vars%s%s, %s\n",
		opts.Output, sum.Files, sum.Commands, sum.Env, withheld, redacted, units.Bytes(sum.Bytes))
	return nil
}
