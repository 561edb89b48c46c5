package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devctl/devctl/internal/units"

	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/explain/i18n"
	"github.com/devctl/devctl/internal/history"
)

// doctorLabels are the doctor table's headings and labels, in the same
// kind of catalogue as the findings they frame (a title each): "status.<s>"
// heads a status group, "log.<key>" labels a part of a log explanation.
var doctorLabels = sync.OnceValue(func() *i18n.Catalog {
	return i18n.New().MustAdd(i18n.English,
		i18n.Message{ID: "status.fail", Title: "Failed"},
		i18n.Message{ID: "status.error", Title: "Checks that broke"},
		i18n.Message{ID: "status.timeout", Title: "Checks that timed out"},
		i18n.Message{ID: "status.warn", Title: "Warnings"},
		i18n.Message{ID: "status.pass", Title: "Passed"},
		i18n.Message{ID: "status.skip", Title: "Skipped (not applicable)"},
		i18n.Message{ID: "fix", Title: "fix:"},
		i18n.Message{ID: "summary", Title: "Summary:"},
		i18n.Message{ID: "log.title", Title: "Log"},
		i18n.Message{ID: "log.category", Title: "Category:"},
		i18n.Message{ID: "log.device", Title: "Device:"},
		i18n.Message{ID: "log.evidence", Title: "Evidence:"},
		i18n.Message{ID: "log.numbers", Title: "Numbers:"},
		i18n.Message{ID: "log.machine", Title: "This machine:"},
		i18n.Message{ID: "log.fixes", Title: "Fixes, in order:"},
		i18n.Message{ID: "log.plan", Title: "First plan that fits:"},
		i18n.Message{ID: "log.noplan", Title: "No plan fits; closest:"},
		i18n.Message{ID: "history.empty", Title: "No history recorded yet (`devctl doctor --log` and `devctl doctor --record-success` record it)."},
	).MustAdd(i18n.Polish,
		i18n.Message{ID: "status.fail", Title: "Błędy"},
		i18n.Message{ID: "status.error", Title: "Sprawdzenia, które zawiodły"},
		i18n.Message{ID: "status.timeout", Title: "Sprawdzenia przerwane po czasie"},
		i18n.Message{ID: "status.warn", Title: "Ostrzeżenia"},
		i18n.Message{ID: "status.pass", Title: "Zaliczone"},
		i18n.Message{ID: "status.skip", Title: "Pominięte (nie dotyczy)"},
		i18n.Message{ID: "fix", Title: "naprawa:"},
		i18n.Message{ID: "summary", Title: "Podsumowanie:"},
		i18n.Message{ID: "log.title", Title: "Log"},
		i18n.Message{ID: "log.category", Title: "Kategoria:"},
		i18n.Message{ID: "log.device", Title: "Urządzenie:"},
		i18n.Message{ID: "log.evidence", Title: "Dowód:"},
		i18n.Message{ID: "log.numbers", Title: "Liczby:"},
		i18n.Message{ID: "log.machine", Title: "Ta maszyna:"},
		i18n.Message{ID: "log.fixes", Title: "Naprawy, po kolei:"},
		i18n.Message{ID: "log.plan", Title: "Pierwszy plan, który się mieści:"},
		i18n.Message{ID: "log.noplan", Title: "Żaden plan się nie mieści; najbliższy:"},
		i18n.Message{ID: "history.empty", Title: "Brak zapisanej historii (zapisują ją `devctl doctor --log` i `devctl doctor --record-success`)."},
	)
})

// label is a doctor label in lang (English when it has no translation).
func label(id string, lang doctor.Lang) string {
	m, _ := doctorLabels().Lookup(id, string(lang))
	return m.Title
}

func (st *Style) status(s doctor.Status) string {
	t := strings.ToUpper(string(s))
	switch s {
	case doctor.Pass:
		return st.OK(t)
	case doctor.Warn:
		return st.Warn(t)
	case doctor.Skip:
		return st.Dim(t)
	}
	return st.Fail(t)
}

// DoctorTable renders doctor's report grouped by status, most urgent first:
// each finding with its detail and, when something is wrong, the fix.
func DoctorTable(w io.Writer, r *doctor.Report, st *Style) error {
	if r.Log != nil {
		if err := doctorLog(w, r.Log, r.Lang, st); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, st.Title("devctl doctor"))
	for _, s := range doctor.StatusOrder {
		var group []doctor.Result
		for _, c := range r.Checks {
			if c.Status == s {
				group = append(group, c)
			}
		}
		if len(group) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d)\n", st.Title(label("status."+string(s), r.Lang)), len(group))
		for _, c := range group {
			fmt.Fprintf(w, "  %-7s %s  %s\n", st.status(c.Status), c.ID, st.Dim(c.Title))
			fmt.Fprintf(w, "          %s\n", clean(c.Detail))
			if c.Fix != "" {
				fmt.Fprintf(w, "          %s %s\n", st.Label(label("fix", r.Lang)), clean(c.Fix))
			}
		}
	}
	fmt.Fprintln(w)
	var parts []string
	for _, s := range doctor.StatusOrder {
		if n := r.Summary[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	fmt.Fprintf(w, "%s %s\n", st.Label(label("summary", r.Lang)), strings.Join(parts, ", "))
	return nil
}

func doctorLog(w io.Writer, l *doctor.LogReport, lang doctor.Lang, st *Style) error {
	lb := func(k string) string { return label("log."+k, lang) }
	fmt.Fprintf(w, "%s %s\n", st.Title(lb("title")+":"), clean(l.Title))
	fmt.Fprintf(w, "%s %s\n", st.Label(fmt.Sprintf("%-16s", lb("category"))), clean(l.Category))
	fmt.Fprintf(w, "%s %s\n", st.Label(fmt.Sprintf("%-16s", lb("device"))), clean(l.Device))
	if len(l.Evidence) > 0 {
		fmt.Fprintln(w, st.Label(lb("evidence")))
		for i, ev := range l.Evidence {
			prefix := "  > "
			if i == 0 && l.Line > 0 {
				prefix = fmt.Sprintf("  %d> ", l.Line)
			}
			fmt.Fprintln(w, prefix+clean(ev))
		}
	}
	if nums := numberList(l); nums != "" {
		fmt.Fprintf(w, "%s %s\n", st.Label(lb("numbers")), clean(nums))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, clean(l.Explanation))
	if len(l.Machine) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Label(lb("machine")))
		for _, m := range l.Machine {
			fmt.Fprintln(w, "  - "+clean(m))
		}
	}
	if p := l.OOMPlan; p != nil {
		fmt.Fprintln(w)
		k := "plan"
		if !p.Fits {
			k = "noplan"
		}
		fmt.Fprintf(w, "%s %s params on %s: mode %s, precision %s, micro-batch %d of %d, recompute %s, sharding %s, offload %s: %s of %s\n",
			st.Label(lb(k)), params(p.ModelParams), p.Device, p.Plan.Mode, p.Plan.Precision, max(p.Plan.MicroBatch, 1), max(p.Plan.BatchSize, 1),
			p.Plan.Recompute, p.Plan.Sharding, p.Plan.Offload, units.Bytes(p.Memory.TotalBytes).Short(), units.Bytes(p.BudgetBytes).Short())
		for _, c := range p.Changes {
			fmt.Fprintln(w, "  - "+clean(c))
		}
	}
	if len(l.Fixes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Label(lb("fixes")))
		for i, f := range l.Fixes {
			fmt.Fprintf(w, "  %d. %s\n", i+1, clean(f))
		}
	}
	fmt.Fprintln(w)
	return nil
}

// params prints a parameter count the way model cards do (7B, 350M).
func params(n int64) string {
	switch {
	case n >= 1e12:
		return strconv.FormatFloat(float64(n)/1e12, 'g', 3, 64) + "T"
	case n >= 1e9:
		return strconv.FormatFloat(float64(n)/1e9, 'g', 3, 64) + "B"
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'g', 3, 64) + "M"
	}
	return strconv.FormatInt(n, 10)
}

func numberList(l *doctor.LogReport) string {
	n := l.Numbers
	var out []string
	b := func(k string, p *int64) {
		if p != nil {
			out = append(out, k+" "+units.Bytes(*p).Short())
		}
	}
	b("requested", n.RequestedBytes)
	b("total", n.TotalBytes)
	b("free", n.FreeBytes)
	b("reserved", n.ReservedBytes)
	b("allocated", n.AllocatedBytes)
	b("other", n.OtherBytes)
	if n.DeviceIndex != nil {
		out = append(out, "device index "+strconv.Itoa(*n.DeviceIndex))
	}
	s := func(k string, p *string) {
		if p != nil {
			out = append(out, k+" "+*p)
		}
	}
	s("driver", n.DriverVersion)
	s("driver CUDA", n.DriverCUDAVersion)
	s("runtime", n.RuntimeVersion)
	if n.ErrorCode != nil {
		out = append(out, "error code "+strconv.Itoa(*n.ErrorCode))
	}
	s("operator", n.Operator)
	s("dtype", n.DType)
	if len(n.Devices) > 0 {
		out = append(out, "devices "+strings.Join(n.Devices, ", "))
	}
	return strings.Join(out, ", ")
}

// DoctorList renders `doctor --list`.
func DoctorList(w io.Writer, checks []doctor.CheckInfo) error {
	rows := make([][]string, len(checks))
	for i, c := range checks {
		rows[i] = []string{c.ID, c.Title}
	}
	return RenderTable(w, []string{"ID", "TITLE"}, rows)
}

// DoctorHistory renders `doctor --history`: each device's record.
func DoctorHistory(w io.Writer, sums []history.DeviceSummary, lang doctor.Lang) error {
	if len(sums) == 0 {
		fmt.Fprintln(w, label("history.empty", lang))
		return nil
	}
	rows := make([][]string, len(sums))
	for i, s := range sums {
		rate := "-"
		if s.Runs > 0 {
			rate = strconv.Itoa(100*s.Successes/s.Runs) + "%"
		}
		last := ""
		if !s.LastTime.IsZero() {
			last = s.LastTime.UTC().Format(time.RFC3339)
		}
		rows[i] = []string{s.Device, strconv.Itoa(s.Runs), strconv.Itoa(s.Successes), strconv.Itoa(s.Failures), rate, categories(s.Categories), s.LastCategory, last}
	}
	return RenderTable(w, []string{"DEVICE", "RUNS", "OK", "FAILED", "SUCCESS", "FAILURES BY CATEGORY", "LAST FAILURE", "LAST SEEN"}, rows)
}

func categories(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
