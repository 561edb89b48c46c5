// Package bench is the `devctl bench` command. (Placeholder being replaced.)
package bench

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
)

// Options are the command's flags and dependencies.
type Options struct {
	Factory *cmdutil.Factory
}

// NewCmdBench builds the command.
func NewCmdBench(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	return &cobra.Command{
		Use:    "bench",
		Short:  "(not implemented yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return errors.New("not implemented yet")
		},
	}
}
