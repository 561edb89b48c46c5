package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/selftest"
	"github.com/devctl/devctl/internal/units"
)

// selftestTable renders the self-test: what ran and under which limits,
// then per framework each device's operations by precision.
func selftestTable(w io.Writer, r *selftest.Outcome, lang doctor.Lang, st *report.Style) error {
	fmt.Fprintf(w, "\n%s %s  %s\n", st.Title(label("selftest.title", lang)), status(st, doctor.Status(r.Status), lang),
		st.Dim(fmt.Sprintf("%.1f s / %.0f s", float64(r.DurationMS)/1000, float64(r.BudgetMS)/1000)))
	fmt.Fprintf(w, "  %s\n", report.Clean(r.Detail))
	if r.Python != "" {
		py := r.Python
		if r.PythonVersion != "" {
			py += " (Python " + r.PythonVersion + ")"
		}
		fmt.Fprintf(w, "  %s %s; %s\n", st.Label(label("selftest.python", lang)), report.Clean(py), report.Clean(r.PythonSource))
		iso := r.Isolation
		mem := label("selftest.nomem", lang)
		if iso.MemoryLimitBytes != nil {
			mem = "RLIMIT_AS " + units.Bytes(*iso.MemoryLimitBytes).Format(units.GiB, 1)
		}
		fmt.Fprintf(w, "  %s %s %.0f s, %s, network: %s\n", st.Label(label("selftest.limits", lang)),
			label("selftest.group", lang), float64(iso.TimeLimitMS)/1000, mem, iso.Network)
	}
	for _, fw := range r.Frameworks {
		if fw.Status == selftest.Skip && !fw.Present {
			continue
		}
		name := fw.Name
		if fw.Version != "" {
			name += " " + fw.Version
		}
		extra := fw.Exit
		if fw.ImportMS != nil {
			extra = fmt.Sprintf("import %.1f s, %s", *fw.ImportMS/1000, fw.Exit)
		}
		fmt.Fprintf(w, "\n  %s %s  %s\n", st.Title(report.Clean(name)), status(st, doctor.Status(fw.Status), lang), st.Dim(report.Clean(extra)))
		if fw.Status != selftest.Pass {
			fmt.Fprintf(w, "  %s\n", report.Clean(fw.Detail))
		}
		if fw.Error != nil {
			fmt.Fprintf(w, "  %s %s (%s)\n", st.Label(label("selftest.error", lang)), report.Clean(firstLine(fw.Error.Message)), fw.Error.Category)
		}
		for _, d := range fw.Devices {
			if err := deviceOps(w, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// deviceOps is one device's table: a row per operation, a column per
// precision, each cell "ok 1.2 ms", "FAILED <category>" or "unfinished".
func deviceOps(w io.Writer, d selftest.Device) error {
	precs := []string{}
	seen := map[string]bool{}
	rows := map[string]map[string]string{}
	var order []string
	for _, op := range d.Ops {
		if !seen[op.Precision] {
			seen[op.Precision] = true
			precs = append(precs, op.Precision)
		}
		if rows[op.Name] == nil {
			rows[op.Name] = map[string]string{}
			order = append(order, op.Name)
		}
		cell := string(op.Status)
		switch {
		case op.Status == selftest.OpOK && op.DurationMS != nil:
			cell = fmt.Sprintf("ok %.1f ms", *op.DurationMS)
		case op.Status == selftest.OpFailed && op.Error != nil:
			cell = "FAILED " + string(op.Error.Category)
		}
		rows[op.Name][op.Precision] = cell
	}
	fmt.Fprintf(w, "  %s (%s, %s)\n", report.Clean(d.ID), d.Backend, report.Clean(d.Name))
	if len(order) == 0 {
		return nil
	}
	header := append([]string{"OPERATION"}, upper(precs)...)
	var table [][]string
	for _, name := range order {
		row := []string{name}
		for _, p := range precs {
			c := rows[name][p]
			if c == "" {
				c = "-"
			}
			row = append(row, c)
		}
		table = append(table, row)
	}
	var b strings.Builder
	if err := report.RenderTable(&b, header, table); err != nil {
		return err
	}
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, op := range d.Ops {
		if op.Status == selftest.OpFailed && op.Error != nil {
			fmt.Fprintf(w, "  %s %s: %s\n", op.Name, op.Precision, report.Clean(firstLine(op.Error.Message)))
		}
	}
	return nil
}

func upper(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToUpper(s)
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
