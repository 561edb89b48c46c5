package root

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmdutil"
)

// ServeCommand builds `devctl serve`. The devctl-serve binary sets it;
// devctl itself leaves it nil and gets a stand-in that runs devctl-serve,
// so that Prometheus' client library, whose package set-up runs at every
// start, is not linked into the binary people run for `devctl probe`
// (measured: about 0.7 ms, a tenth of a probe; docs/cluster.md).
var ServeCommand func(f *cmdutil.Factory) *cobra.Command

// ServeBinary is the program that implements `devctl serve`.
const ServeBinary = "devctl-serve"

// mainArgs are the arguments Main was given, passed on unchanged to
// devctl-serve (which has the same command tree plus serve).
var mainArgs []string

func newCmdServeStub(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve Prometheus metrics and the probe and doctor JSON over HTTP (runs devctl-serve)",
		Long: `Serve is implemented by the devctl-serve program, which devctl runs with the
same arguments; it is found next to devctl or on PATH. Install both with
  go install github.com/devctl/devctl/cmd/...@latest
See 'devctl-serve serve --help' and docs/cluster.md.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := findServe()
			if err != nil {
				return cmdutil.Usagef("devctl serve needs the %s program next to devctl or on PATH: install it with 'go install github.com/devctl/devctl/cmd/%s@latest' (release archives include it)", ServeBinary, ServeBinary)
			}
			return execServe(f, path, mainArgs)
		},
	}
}

// findServe looks for devctl-serve beside this executable, then on PATH.
func findServe() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), ServeBinary+exeSuffix)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath(ServeBinary)
	if err != nil {
		return "", errors.New("not found")
	}
	return p, nil
}
