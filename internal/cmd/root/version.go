package root

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
)

// versionLine is what `devctl version` prints: the line cobra's default
// --version prints, so that a script may use either (a test compares
// them). Not through SetVersionTemplate: a custom template brings in
// text/template, whose reflection keeps every exported method in the
// binary (2.6 MB and about 20 page faults more at every start, measured).
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
