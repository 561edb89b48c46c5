package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/internal/supervise/supervisetest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"devctl": func() { os.Exit(root.Main(os.Args[1:], iostreams.System(), os.LookupEnv)) },
		// testchild is the real child program of the `devctl run` scripts.
		"testchild": func() { os.Exit(supervisetest.Main(os.Args[1:])) },
	})
}

// update rewrites the golden files inside the scripts (`cmp stdout X`
// sections) with what devctl prints now: go test ./cmd/devctl -update.
var update = flag.Bool("update", false, "rewrite the golden sections of testdata/script/*.txtar")

// TestScripts runs the CLI as a user would: testdata/script/*.txtar. Each
// script sees $FIXTURES, the repository's testdata directory.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		RequireExplicitExec: true,
		UpdateScripts:       *update,
	})
}
