package bench

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/units"

	"github.com/devctl/devctl/internal/bench"
)

// Table renders a bench run: one row per measured figure beside
// theoretical and efficiency, the links apart (their figures are computed,
// not measured), how quiet the machine was, what the theoretical figures
// assumed, what was skipped and, with --compare, the change since the last
// run.
func Table(w io.Writer, r *bench.Run, st *report.Style) error {
	h := r.Host
	cpus, mem := "logical CPUs unknown", "memory unknown"
	if h.LogicalCPUs > 0 {
		cpus = fmt.Sprintf("%d logical CPUs", h.LogicalCPUs)
	}
	if h.MemoryTotalMB > 0 {
		mem = units.FromMiB(h.MemoryTotalMB).Short() + " memory"
	}
	model := h.CPUModel
	if model == "" {
		model = "CPU model unknown"
	}
	fmt.Fprintf(w, "%s %s, %s, %s; %d thread%s; %s\n",
		st.Label("Host:"), report.Clean(model), cpus, mem, r.Threads, benchPlural(r.Threads), h.OS+"/"+h.Arch)
	if c := r.Conditions; c != nil {
		fmt.Fprintf(w, "%s %s\n", st.Label("Machine:"), benchConditions(c, st))
	}
	fmt.Fprintln(w)
	compare := r.Compare != nil
	var measured, links []bench.Result
	for _, res := range r.Results {
		if res.Source == bench.SourceComputed {
			links = append(links, res)
		} else {
			measured = append(measured, res)
		}
	}
	unjudged := commonUnjudged(r.Results)
	if len(measured) > 0 {
		// THEORETICAL and EFFICIENCY only when some figure has one: a
		// column of dashes says nothing the notes below do not say once.
		// --compare shows the change instead and leaves them and METHOD to
		// the plain table and -o json, so that it fits a terminal.
		theory := false
		for _, res := range measured {
			theory = theory || (res.Theoretical != nil && !compare)
		}
		header := []string{"SUITE", "TEST", "THREADS", "MEASURED"}
		if theory {
			header = append(header, "THEORETICAL", "EFFICIENCY")
		}
		if compare {
			header = append(header, "PREVIOUS", "CHANGE")
		} else {
			header = append(header, "METHOD")
		}
		rows := make([][]string, 0, len(measured))
		for _, res := range measured {
			row := []string{res.Suite, res.Name, strconv.Itoa(res.Threads), benchFigure(res.Value, res.Unit)}
			if theory {
				eff, theo := "-", "-"
				if res.Efficiency != nil {
					eff = fmt.Sprintf("%.0f%%", *res.Efficiency*100)
				}
				if res.Theoretical != nil {
					theo = benchFigure(*res.Theoretical, res.Unit)
				}
				row = append(row, theo, eff)
			}
			if compare {
				row = append(row, benchChange(res, unjudged, st)...)
			} else {
				row = append(row, benchMethod(res))
			}
			rows = append(rows, row)
		}
		if err := report.RenderTable(w, header, rows); err != nil {
			return err
		}
	}
	if len(links) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Label("Links")+" (computed from the PCIe generation and width each device reports, not measured by a transfer):")
		header := []string{"DEVICE", "LINK", "COMPUTED", "AT MAXIMUM", "FLAG"}
		if compare {
			header = append(header, "PREVIOUS", "CHANGE")
		}
		rows := make([][]string, 0, len(links))
		for _, res := range links {
			m := res.Method
			atMax := "-"
			if res.Theoretical != nil {
				atMax = benchFigure(*res.Theoretical, res.Unit)
			}
			row := []string{m.Device, "gen" + benchInt(m.GenCurrent) + " x" + benchInt(m.WidthCurrent) + " of gen" + benchInt(m.GenMax) + " x" + benchInt(m.WidthMax),
				benchFigure(res.Value, res.Unit), atMax, st.Warn(strings.ToUpper(res.Flag))}
			if compare {
				row = append(row, benchChange(res, unjudged, st)...)
			}
			rows = append(rows, row)
		}
		if err := report.RenderTable(w, header, rows); err != nil {
			return err
		}
	}
	for _, n := range benchNotes(r) {
		fmt.Fprintln(w, st.Dim(n))
	}
	for _, s := range r.Skipped {
		what := s.Suite
		if s.Name != "" {
			what += " " + s.Name
		}
		fmt.Fprintf(w, "%s %s: %s\n", st.Warn("skipped"), what, s.Reason)
	}
	if compare {
		c := r.Compare
		if len(c.Previous) == 0 {
			fmt.Fprintln(w, "No previous run of these suites on this host to compare with.")
		} else {
			suites := make([]string, 0, len(c.Previous))
			for s := range c.Previous {
				suites = append(suites, s)
			}
			sort.Strings(suites)
			parts := make([]string, len(suites))
			for i, s := range suites {
				parts[i] = s + " " + c.Previous[s].Local().Format(time.DateTime)
			}
			fmt.Fprintf(w, "Compared with the previous run on this host (%s).\n", strings.Join(parts, ", "))
			if unjudged != "" {
				fmt.Fprintf(w, "Changes not judged: %s.\n", unjudged)
			}
			if c.Regressions > 0 {
				fmt.Fprintln(w, st.Fail(fmt.Sprintf("%d figure%s fell by more than %.0f%% plus the measured noise.", c.Regressions, benchPlural(c.Regressions), c.Threshold*100)))
			}
		}
	}
	return nil
}

// benchConditions is one line on how quiet the machine was.
func benchConditions(c *bench.Conditions, st *report.Style) string {
	var parts []string
	if c.OtherCPUPercent != nil {
		parts = append(parts, fmt.Sprintf("other processes %.0f%% of CPU time", *c.OtherCPUPercent))
	}
	if c.StealPercent != nil {
		parts = append(parts, fmt.Sprintf("steal %.1f%%", *c.StealPercent))
	}
	if c.LoadBefore != nil && c.LoadAfter != nil {
		parts = append(parts, fmt.Sprintf("load average %.2f before, %.2f after", *c.LoadBefore, *c.LoadAfter))
	}
	if len(parts) == 0 {
		parts = append(parts, "load unknown (no /proc/stat)")
	}
	line := strings.Join(parts, ", ")
	if c.Busy {
		line += "; " + st.Warn("BUSY: "+strings.Join(c.Reasons, "; ")+": figures are low and not judged")
	} else {
		line += "; quiet"
	}
	return line
}

// commonUnjudged is the reason no change was judged, when every compared
// figure shares it (a busy machine): said once under the table, not in
// every row.
func commonUnjudged(rs []bench.Result) string {
	reason := ""
	for _, res := range rs {
		c := res.Change
		if c == nil {
			continue
		}
		if c.Unjudged == "" || (reason != "" && c.Unjudged != reason) {
			return ""
		}
		reason = c.Unjudged
	}
	return reason
}

// benchChange is the PREVIOUS and CHANGE cells of --compare; a reason
// every row shares (common) is left to the line under the table.
func benchChange(res bench.Result, common string, st *report.Style) []string {
	c := res.Change
	if c == nil {
		return []string{"-", "-"}
	}
	change := fmt.Sprintf("%+.1f%%", c.Percent)
	switch {
	case c.Regressed:
		change = st.Fail(fmt.Sprintf("%s REGRESSED (noise %.1f%%)", change, c.NoisePercent))
	case c.Unjudged != "" && c.Unjudged == common:
		change += " (not judged)"
	case c.Unjudged != "":
		change += " (not judged: " + c.Unjudged + ")"
	case c.Percent < 0 && c.NoisePercent > 0:
		change += fmt.Sprintf(" (noise %.1f%%)", c.NoisePercent)
	}
	return []string{benchFigure(c.Previous, res.Unit), change}
}

func benchMethod(res bench.Result) string {
	m := res.Method
	parts := []string{m.ISA}
	if res.Suite == bench.SuiteMemory {
		parts = append(parts, fmt.Sprintf("3 x %s", units.Bytes(m.ArrayBytes).Short()))
	}
	trials := fmt.Sprintf("best of %d", m.Trials)
	if m.SpreadPercent != nil {
		trials += fmt.Sprintf(", spread %.1f%%", *m.SpreadPercent)
	}
	if m.Settled != nil && !*m.Settled {
		trials += " (unsettled)"
	}
	return strings.Join(append(parts, trials), ", ")
}

// benchNotes states what the figures assumed, once per distinct
// assumption: the CPU frequency note once for every kernel, with the
// clock each single-core figure implies.
func benchNotes(r *bench.Run) []string {
	var notes []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			notes = append(notes, s)
		}
	}
	var cpuNote string
	var implied []string
	for _, res := range r.Results {
		m := res.Method
		switch {
		case res.Suite == bench.SuiteCPU && m.FrequencyMHz != nil:
			add(fmt.Sprintf("%s peak: %.0f MHz (%s) x %g ops/cycle/core x cores; %s.", res.Name, *m.FrequencyMHz, m.FrequencySource, m.OpsPerCycle, m.PeakNote))
		case res.Suite == bench.SuiteCPU:
			if cpuNote == "" {
				cpuNote = m.Note
			}
			if m.OpsPerCycle > 0 && m.ImpliedMHz != nil && res.Threads == 1 {
				implied = append(implied, fmt.Sprintf("%s %.0f MHz", res.Name, *m.ImpliedMHz))
			}
		case res.Suite == bench.SuiteMemory:
			stores := ""
			switch m.Stores {
			case "non-temporal":
				stores = "; non-temporal stores, as the arrays exceed the last-level cache"
			case "write-allocate":
				stores = "; ordinary stores, as the arrays fit in the last-level cache"
			}
			add("memory: GB/s = 10^9 bytes/s counted as STREAM does (copy/scale 2 words, add/triad 3 words per element)" + stores + "; " + m.Note + ".")
		case res.Suite == bench.SuiteLink:
			add("link: " + m.Note + ".")
		}
	}
	if cpuNote != "" {
		n := "cpu: " + cpuNote
		if len(implied) > 0 {
			n += "; at the peak table's ops/cycle the single-core figures imply " + strings.Join(implied, ", ")
		}
		notes = append([]string{n + "."}, notes...)
	}
	return notes
}

func benchFigure(v float64, unit string) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

func benchInt(p *int) string {
	if p == nil {
		return "?"
	}
	return strconv.Itoa(*p)
}

func benchPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
