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

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/snapshot"
)

// Options are the command's flags and dependencies.
type Options struct {
	Factory    *cmdutil.Factory
	Output     string
	Force      bool
	RedactHost bool
}

// NewCmdSnapshot builds the command.
func NewCmdSnapshot(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:   "snapshot -o FILE.tar.gz",
		Short: "Record what devctl reads on this machine, for bug reports and replay",
		Long: `Snapshot runs every probe driver through a recorder and writes what they read
to a tar.gz: the files (contents, listings, stat results, link targets, missing
paths), the output of the programs run, sysctl and NVML answers, and the
environment variables the drivers looked up. Nothing else is recorded. The
values of variables whose name looks secret (TOKEN, SECRET, PASSWORD, KEY,
CREDENTIAL, AUTH, COOKIE, SESSION, PRIVATE, ...) are never stored.

Replay it anywhere, on any OS, with --from:
  devctl --from FILE.tar.gz probe|doctor|recommend ...`,
		Example: `  devctl snapshot -o my-machine.tar.gz
  devctl snapshot --redact-host -o bug-1234.tar.gz
  devctl --from bug-1234.tar.gz probe -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "file to write (required), e.g. snap.tar.gz")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite the file if it exists")
	cmd.Flags().BoolVar(&opts.RedactHost, "redact-host", false, "replace the hostname, serial numbers and UUIDs with stable placeholders")
	return cmd
}

// Validate checks the output path before anything is probed.
func Validate(opts *Options) error {
	if opts.Output == "" {
		return cmdutil.Usagef("snapshot needs -o FILE: where to write the archive (e.g. -o snap.tar.gz)")
	}
	st, err := os.Stat(opts.Output)
	switch {
	case err == nil && st.IsDir():
		return cmdutil.Usagef("invalid -o %q: it is a directory; want a file path such as snap.tar.gz", opts.Output)
	case err == nil && !opts.Force:
		return cmdutil.Usagef("invalid -o %q: the file exists; pass --force to overwrite it", opts.Output)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return cmdutil.Usagef("invalid -o %q: %v", opts.Output, unwrapPath(err))
	}
	dir := filepath.Dir(opts.Output)
	dst, err := os.Stat(dir)
	if err != nil {
		return cmdutil.Usagef("invalid -o %q: directory %s: %v", opts.Output, dir, unwrapPath(err))
	}
	if !dst.IsDir() {
		return cmdutil.Usagef("invalid -o %q: %s is not a directory", opts.Output, dir)
	}
	return nil
}

// Run records the probe (and doctor's checks when plugged in) and writes
// the archive atomically: a failed run leaves no half-written file.
func Run(ctx context.Context, opts *Options) error {
	if err := Validate(opts); err != nil {
		return err
	}
	f := opts.Factory
	var rec *snapshot.Recorder
	base := f.HostFunc
	f.HostFunc = func() (*host.Host, error) {
		h, err := base()
		if err != nil {
			return nil, err
		}
		rec = snapshot.NewRecorder(h)
		return rec.Host(), nil
	}
	rep, outcomes, err := cmdutil.RunProbe(ctx, f, nil)
	if err != nil && rep == nil {
		return err
	}
	// A missing preferred device (exit 2 for probe) is a finding worth
	// recording, not a reason to refuse the snapshot.
	if rec == nil {
		return errors.New("snapshot: the probe never asked for the host")
	}
	// Doctor's checks read more than the drivers (ld.so.cache, cgroup
	// limits, mounts); run them too so `--from FILE doctor` replays them.
	cfg, cfgErr := f.Config()
	env := &doctor.Env{Host: rec.Host(), Report: rep, Outcomes: outcomes, Config: cfg, ConfigErr: cfgErr}
	doctor.Run(ctx, doctor.All(), env, doctor.Options{Timeout: f.Global.Timeout})

	dir := filepath.Dir(opts.Output)
	tmp, err := os.CreateTemp(dir, ".devctl-snapshot-*")
	if err != nil {
		return cmdutil.Usagef("invalid -o %q: cannot create a file in %s: %v", opts.Output, dir, unwrapPath(err))
	}
	defer os.Remove(tmp.Name()) // after a successful rename this is a no-op
	wopts := snapshot.WriteOptions{RedactHost: opts.RedactHost, DevctlVersion: f.Version}
	if f.Now != nil {
		wopts.Created = f.Now()
	}
	sum, err := rec.Write(tmp, wopts)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", opts.Output, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", opts.Output, err)
	}
	if err := os.Rename(tmp.Name(), opts.Output); err != nil {
		return fmt.Errorf("writing %s: %w", opts.Output, err)
	}
	withheld := ""
	if sum.EnvWithheld > 0 {
		withheld = fmt.Sprintf(" (%d more withheld: secret-looking names)", sum.EnvWithheld)
	}
	redacted := ""
	if opts.RedactHost {
		redacted = ", host identifiers redacted"
	}
	fmt.Fprintf(f.IO.Out, "wrote %s: %d files, %d commands, %d env vars%s%s, %s\n",
		opts.Output, sum.Files, sum.Commands, sum.Env, withheld, redacted, humanBytes(sum.Bytes))
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}
