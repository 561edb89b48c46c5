package report

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/devctl/devctl/internal/safetext"
)

// RenderTable writes rows under a header. The table is plain ASCII so that
// it survives logs, CI output and copy-paste into issues.
func RenderTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	t.Header(toAny(header)...)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// Clean makes text read from the machine or a user's file safe to print on
// a terminal: it is safetext.Clean, devctl's one sanitiser (control
// characters, ESC and so every escape sequence, C1 controls, bidirectional
// overrides and line separators become "?"; a tab becomes a space; invalid
// UTF-8 becomes U+FFFD). The probe, recommend, bench and doctor renderers
// (log explanations included) pass every machine- or log-derived string
// through it; styled cells are built after it.
func Clean(s string) string { return safetext.Clean(s) }
