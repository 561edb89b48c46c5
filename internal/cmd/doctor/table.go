package doctor

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/units"

	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/explain/i18n"
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
		i18n.Message{ID: "skip.folded", Title: "{n} checks skipped (not applicable here); -v to list them"},
		i18n.Message{ID: "skip.folded_one", Title: "1 check skipped (not applicable here); -v to list it"},
		i18n.Message{ID: "fix", Title: "fix:"},
		i18n.Message{ID: "summary", Title: "Summary:"},
		i18n.Message{ID: "log.title", Title: "Log"},
		i18n.Message{ID: "log.category", Title: "Category:"},
		i18n.Message{ID: "log.device", Title: "Device:"},
		i18n.Message{ID: "log.decided", Title: "Decided by:"},
		i18n.Message{ID: "log.decided.line", Title: "{by}, confidence {confidence}"},
		i18n.Message{ID: "log.evidence", Title: "Evidence:"},
		i18n.Message{ID: "log.numbers", Title: "Numbers:"},
		i18n.Message{ID: "log.machine", Title: "This machine:"},
		i18n.Message{ID: "log.fixes", Title: "Fixes, in order:"},
		i18n.Message{ID: "log.plan", Title: "First plan that fits:"},
		i18n.Message{ID: "log.noplan", Title: "No plan fits; closest:"},
		i18n.Message{ID: "list.id", Title: "ID"},
		i18n.Message{ID: "list.title", Title: "TITLE"},
		i18n.Message{ID: "record.success", Title: "recorded a successful run on {device}"},
		i18n.Message{ID: "word.pass", Title: "{n} pass"},
		i18n.Message{ID: "word.warn", Title: "{n} warn"},
		i18n.Message{ID: "word.fail", Title: "{n} fail"},
		i18n.Message{ID: "word.skip", Title: "{n} skip"},
		i18n.Message{ID: "word.error", Title: "{n} error"},
		i18n.Message{ID: "word.timeout", Title: "{n} timeout"},
		i18n.Message{ID: "mark.pass", Title: "PASS"},
		i18n.Message{ID: "mark.warn", Title: "WARN"},
		i18n.Message{ID: "mark.fail", Title: "FAIL"},
		i18n.Message{ID: "mark.skip", Title: "SKIP"},
		i18n.Message{ID: "mark.error", Title: "ERROR"},
		i18n.Message{ID: "mark.timeout", Title: "TIMEOUT"},
		i18n.Message{ID: "num.requested", Title: "requested"},
		i18n.Message{ID: "num.total", Title: "total"},
		i18n.Message{ID: "num.free", Title: "free"},
		i18n.Message{ID: "num.reserved", Title: "reserved"},
		i18n.Message{ID: "num.allocated", Title: "allocated"},
		i18n.Message{ID: "num.other", Title: "other"},
		i18n.Message{ID: "num.device_index", Title: "device index"},
		i18n.Message{ID: "num.driver", Title: "driver"},
		i18n.Message{ID: "num.driver_cuda", Title: "driver CUDA"},
		i18n.Message{ID: "num.runtime", Title: "runtime"},
		i18n.Message{ID: "num.error_code", Title: "error code"},
		i18n.Message{ID: "num.operator", Title: "operator"},
		i18n.Message{ID: "num.dtype", Title: "dtype"},
		i18n.Message{ID: "num.devices", Title: "devices"},
		i18n.Message{ID: "plan.line", Title: "{params} params on {device}: mode {mode}, precision {precision}, micro-batch {micro} of {batch}, recompute {recompute}, sharding {sharding}, offload {offload}: {need} of {budget}"},
		i18n.Message{ID: "selftest.title", Title: "Self-test"},
		i18n.Message{ID: "selftest.python", Title: "python:"},
		i18n.Message{ID: "selftest.limits", Title: "limits:"},
		i18n.Message{ID: "selftest.group", Title: "own process group, time"},
		i18n.Message{ID: "selftest.nomem", Title: "no memory limit"},
		i18n.Message{ID: "selftest.error", Title: "error:"},
	).MustAdd(i18n.Polish,
		i18n.Message{ID: "status.fail", Title: "Błędy"},
		i18n.Message{ID: "status.error", Title: "Sprawdzenia, które zawiodły"},
		i18n.Message{ID: "status.timeout", Title: "Sprawdzenia przerwane po czasie"},
		i18n.Message{ID: "status.warn", Title: "Ostrzeżenia"},
		i18n.Message{ID: "status.pass", Title: "Zaliczone"},
		i18n.Message{ID: "status.skip", Title: "Pominięte (nie dotyczy)"},
		i18n.Message{ID: "skip.folded", Title: "Pominięte (nie dotyczą tej maszyny): {n}; -v je wypisze"},
		i18n.Message{ID: "skip.folded_one", Title: "Pominięte (nie dotyczą tej maszyny): 1; -v je wypisze"},
		i18n.Message{ID: "fix", Title: "naprawa:"},
		i18n.Message{ID: "summary", Title: "Podsumowanie:"},
		i18n.Message{ID: "log.title", Title: "Log"},
		i18n.Message{ID: "log.category", Title: "Kategoria:"},
		i18n.Message{ID: "log.device", Title: "Urządzenie:"},
		i18n.Message{ID: "log.decided", Title: "Rozpoznał:"},
		i18n.Message{ID: "log.decided.line", Title: "{by}, pewność {confidence}"},
		i18n.Message{ID: "log.evidence", Title: "Dowód:"},
		i18n.Message{ID: "log.numbers", Title: "Liczby:"},
		i18n.Message{ID: "log.machine", Title: "Ta maszyna:"},
		i18n.Message{ID: "log.fixes", Title: "Naprawy, po kolei:"},
		i18n.Message{ID: "log.plan", Title: "Pierwszy plan, który się mieści:"},
		i18n.Message{ID: "log.noplan", Title: "Żaden plan się nie mieści; najbliższy:"},
		i18n.Message{ID: "list.id", Title: "ID"},
		i18n.Message{ID: "list.title", Title: "TYTUŁ"},
		i18n.Message{ID: "record.success", Title: "zapisano udane uruchomienie na {device}"},
		i18n.Message{ID: "word.pass", Title: "zaliczone: {n}"},
		i18n.Message{ID: "word.warn", Title: "ostrzeżenia: {n}"},
		i18n.Message{ID: "word.fail", Title: "błędy: {n}"},
		i18n.Message{ID: "word.skip", Title: "pominięte: {n}"},
		i18n.Message{ID: "word.error", Title: "zepsute: {n}"},
		i18n.Message{ID: "word.timeout", Title: "przerwane po czasie: {n}"},
		i18n.Message{ID: "mark.pass", Title: "DOBRZE"},
		i18n.Message{ID: "mark.warn", Title: "UWAGA"},
		i18n.Message{ID: "mark.fail", Title: "BŁĄD"},
		i18n.Message{ID: "mark.skip", Title: "POMINIĘTO"},
		i18n.Message{ID: "mark.error", Title: "AWARIA"},
		i18n.Message{ID: "mark.timeout", Title: "LIMIT CZASU"},
		i18n.Message{ID: "num.requested", Title: "żądano"},
		i18n.Message{ID: "num.total", Title: "łącznie"},
		i18n.Message{ID: "num.free", Title: "wolne"},
		i18n.Message{ID: "num.reserved", Title: "zarezerwowane"},
		i18n.Message{ID: "num.allocated", Title: "przydzielone"},
		i18n.Message{ID: "num.other", Title: "inne"},
		i18n.Message{ID: "num.device_index", Title: "numer urządzenia"},
		i18n.Message{ID: "num.driver", Title: "sterownik"},
		i18n.Message{ID: "num.driver_cuda", Title: "CUDA sterownika"},
		i18n.Message{ID: "num.runtime", Title: "środowisko"},
		i18n.Message{ID: "num.error_code", Title: "kod błędu"},
		i18n.Message{ID: "num.operator", Title: "operator"},
		i18n.Message{ID: "num.dtype", Title: "typ danych"},
		i18n.Message{ID: "num.devices", Title: "urządzenia"},
		i18n.Message{ID: "plan.line", Title: "{params} parametrów na {device}: tryb {mode}, precyzja {precision}, mikrobatch {micro} z {batch}, ponowne liczenie {recompute}, podział {sharding}, odciążenie {offload}: {need} z {budget}"},
		i18n.Message{ID: "selftest.title", Title: "Test na urządzeniu"},
		i18n.Message{ID: "selftest.python", Title: "python:"},
		i18n.Message{ID: "selftest.limits", Title: "limity:"},
		i18n.Message{ID: "selftest.group", Title: "własna grupa procesów, czas"},
		i18n.Message{ID: "selftest.nomem", Title: "bez limitu pamięci"},
		i18n.Message{ID: "selftest.error", Title: "błąd:"},
	)
})

// label is a doctor label in lang (English when it has no translation).
func label(id string, lang doctor.Lang) string {
	m, _ := doctorLabels().Lookup(id, string(lang))
	return m.Title
}

func status(st *report.Style, s doctor.Status, lang doctor.Lang) string {
	t := label("mark."+string(s), lang)
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

// TableOptions change how much Table shows.
type TableOptions struct {
	// FoldSkips prints the skipped checks as one line with their count
	// instead of one entry each.
	FoldSkips bool
}

// Table renders doctor's report grouped by status, most urgent first:
// each finding with its detail and, when something is wrong, the fix.
func Table(w io.Writer, r *doctor.Report, st *report.Style) error {
	return TableWith(w, r, st, TableOptions{})
}

// TableWith is Table with options.
func TableWith(w io.Writer, r *doctor.Report, st *report.Style, o TableOptions) error {
	if r.Log != nil {
		if err := doctorLog(w, r.Log, r.Lang, st); err != nil {
			return err
		}
		if len(r.Checks) == 0 {
			return nil // the explanation alone: no checks were asked for
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
		if s == doctor.Skip && o.FoldSkips {
			id := "skip.folded"
			if len(group) == 1 {
				id = "skip.folded_one"
			}
			fmt.Fprintf(w, "\n%s\n", st.Dim(i18n.Render(label(id, r.Lang), map[string]string{"n": strconv.Itoa(len(group))})))
			continue
		}
		fmt.Fprintf(w, "\n%s (%d)\n", st.Title(label("status."+string(s), r.Lang)), len(group))
		for _, c := range group {
			fmt.Fprintf(w, "  %-7s %s  %s\n", status(st, c.Status, r.Lang), c.ID, st.Dim(c.Title))
			fmt.Fprintf(w, "          %s\n", report.Clean(c.Detail))
			if c.Fix != "" {
				fmt.Fprintf(w, "          %s %s\n", st.Label(label("fix", r.Lang)), report.Clean(c.Fix))
			}
		}
	}
	fmt.Fprintln(w)
	var parts []string
	for _, s := range doctor.StatusOrder {
		if n := r.Summary[s]; n > 0 {
			parts = append(parts, i18n.Render(label("word."+string(s), r.Lang), map[string]string{"n": strconv.Itoa(n)}))
		}
	}
	fmt.Fprintf(w, "%s %s\n", st.Label(label("summary", r.Lang)), strings.Join(parts, ", "))
	if r.Selftest != nil {
		return selftestTable(w, r.Selftest, r.Lang, st)
	}
	return nil
}

func doctorLog(w io.Writer, l *doctor.LogReport, lang doctor.Lang, st *report.Style) error {
	lb := func(k string) string { return label("log."+k, lang) }
	fmt.Fprintf(w, "%s %s\n", st.Title(lb("title")+":"), report.Clean(l.Title))
	fmt.Fprintf(w, "%s %s\n", st.Label(fmt.Sprintf("%-16s", lb("category"))), report.Clean(l.Category))
	fmt.Fprintf(w, "%s %s\n", st.Label(fmt.Sprintf("%-16s", lb("device"))), report.Clean(l.Device))
	if l.DecidedBy != "" {
		by := i18n.Render(lb("decided.line"), map[string]string{"by": l.DecidedBy, "confidence": strconv.FormatFloat(l.Confidence, 'f', 2, 64)})
		fmt.Fprintf(w, "%s %s\n", st.Label(fmt.Sprintf("%-16s", lb("decided"))), report.Clean(by))
	}
	if len(l.Evidence) > 0 {
		fmt.Fprintln(w, st.Label(lb("evidence")))
		for i, ev := range l.Evidence {
			prefix := "  > "
			if i == 0 && l.Line > 0 {
				prefix = fmt.Sprintf("  %d> ", l.Line)
			}
			fmt.Fprintln(w, prefix+report.Clean(ev))
		}
	}
	if nums := numberList(l, lang); nums != "" {
		fmt.Fprintf(w, "%s %s\n", st.Label(lb("numbers")), report.Clean(nums))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, report.Clean(l.Explanation))
	if len(l.Machine) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Label(lb("machine")))
		for _, m := range l.Machine {
			fmt.Fprintln(w, "  - "+report.Clean(m))
		}
	}
	if p := l.OOMPlan; p != nil {
		fmt.Fprintln(w)
		k := "plan"
		if !p.Fits {
			k = "noplan"
		}
		line := i18n.Render(label("plan.line", lang), map[string]string{
			"params": params(p.ModelParams), "device": p.Device, "mode": string(p.Plan.Mode), "precision": string(p.Plan.Precision),
			"micro": strconv.Itoa(max(p.Plan.MicroBatch, 1)), "batch": strconv.Itoa(max(p.Plan.BatchSize, 1)),
			"recompute": fmt.Sprint(p.Plan.Recompute), "sharding": fmt.Sprint(p.Plan.Sharding), "offload": fmt.Sprint(p.Plan.Offload),
			"need": units.Bytes(p.Memory.TotalBytes).Short(), "budget": units.Bytes(p.BudgetBytes).Short()})
		fmt.Fprintf(w, "%s %s\n", st.Label(lb(k)), report.Clean(line))
		for _, c := range p.Changes {
			fmt.Fprintln(w, "  - "+report.Clean(c))
		}
	}
	if len(l.Fixes) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Label(lb("fixes")))
		for i, f := range l.Fixes {
			fmt.Fprintf(w, "  %d. %s\n", i+1, report.Clean(f))
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

func numberList(l *doctor.LogReport, lang doctor.Lang) string {
	n := l.Numbers
	var out []string
	nl := func(k string) string { return label("num."+k, lang) }
	b := func(k string, p *int64) {
		if p != nil {
			out = append(out, nl(k)+" "+units.Bytes(*p).Short())
		}
	}
	b("requested", n.RequestedBytes)
	b("total", n.TotalBytes)
	b("free", n.FreeBytes)
	b("reserved", n.ReservedBytes)
	b("allocated", n.AllocatedBytes)
	b("other", n.OtherBytes)
	if n.DeviceIndex != nil {
		out = append(out, nl("device_index")+" "+strconv.Itoa(*n.DeviceIndex))
	}
	s := func(k string, p *string) {
		if p != nil {
			out = append(out, nl(k)+" "+*p)
		}
	}
	s("driver", n.DriverVersion)
	s("driver_cuda", n.DriverCUDAVersion)
	s("runtime", n.RuntimeVersion)
	if n.ErrorCode != nil {
		out = append(out, nl("error_code")+" "+strconv.Itoa(*n.ErrorCode))
	}
	s("operator", n.Operator)
	s("dtype", n.DType)
	if len(n.Devices) > 0 {
		out = append(out, nl("devices")+" "+strings.Join(n.Devices, ", "))
	}
	return strings.Join(out, ", ")
}

// ListTable renders `doctor --list` with headers in lang.
func ListTable(w io.Writer, checks []doctor.CheckInfo, lang doctor.Lang) error {
	rows := make([][]string, len(checks))
	for i, c := range checks {
		rows[i] = []string{c.ID, c.Title}
	}
	return report.RenderTable(w, []string{label("list.id", lang), label("list.title", lang)}, rows)
}

// recordedSuccess is the line `doctor --record-success` prints, in lang.
func recordedSuccess(device string, lang doctor.Lang) string {
	return i18n.Render(label("record.success", lang), map[string]string{"device": device})
}
