// Package snapshot is the `devctl snapshot` command: record what devctl
// reads on this machine into a file that replays anywhere with --from.
package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/snapshot"
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

	kind outputKind // set by Validate
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

// outputKind is what -o names, decided before anything is probed.
type outputKind int

const (
	outputNew     outputKind = iota // nothing there: create it
	outputRegular                   // a regular file: replaced atomically, only with --force
	outputPipe                      // a FIFO (also /dev/stdout piped on): written into, never replaced
)

// Validate checks the output path before anything is probed. Only a
// regular file is ever replaced (and only with --force); a FIFO is written
// into; a symlink is never replaced, a device, socket or directory never
// written: `-o /dev/stdout --force` once turned a container's /dev/stdout
// into a gzip file.
func (opts *Options) Validate() (err error) {
	opts.kind, err = classifyOutput(opts)
	return err
}

// Complete has nothing to fill in: every flag is used as given.
func (opts *Options) Complete() error { return nil }

func classifyOutput(opts *Options) (outputKind, error) {
	if opts.Output == "" {
		return 0, cmdutil.Usagef("snapshot needs -o FILE: where to write the archive (e.g. -o snap.tar.gz)")
	}
	lst, err := os.Lstat(opts.Output)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, cmdutil.Usagef("invalid -o %q: %w", opts.Output, unwrapPath(err))
	}
	if err == nil {
		st := lst
		if lst.Mode()&fs.ModeSymlink != 0 {
			// A link is followed only to a pipe (`-o /dev/stdout | ...`);
			// anything else behind it would be replaced by the rename.
			if st, err = os.Stat(opts.Output); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
				return 0, cmdutil.Usagef("invalid -o %q: it is a symbolic link; devctl does not replace links: name the file itself", opts.Output)
			}
		}
		switch m := st.Mode(); {
		case m&fs.ModeNamedPipe != 0:
			return outputPipe, nil
		case m.IsDir():
			return 0, cmdutil.Usagef("invalid -o %q: it is a directory; want a file path such as snap.tar.gz", opts.Output)
		case !m.IsRegular():
			return 0, cmdutil.Usagef("invalid -o %q: it is a device or socket; want a regular file path (or a pipe, e.g. -o /dev/stdout | ...)", opts.Output)
		case !opts.Force:
			return 0, cmdutil.Usagef("invalid -o %q: the file exists; pass --force to overwrite it", opts.Output)
		}
	}
	dir := filepath.Dir(opts.Output)
	dst, err := os.Stat(dir)
	if err != nil {
		return 0, cmdutil.Usagef("invalid -o %q: directory %s: %w", opts.Output, dir, unwrapPath(err))
	}
	if !dst.IsDir() {
		return 0, cmdutil.Usagef("invalid -o %q: %s is not a directory", opts.Output, dir)
	}
	if lst != nil {
		return outputRegular, nil
	}
	return outputNew, nil
}

// Run completes, validates, records and writes.
func Run(ctx context.Context, opts *Options) error { return cmdutil.RunSteps(ctx, opts) }

// Run records the probe (and doctor's checks when plugged in) and writes
// the archive atomically: a failed run leaves no half-written file.
func (opts *Options) Run(ctx context.Context) error {
	kind := opts.kind
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
	var sum snapshot.Summary
	if kind == outputPipe {
		sum, err = writeIntoPipe(opts.Output, rec, wopts)
	} else {
		sum, err = writeReplacing(opts.Output, kind, rec, wopts)
	}
	if err != nil {
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

// writeReplacing writes the archive to a temp file beside path and renames
// it over path, so a failed run leaves no half-written file. Just before the
// rename path is checked again: what stands there now must still be what
// Validate allowed (nothing, or a regular file).
func writeReplacing(path string, kind outputKind, rec *snapshot.Recorder, wopts snapshot.WriteOptions) (snapshot.Summary, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".devctl-snapshot-*")
	if err != nil {
		return snapshot.Summary{}, cmdutil.Usagef("invalid -o %q: cannot create a file in %s: %w", path, dir, unwrapPath(err))
	}
	defer os.Remove(tmp.Name()) // after a successful rename this is a no-op
	sum, err := rec.Write(tmp, wopts)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		return sum, fmt.Errorf("writing %s: %w", path, err)
	}
	st, err := os.Lstat(path)
	switch {
	case err == nil && (kind != outputRegular || !st.Mode().IsRegular()):
		return sum, fmt.Errorf("writing %s: it changed while devctl was probing; nothing was replaced", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return sum, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return sum, fmt.Errorf("writing %s: %w", path, err)
	}
	return sum, nil
}

// writeIntoPipe streams the archive into a FIFO. Opening it does not wait
// for a reader: a pipe nobody reads is refused rather than hung on.
func writeIntoPipe(path string, rec *snapshot.Recorder, wopts snapshot.WriteOptions) (snapshot.Summary, error) {
	fh, err := openPipeForWriting(path)
	if err != nil {
		return snapshot.Summary{}, cmdutil.Usagef("invalid -o %q: a pipe with no reader (%w)", path, unwrapPath(err))
	}
	sum, err := rec.Write(fh, wopts)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sum, fmt.Errorf("writing %s: %w", path, err)
	}
	return sum, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
