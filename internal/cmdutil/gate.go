package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/devctl/devctl/internal/gate"
	"github.com/devctl/devctl/internal/safetext"
)

// CheckRequirements parses --require expressions and checks their field
// names against the type of report, before anything is probed. A bad one
// is printed with a caret under the fault and exits 2.
func CheckRequirements(errOut io.Writer, exprs []string, report any) error {
	_, err := gate.CheckAll(exprs, report)
	return requireError(errOut, err)
}

// Gate evaluates --require expressions against report. Each unmet one is
// printed on standard error, one line each, and the command exits 3.
func Gate(errOut io.Writer, exprs []string, report any) error {
	if len(exprs) == 0 {
		return nil
	}
	results, err := gate.CheckAll(exprs, report)
	if err != nil {
		return requireError(errOut, err)
	}
	unmet := 0
	for _, r := range results {
		if !r.Met {
			unmet++
			fmt.Fprintf(errOut, "devctl: unmet requirement %s: %s\n", safetext.Clean(r.Requirement), safetext.Clean(strings.Join(r.Reasons, "; ")))
		}
	}
	if unmet > 0 {
		return &ExitError{Code: ExitFound}
	}
	return nil
}

func requireError(errOut io.Writer, err error) error {
	var se *gate.SyntaxError
	if errors.As(err, &se) {
		// %q escapes what the terminal must not see; the message quotes the
		// user's words, so it is cleaned like every echo.
		fmt.Fprintf(errOut, "devctl: invalid --require %q at column %d: %s\n%s\n", se.Source, se.Pos+1, safetext.Clean(se.Msg), se.Caret("  "))
		return &ExitError{Code: ExitUsage}
	}
	return err
}
