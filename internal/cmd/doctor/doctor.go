// Package doctor is the `devctl doctor` command. (Placeholder being replaced.)
package doctor

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
)

// Options are the command's flags and dependencies.
type Options struct {
	Factory *cmdutil.Factory
}

// NewCmdDoctor builds the command.
func NewCmdDoctor(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{Factory: f}
	return &cobra.Command{
		Use:    "doctor",
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
