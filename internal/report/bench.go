package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/bench"
)

// BenchTable renders a bench run: one row per figure, measured beside
// theoretical and efficiency, then what the theoretical figures assumed,
// what was skipped and, with --compare, the change since the last run.
func BenchTable(w io.Writer, r *bench.Run, st *Style) error {
	h := r.Host
	fmt.Fprintf(w, "%s %s, %d logical CPUs, %s memory; %d thread%s; %s\n",
		st.Label("Host:"), clean(benchOrDash(h.CPUModel)), h.LogicalCPUs, FormatMiB(h.MemoryTotalMB), r.Threads, benchPlural(r.Threads), h.OS+"/"+h.Arch)
	fmt.Fprintln(w)
	compare := r.Compare != nil
	header := []string{"SUITE", "TEST", "THREADS", "MEASURED", "THEORETICAL", "EFFICIENCY", "METHOD"}
	if compare {
		header = append(header, "PREVIOUS", "CHANGE")
	}
	rows := make([][]string, 0, len(r.Results))
	for _, res := range r.Results {
		name, threads := res.Name, strconv.Itoa(res.Threads)
		if res.Suite == bench.SuiteLink {
			name, threads = res.Name+" "+res.Method.Device, "-"
		}
		eff := "-"
		if res.Efficiency != nil {
			eff = fmt.Sprintf("%.0f%%", *res.Efficiency*100)
		}
		theo := "-"
		if res.Theoretical != nil {
			theo = benchFigure(*res.Theoretical, res.Unit)
		}
		row := []string{res.Suite, name, threads, benchFigure(res.Value, res.Unit), theo, eff, benchMethod(res)}
		if res.Flag != "" {
			row[6] += " " + st.Warn(strings.ToUpper(res.Flag))
		}
		if compare {
			prev, change := "-", "-"
			if c := res.Change; c != nil {
				prev = benchFigure(c.Previous, res.Unit)
				change = fmt.Sprintf("%+.1f%%", c.Percent)
				if c.Regressed {
					change = st.Fail(change + " REGRESSED")
				}
			}
			row = append(row, prev, change)
		}
		rows = append(rows, row)
	}
	if len(rows) > 0 {
		if err := RenderTable(w, header, rows); err != nil {
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
			if c.Regressions > 0 {
				fmt.Fprintln(w, st.Fail(fmt.Sprintf("%d figure%s fell by more than %.0f%%.", c.Regressions, benchPlural(c.Regressions), c.Threshold*100)))
			}
		}
	}
	return nil
}

func benchMethod(res bench.Result) string {
	m := res.Method
	var parts []string
	switch res.Suite {
	case bench.SuiteLink:
		parts = append(parts, "gen"+benchInt(m.GenCurrent)+" x"+benchInt(m.WidthCurrent)+" of gen"+benchInt(m.GenMax)+" x"+benchInt(m.WidthMax))
	case bench.SuiteMemory:
		parts = append(parts, m.ISA, fmt.Sprintf("3 x %s", FormatMiB(m.ArrayBytes>>20)), fmt.Sprintf("best of %d", m.Trials))
	default:
		parts = append(parts, m.ISA, fmt.Sprintf("best of %d", m.Trials))
	}
	return strings.Join(parts, ", ")
}

// benchNotes states what the theoretical CPU figures assumed, once per
// distinct assumption.
func benchNotes(r *bench.Run) []string {
	var notes []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			notes = append(notes, s)
		}
	}
	for _, res := range r.Results {
		m := res.Method
		switch {
		case res.Suite == bench.SuiteCPU && m.FrequencyMHz != nil:
			add(fmt.Sprintf("%s peak: %.0f MHz (%s) x %g ops/cycle/core x cores; %s.", res.Name, *m.FrequencyMHz, m.FrequencySource, m.OpsPerCycle, m.PeakNote))
		case res.Suite == bench.SuiteCPU && seen[res.Name]:
		case res.Suite == bench.SuiteCPU:
			seen[res.Name] = true
			n := res.Name + ": " + m.Note
			if m.OpsPerCycle > 0 && m.ImpliedMHz != nil && res.Threads == 1 {
				n += fmt.Sprintf("; at %g ops/cycle/core the single-core figure implies %.0f MHz", m.OpsPerCycle, *m.ImpliedMHz)
			}
			add(n + ".")
		case res.Suite == bench.SuiteMemory:
			add("memory: GB/s = 10^9 bytes/s counted as STREAM does (copy/scale 2 words, add/triad 3 words per element); " + m.Note + ".")
		case res.Suite == bench.SuiteLink:
			add("link: " + m.Note + ".")
		}
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

func benchOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func benchPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
