// Command devctl-serve is devctl with `serve` (Prometheus metrics and the
// probe and doctor JSON over HTTP). It is a separate program so that the
// metrics library stays out of the devctl binary's start-up; `devctl
// serve` runs it. Every other devctl command works here too.
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/devctl/devctl/internal/cmd/root"
	servecmd "github.com/devctl/devctl/internal/cmd/serve"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/iostreams"
)

func main() {
	root.ServeCommand = func(f *cmdutil.Factory) *cobra.Command { return servecmd.NewCmdServe(f, nil) }
	os.Exit(root.Main(os.Args[1:], iostreams.System(), os.LookupEnv))
}
