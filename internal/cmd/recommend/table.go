package recommend

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/units"

	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/recommend"
)

// Table renders a recommendation: summary, memory breakdown,
// verdict with headroom, the fallback ladder when it ran, the reasons,
// framework hints and the environment.
func Table(w io.Writer, r *recommend.Result, st *report.Style) error {
	p := r.Plan
	fmt.Fprintln(w, st.Title("devctl recommend"))
	dev := r.Device.Name
	if r.Device.Display != "" && r.Device.Display != r.Device.Name {
		dev += " (" + r.Device.Display + ")"
	}
	if r.Device.Catalogue {
		dev += ", catalogue"
	}
	mode := fmt.Sprintf("%s, batch %d, seq %d", p.Mode, p.BatchSize, p.SeqLen)
	if p.Mode != oomsim.Inference {
		mode += fmt.Sprintf(", %s, recompute %s", p.Optimizer, p.RecomputeLabel())
	}
	if p.Devices > 1 {
		mode += fmt.Sprintf(", %d devices", p.Devices)
	}
	kv := [][2]string{
		{"Model:", fmt.Sprintf("%s (%s params, %s)", r.Model.Name, recommend.FormatParams(r.Model.Params), r.Model.Source)},
		{"Device:", dev},
		{"Mode:", mode},
		{"Precision:", string(r.Precision)},
		{"Memory Strategy:", fmt.Sprintf("%s (%s)", r.MemoryStrategy, strconv.FormatFloat(r.MemoryFraction, 'g', -1, 64))},
		{"Stack:", recStack(p)},
	}
	for _, e := range kv {
		fmt.Fprintf(w, "%s %s\n", st.Label(fmt.Sprintf("%-17s", e[0])), report.Clean(e[1]))
	}
	fmt.Fprintln(w)

	m := r.Memory
	budget := m.UsableBytes
	part := func(name string, b int64) []string {
		return []string{name, units.Bytes(b).Number(units.GiB, 2), recComma(b), bar(b, budget)}
	}
	rows := [][]string{
		part("weights", m.WeightsBytes),
		part("gradients", m.GradientsBytes),
		part("optimizer", m.OptimizerBytes),
		part("activations", m.ActivationsBytes),
		part("logits (loss)", m.LogitsBytes),
		part("kv cache", m.KVCacheBytes),
		part("buffers", m.BuffersBytes),
	}
	if m.RolloutBytes > 0 {
		rows = append(rows, part("rollout (grpo)", m.RolloutBytes))
	}
	if m.EvalBytes > 0 {
		rows = append(rows, part("evaluation", m.EvalBytes))
	}
	if m.OverlapBytes < 0 {
		rows = append(rows, []string{"not alive at once", "-" + units.Bytes(-m.OverlapBytes).Number(units.GiB, 2), "-" + recComma(-m.OverlapBytes), "freed before the next part peaks (activations before gradients, the loss before the recompute, training before evaluation or generation)"})
	}
	rows = append(rows, part("allocator", m.AllocatorBytes), part("runtime", m.OverheadBytes))
	switch {
	case m.HostBytes > 0 && m.HostInTotal:
		rows = append(rows, part("offloaded (same RAM)", m.HostBytes))
	case m.HostBytes > 0:
		rows = append(rows, []string{"host (offloaded)", units.Bytes(m.HostBytes).Number(units.GiB, 2), recComma(m.HostBytes), "in host memory, not in the total"})
	}
	rows = append(rows,
		part("total", m.TotalBytes),
		[]string{"allocatable", units.Bytes(m.UsableBytes).Number(units.GiB, 2), recComma(m.UsableBytes), bar(budget, budget)},
		[]string{fmt.Sprintf("strategy (%g)", r.MemoryFraction), units.Bytes(m.StrategyBytes).Number(units.GiB, 2), recComma(m.StrategyBytes), bar(m.StrategyBytes, budget)},
	)
	if err := report.RenderTable(w, []string{"MEMORY", "GIB", "BYTES", "OF ALLOCATABLE"}, rows); err != nil {
		return err
	}
	if b := m.Band; b.HighBytes > b.LowBytes {
		fmt.Fprintf(w, "%s %s GiB, %s-%s GiB depending on %s\n", st.Label("Estimate:"), units.Bytes(m.TotalBytes).Number(units.GiB, 2),
			units.Bytes(b.LowBytes).Number(units.GiB, 2), units.Bytes(b.HighBytes).Number(units.GiB, 2), strings.Join(b.DependsOn, " and "))
	}
	if pub := m.Published; pub != nil {
		fmt.Fprintf(w, "%s %s's model states: weights %s, gradients %s, optimizer %s GiB (%s GiB); shown beside devctl's estimate, not used for the verdict\n",
			st.Label("Convention:"), pub.Convention, units.Bytes(pub.WeightsBytes).Number(units.GiB, 2), units.Bytes(pub.GradientsBytes).Number(units.GiB, 2),
			units.Bytes(pub.OptimizerBytes).Number(units.GiB, 2), units.Bytes(pub.ModelStatesBytes).Number(units.GiB, 2))
	}
	if mx := r.Max; mx != nil {
		fmt.Fprintf(w, "%s %s %d (%s GiB)", st.Label("Max:"), mx.What, mx.Value, units.Bytes(mx.TotalBytes).Number(units.GiB, 2))
		if mx.NextTotalBytes > 0 {
			fmt.Fprintf(w, "; %d needs %s GiB", mx.Value+1, units.Bytes(mx.NextTotalBytes).Number(units.GiB, 2))
		}
		if mx.Limit != "" {
			fmt.Fprintf(w, "; bounded by %s", mx.Limit)
		}
		fmt.Fprintln(w)
	}
	per := ""
	if r.Plan.Devices > 1 {
		per = " per device"
	}
	switch {
	case r.WithinStrategy:
		fmt.Fprintf(w, "%s %s%s, headroom %s GiB, within the %s strategy (%g)\n", st.Label("Verdict:"), st.OK("FITS"), per, units.Bytes(r.HeadroomBytes).Number(units.GiB, 2), r.MemoryStrategy, r.MemoryFraction)
	case r.Fits:
		fmt.Fprintf(w, "%s %s%s, headroom %s GiB, above the %s strategy's %s GiB (%g): it runs, with little margin\n", st.Label("Verdict:"), st.OK("FITS"), per, units.Bytes(r.HeadroomBytes).Number(units.GiB, 2), r.MemoryStrategy, units.Bytes(m.StrategyBytes).Number(units.GiB, 2), r.MemoryFraction)
	case r.HeadroomBytes >= 0:
		// The device has room; the host memory for the offloaded state is short.
		fmt.Fprintf(w, "%s %s: the offloaded state needs %s GiB of host memory, the host has %s GiB\n", st.Label("Verdict:"), st.Fail("DOES NOT FIT"),
			units.Bytes(m.HostBytes).Number(units.GiB, 2), units.Bytes(r.Device.HostBytes).Number(units.GiB, 2))
	default:
		fmt.Fprintf(w, "%s %s%s, short by %s GiB\n", st.Label("Verdict:"), st.Fail("DOES NOT FIT"), per, units.Bytes(-r.HeadroomBytes).Number(units.GiB, 2))
	}
	for _, n := range m.Notes {
		fmt.Fprintf(w, "%s %s\n", st.Dim("note:"), n)
	}
	if m.OverheadSource != "" {
		fmt.Fprintf(w, "%s overhead: %s\n", st.Dim("note:"), m.OverheadSource)
	}

	if t := r.Ladder; t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Title("Fallback ladder"))
		lrows := [][]string{{"0", "start", t.Start.Change, units.Bytes(t.Start.Memory.TotalBytes).Number(units.GiB, 2), recYesNo(t.Start.Fits)}}
		for i, s := range t.Steps {
			lrows = append(lrows, []string{strconv.Itoa(i + 1), s.Action, s.Change, units.Bytes(s.Memory.TotalBytes).Number(units.GiB, 2), recYesNo(s.Fits)})
		}
		if err := report.RenderTable(w, []string{"#", "STEP", "CHANGE", "TOTAL GIB", "FITS"}, lrows); err != nil {
			return err
		}
		for _, s := range t.Skipped {
			fmt.Fprintf(w, "%s %s\n", st.Dim("skipped:"), s)
		}
		if t.Fits {
			budget, where := r.Memory.UsableBytes, ""
			if t.Final.OnCPU { // the CPU fallback is judged against host memory
				budget, where = r.Device.HostBytes, " of host memory"
			}
			fmt.Fprintf(w, "%s %s (%s GiB of %s GiB%s)\n", st.Label("Plan that fits:"), st.OK(recPlan(t.Final)), units.Bytes(t.FinalMemory.TotalBytes).Number(units.GiB, 2), units.Bytes(budget).Number(units.GiB, 2), where)
		} else {
			fmt.Fprintf(w, "%s %s\n", st.Label("Plan that fits:"), st.Fail("none on this device"))
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, st.Title("Why"))
	for _, re := range r.Reasons {
		fmt.Fprintf(w, "  %-16s %-13s %s\n", re.Decision, report.Clean(re.Choice), report.Clean(re.Why))
	}
	f := r.Framework
	fmt.Fprintln(w)
	ctx := f.InferenceContext
	if ctx == "" {
		ctx = "training (gradients on)"
	}
	fmt.Fprintf(w, "%s PyTorch device %q, JAX platform %q, %s, %s\n", st.Label("Framework:"), f.PyTorchDevice, f.JAXPlatform, f.TorchDtype, ctx)
	if f.Quantization != "" {
		fmt.Fprintf(w, "%s %s\n", st.Label("Quantization:"), f.Quantization)
	}
	for _, l := range f.Lines() {
		fmt.Fprintf(w, "%s %s\n", st.Label(l[0]), report.Clean(l[1]))
	}
	if len(r.Env) > 0 {
		fmt.Fprintln(w, st.Label("Environment:"))
		if err := exports(w, r); err != nil {
			return err
		}
	}
	return nil
}

// Env prints `export NAME=value` lines ready for eval, then the framework
// settings that are arguments, not variables, as comments.
func Env(w io.Writer, r *recommend.Result) error {
	if err := exports(w, r); err != nil {
		return err
	}
	for _, c := range r.Framework.EnvComments() {
		if _, err := fmt.Fprintln(w, c); err != nil {
			return err
		}
	}
	return nil
}

// exports prints the `export NAME=value` lines.
func exports(w io.Writer, r *recommend.Result) error {
	for _, e := range r.Env {
		if _, err := fmt.Fprintln(w, e.Export()); err != nil {
			return err
		}
	}
	return nil
}

func recPlan(p oomsim.Plan) string {
	s := fmt.Sprintf("%s %s", p.Mode, p.Precision)
	if p.Mode != oomsim.Inference {
		s += fmt.Sprintf(", %s, recompute %s", p.Optimizer, p.RecomputeLabel())
		if p.Loss == oomsim.LossFused {
			s += ", fused loss"
		}
	}
	if p.MicroBatch > 0 && p.MicroBatch < p.BatchSize {
		if p.Mode == oomsim.Inference {
			s += fmt.Sprintf(", batch %d in %d chunks of %d", p.BatchSize, p.GradAccum(), p.MicroBatch)
		} else {
			s += fmt.Sprintf(", micro-batch %d × %d accumulation", p.MicroBatch, p.GradAccum())
		}
	}
	if p.Sharding != "" && p.Sharding != oomsim.ShardNone {
		s += fmt.Sprintf(", %s over %d", p.Sharding, p.Devices)
	}
	if p.Offload == "cpu" {
		s += ", CPU offload"
	}
	if p.OnCPU {
		s += ", on the CPU"
	}
	return s
}

func recYesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// comma groups digits: 433249280 -> 433,249,280.
func recComma(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}

// barWidth is the bar drawn for the whole allocatable memory.
const barWidth = 24

// bar draws part as a share of budget: one block per 1/barWidth, a half
// block for the remainder, and an arrow when it is over the budget.
func bar(part, budget int64) string {
	if budget <= 0 || part <= 0 {
		return ""
	}
	f := float64(part) / float64(budget)
	n := int(f * barWidth * 2)
	over := n > barWidth*2
	n = min(n, barWidth*2)
	s := strings.Repeat("█", n/2)
	if n%2 == 1 {
		s += "▌"
	}
	if over {
		s += "▶"
	}
	return fmt.Sprintf("%-*s %3.0f%%", barWidth+1, s, 100*f)
}

// recStack names the stack and the choices it decided.
func recStack(p oomsim.Plan) string {
	s := string(p.Stack)
	if p.Stack == oomsim.StackAuto {
		s = "auto (transformers' defaults assumed; --stack to name yours)"
	}
	if p.StackVersion != "" {
		s += ", release " + p.StackVersion
	}
	var parts []string
	if p.Attention != "" {
		parts = append(parts, "attention "+string(p.Attention))
	}
	if p.Mode != oomsim.Inference && p.Loss != "" {
		parts = append(parts, "loss "+string(p.Loss))
	}
	if p.Mixed != "" {
		parts = append(parts, "mixed precision "+string(p.Mixed))
	}
	if len(parts) > 0 {
		s += "; " + strings.Join(parts, ", ")
	}
	return s
}
