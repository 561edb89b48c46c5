// Command genfixtures rewrites testdata/doctor from internal/doctor/fixturegen.
//
//	go run ./internal/doctor/fixturegen/cmd/genfixtures -testdata testdata
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/devctl/devctl/internal/doctor/fixturegen"
)

func main() {
	testdata := flag.String("testdata", "testdata", "the repository's testdata directory")
	flag.Parse()
	if err := fixturegen.Write(*testdata, filepath.Join(*testdata, "doctor")); err != nil {
		fmt.Fprintln(os.Stderr, "genfixtures:", err)
		os.Exit(1)
	}
}
