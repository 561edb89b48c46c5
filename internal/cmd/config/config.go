// Package config is `devctl config`: inspect the effective settings.
package config

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/report"
)

// showFormats are what `config show -o` offers.
var showFormats = output.Spec{output.Table, output.JSON, output.YAML}

// ShowOptions are `config show`'s flags and what it uses.
type ShowOptions struct {
	IO     *iostreams.IOStreams
	Config func() (*config.Config, error)
	Output string

	format output.Format // set by Complete
}

// NewCmdConfig builds `devctl config`.
func NewCmdConfig(f *cmdutil.Factory, runF func(*ShowOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect devctl's configuration",
		// Runnable with no arguments, so that 'devctl config typo' is an
		// unknown command (exit 2) rather than help and exit 0.
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	opts := &ShowOptions{IO: f.IO, Config: f.Config}
	show := &cobra.Command{
		Use:   "show",
		Short: "Print the effective settings and where each came from",
		Long: `Show prints every setting with its value and its source: the built-in default,
the config file, a DEVCTL_* environment variable or a flag. Flags win over the
environment, which wins over the file, which wins over the defaults.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	showFormats.Register(show.Flags(), &opts.Output, "")
	cmd.AddCommand(show)
	return cmd
}

// Setting is one row of `config show`.
type Setting struct {
	Key    string `json:"key" yaml:"key"`
	Value  string `json:"value" yaml:"value"`
	Source string `json:"source" yaml:"source"`
}

// Shown is the whole output.
type Shown struct {
	File     string    `json:"file" yaml:"file"`
	Settings []Setting `json:"settings" yaml:"settings"`
}

// Complete parses -o.
func (opts *ShowOptions) Complete() (err error) {
	opts.format, err = showFormats.Parse(opts.Output)
	return err
}

// Validate has nothing to check beyond -o.
func (opts *ShowOptions) Validate() error { return nil }

// Run prints the configuration.
func (opts *ShowOptions) Run(context.Context) error {
	format := opts.format
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	out := Shown{File: cfg.File}
	for _, k := range config.Keys {
		out.Settings = append(out.Settings, Setting{Key: k, Value: cfg.Value(k), Source: cfg.Sources[k].String()})
	}
	if ok, err := output.Export(opts.IO.Out, format, out); ok {
		return err
	}
	file := out.File
	if file == "" {
		file = "(none)"
	}
	fmt.Fprintf(opts.IO.Out, "Config file: %s\n", file)
	rows := make([][]string, len(out.Settings))
	for i, s := range out.Settings {
		rows[i] = []string{s.Key, s.Value, s.Source}
	}
	return report.RenderTable(opts.IO.Out, []string{"KEY", "VALUE", "SOURCE"}, rows)
}
