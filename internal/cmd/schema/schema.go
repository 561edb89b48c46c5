// Package schema is the `devctl schema` command: print the JSON Schema of
// one of devctl's JSON outputs.
package schema

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/schemas"
)

// Options are the command's arguments and dependencies.
type Options struct {
	IO   *iostreams.IOStreams
	Name string
}

// NewCmdSchema builds `devctl schema [NAME]`. runF, when not nil, replaces
// the run step (tests stop after argument parsing).
func NewCmdSchema(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "schema [NAME]",
		Short: "Print the JSON Schema of a JSON output (" + strings.Join(schemas.Names(), ", ") + ")",
		Long: `Schema prints the JSON Schema (draft 2020-12) of one of devctl's JSON documents,
as built into this binary. Without NAME it lists the names. The rules for
schema_version changes are in docs/schemas.md.`,
		Example: `  devctl schema probe > probe.schema.json
  devctl schema`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: schemas.Names(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			return cmdutil.Execute(cmd.Context(), opts, runF)
		},
	}
	return cmd
}

// Complete has nothing to fill in: the name is used as given.
func (opts *Options) Complete() error { return nil }

// Validate has nothing to check without reading the schemas.
func (opts *Options) Validate() error { return nil }

// Run prints the schema, or the list of names.
func (opts *Options) Run(context.Context) error {
	out := opts.IO.Out
	if opts.Name == "" {
		for _, n := range schemas.Names() {
			fmt.Fprintln(out, n)
		}
		return nil
	}
	b, err := schemas.Get(opts.Name)
	if err != nil {
		return cmdutil.Usagef("%w", err)
	}
	_, err = out.Write(b)
	return err
}
