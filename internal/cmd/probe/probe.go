// Package probe is the `devctl probe` command: what devices this machine
// has and what each can do.
package probe

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/nfd"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/target"
)

// NFD is the -o value that writes a node-feature-discovery feature file.
const NFD output.Format = "nfd"

// formats are what -o offers.
var formats = output.Spec{output.Table, output.JSON, output.YAML, NFD}

// Options are the probe command's flags and the dependencies it uses.
type Options struct {
	IO      *iostreams.IOStreams
	Now     func() time.Time
	Version string
	// Probe runs the drivers named by only (all when empty).
	Probe func(ctx context.Context, only []string) (*probe.Report, error)

	Output string
	Only   []string
	// Require holds --require expressions (see internal/gate).
	Require []string
	// NFDFile and NFDExpiry say where -o nfd writes ("" or "-": standard
	// output, like every other -o) and for how long NFD should trust the
	// labels.
	NFDFile   string
	NFDExpiry time.Duration

	format output.Format // set by Complete
}

// NewCmdProbe builds `devctl probe`. runF, when not nil, replaces the run
// step (tests stop after flag parsing).
func NewCmdProbe(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{
		IO:      f.IO,
		Now:     f.Now,
		Version: f.Version,
		Probe: func(ctx context.Context, only []string) (*probe.Report, error) {
			rep, _, err := cmdutil.RunProbe(ctx, f, only)
			return rep, err
		},
	}
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Show the machine's compute devices and what each can do",
		Long: `Probe detects CPUs, memory and accelerators (NVIDIA CUDA, AMD ROCm, Intel XPU,
Google TPU, AWS Neuron, Apple MPS) and prints the capability report: a summary
of the default device, every device with its memory and precisions, and any
driver that failed or timed out.`,
		Example: `  devctl probe
  devctl probe -o json | jq .summary
  devctl probe --only cpu,nvidia
  devctl probe --sysroot testdata/accel/nvidia-p100-no-nvml
  devctl probe --require 'gpu_count>=8' --require summary.supports_bf16 --require 'cuda_version>=12.1'
  devctl probe --require 'devices[backend=cuda].pcie_link.width_current==16'
  devctl probe -o nfd                        # print node labels for node-feature-discovery
  devctl probe -o nfd --nfd-file /etc/kubernetes/node-feature-discovery/features.d/devctl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	formats.Register(cmd.Flags(), &opts.Output, "table is plain when piped; nfd prints NFD's feature file format")
	cmd.Flags().StringVar(&opts.NFDFile, "nfd-file", "", "with -o nfd: write the labels atomically to this feature file instead of printing them (NFD reads "+nfd.DefaultPath+")")
	cmd.Flags().DurationVar(&opts.NFDExpiry, "nfd-expiry", time.Hour, "with -o nfd: NFD drops the labels this long after the write unless rewritten (0: never; else at least 1m)")
	cmd.Flags().StringArrayVar(&opts.Require, "require", nil, "exit 3 unless the report meets this requirement, e.g. 'gpu_count>=8' (repeatable; see docs/ci.md)")
	cmd.Flags().StringSliceVar(&opts.Only, "only", nil, "run only these drivers (comma-separated): cpu, memory, nvidia, rocm, xpu, xla, neuron, mps, software")
	return cmd
}

// Run completes, validates, probes and prints.
func Run(ctx context.Context, opts *Options) error { return cmdutil.RunSteps(ctx, opts) }

// Complete parses -o.
func (o *Options) Complete() (err error) {
	o.format, err = formats.Parse(o.Output)
	return err
}

// Validate checks the flags before anything is probed, --require
// expressions included.
func (o *Options) Validate() error {
	if err := nfd.CheckExpiry(o.NFDExpiry); err != nil {
		return cmdutil.Usagef("invalid --nfd-expiry %s: %v", o.NFDExpiry, err)
	}
	if o.NFDFile != "" && o.format != NFD {
		return cmdutil.Usagef("--nfd-file %s writes node labels: it needs -o nfd", o.NFDFile)
	}
	if o.format == NFD && o.NFDFile != "" && o.NFDFile != "-" {
		// The feature file's path is checked before anything is probed,
		// as every output path is (internal/target).
		if err := target.NFDFile.Allow(o.NFDFile); err != nil {
			return err
		}
	}
	return cmdutil.CheckRequirements(o.IO.ErrOut, o.Require, &probe.Report{})
}

// Run probes, prints and applies --require.
func (o *Options) Run(ctx context.Context) error {
	rep, err := o.Probe(ctx, o.Only)
	if err != nil {
		return err
	}
	if o.format == NFD {
		err = WriteNFD(o.IO, rep, o.NFDFile, o.NFDExpiry, o.Now(), o.Version)
	} else {
		err = Print(o.IO, rep, o.format)
	}
	if err != nil {
		return err
	}
	return cmdutil.Gate(o.IO.ErrOut, o.Require, rep)
}

// WriteNFD writes the report's node labels as an NFD feature file at path
// ("" or "-": standard output), expiring expiry after now (0: never).
func WriteNFD(io *iostreams.IOStreams, rep *probe.Report, path string, expiry time.Duration, now time.Time, version string) error {
	var until time.Time
	if expiry > 0 {
		until = now.Add(expiry)
	}
	data, err := nfd.Render(nfd.Labels(rep), version, until)
	if err != nil {
		return err
	}
	if path == "" || path == "-" {
		_, err = io.Out.Write(data)
		return err
	}
	if err := nfd.Write(path, data); err != nil {
		return err
	}
	fmt.Fprintf(io.ErrOut, "devctl: wrote %d node labels to %s\n", len(nfd.Labels(rep)), path)
	return nil
}

// Print renders a report in the chosen format.
func Print(io *iostreams.IOStreams, rep *probe.Report, format output.Format) error {
	if ok, err := output.Export(io.Out, format, rep); ok {
		return err
	}
	return Table(io.Out, rep, report.NewStyle(io.Out, io.ColorEnabled()))
}
