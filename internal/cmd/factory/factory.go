// Package factory wires devctl's production dependencies: the one place
// that knows how a Host is opened (live, --sysroot, --from) and how the
// configuration is loaded. Commands take what they use from the Factory it
// builds; tests build their own Factory from fakes.
package factory

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/probe/nvidia"
	"github.com/devctl/devctl/internal/snapshot"
)

// New builds the production factory for the given streams: the live
// machine (or --sysroot, or a --from snapshot), the layered configuration,
// the clock. Nothing is built until a command asks for it.
func New(io *iostreams.IOStreams, lookupEnv func(string) (string, bool), version string) *cmdutil.Factory {
	f := &cmdutil.Factory{
		IO:        io,
		Version:   version,
		Global:    &cmdutil.GlobalOptions{ConfigFlags: map[string]config.Flag{}},
		Now:       time.Now,
		LookupEnv: lookupEnv,
		// The live machine's files, never --sysroot's: a replay records
		// nothing (cmdutil.HistoryLog).
		MachineIDFunc: func() string { return history.MachineID(os.ReadFile) },
	}
	f.HostFunc = func() (*host.Host, error) {
		g := f.Global
		if g.NvidiaSMI != "" {
			if _, err := exec.LookPath(g.NvidiaSMI); err != nil {
				var ee *exec.Error
				if errors.As(err, &ee) {
					err = unwrapPath(ee.Err)
				}
				return nil, cmdutil.Usagef("invalid --nvidia-smi %q: %w; want the path of an executable nvidia-smi", g.NvidiaSMI, err)
			}
		}
		if g.From != "" {
			if g.Sysroot != "" {
				return nil, cmdutil.Usagef("--from and --sysroot cannot be used together: a snapshot is a whole machine")
			}
			h, err := snapshot.Open(g.From)
			if err != nil {
				return nil, cmdutil.Usagef("--from %s: %w", g.From, err)
			}
			return h, nil
		}
		if g.Sysroot != "" {
			name := g.SysrootFrom
			if name == "" {
				name = "--sysroot"
			}
			st, err := os.Stat(g.Sysroot)
			if err == nil && !st.IsDir() {
				err = errors.New("not a directory")
			}
			if err == nil && !isDir(filepath.Join(g.Sysroot, "proc")) && !isDir(filepath.Join(g.Sysroot, "sys")) {
				// An empty or unrelated directory would give an empty
				// report with exit 0: say so instead.
				err = errors.New("it has neither proc/ nor sys/")
			}
			if err != nil {
				return nil, cmdutil.Usagef("invalid %s %q: %w; want a directory holding a machine's proc/ and sys/ trees", name, g.Sysroot, unwrapPath(err))
			}
		}
		opts := host.LocalOptions{Sysroot: g.Sysroot, CommandTimeout: g.Timeout}
		if g.NvidiaSMI != "" {
			opts.Programs = map[string]string{"nvidia-smi": g.NvidiaSMI}
		}
		if g.Sysroot == "" {
			opts.NVML = nvidia.LocalNVML()
		}
		h, err := host.Local(opts)
		if err != nil {
			return nil, cmdutil.Usagef("%w", err)
		}
		return h, nil
	}
	f.ConfigFunc = func(flags map[string]config.Flag) (*config.Config, error) {
		return config.Load(config.LoadOptions{File: f.Global.Config, LookupEnv: f.LookupEnv, Flags: flags})
	}
	return f
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
