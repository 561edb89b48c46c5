package root

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
)

// versionLine is what `devctl version` and `devctl --version` print: one
// text, so that a script may use either.
func versionLine() string { return fmt.Sprintf("devctl version %s\n", version()) }

// newCmdVersion builds `devctl version`, the spelling gh and kubectl users
// type, beside cobra's --version.
func newCmdVersion(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print devctl's version",
		Long:  "Version prints devctl's version, as --version does: the release tag, the module version `go install` recorded, or dev and the commit of a local build.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(f.IO.Out, versionLine())
			return err
		},
	}
}
