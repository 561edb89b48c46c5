// Command gendocs writes devctl's command reference from the cobra tree:
// markdown pages (docs/commands/, committed and checked by a test) and man
// pages (man/man1/, built for releases). Run it with `make docs`.
//
//	go run ./tools/gendocs -md docs/commands -man man/man1
//
// Man pages are dated from SOURCE_DATE_EPOCH when it is set, so release
// builds are reproducible.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/devctl/devctl/internal/cmd/factory"
	"github.com/devctl/devctl/internal/cmd/root"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/tools/gendocs/gen"
)

func main() {
	md := flag.String("md", "", "write markdown pages to this directory")
	man := flag.String("man", "", "write man pages to this directory")
	flag.Parse()
	date := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gendocs: invalid SOURCE_DATE_EPOCH %q: want Unix seconds\n", s)
			os.Exit(2)
		}
		date = time.Unix(n, 0).UTC()
	}
	io, _, _, _ := iostreams.Test()
	cmd := root.NewCmdRoot(factory.New(io, func(string) (string, bool) { return "", false }, "dev"))
	if err := gen.Write(cmd, *md, *man, date); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}
