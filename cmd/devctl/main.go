// Command devctl tells ML engineers what compute devices a machine has,
// what they can do, how to configure frameworks for them and what is wrong.
package main

import (
	"os"

	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
)

func main() {
	os.Exit(root.Main(os.Args[1:], iostreams.System(), os.LookupEnv))
}
