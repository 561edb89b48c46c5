package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/report"
)

func TestBenchTableLabelsLinksComputedAndStatesTheFrequencyOnce(t *testing.T) {
	note := "maximum CPU frequency unknown (no cpufreq): no theoretical figure"
	cpu := func(name string, threads int, v float64) bench.Result {
		return bench.Result{Suite: bench.SuiteCPU, Name: name, Threads: threads, Value: v, Unit: bench.UnitGFLOPS, Source: bench.SourceMeasured,
			Method: bench.Method{ISA: "avx512f", Trials: 5, SpreadPercent: probe.Ptr(0.4), Settled: probe.Ptr(true), Note: note, OpsPerCycle: 32, ImpliedMHz: probe.Ptr(3600.0)}}
	}
	gen, width, genMax, widthMax := 4, 8, 4, 16
	r := &bench.Run{
		Host:    bench.HostIdentity{CPUModel: "AMD EPYC", LogicalCPUs: 2, MemoryTotalMB: 1024, OS: "linux", Arch: "amd64"},
		Threads: 2,
		Results: []bench.Result{
			cpu("fma_fp32", 1, 117), cpu("fma_fp32", 2, 234), cpu("fma_fp64", 1, 58.6), cpu("fma_fp64", 2, 117),
			{Suite: bench.SuiteLink, Name: "pcie", Value: 15.75, Unit: bench.UnitGBs, Source: bench.SourceComputed, Theoretical: probe.Ptr(31.5),
				Flag:   "below maximum: gen4 x8 of gen4 x16",
				Method: bench.Method{Device: "cuda:0", GenCurrent: &gen, WidthCurrent: &width, GenMax: &genMax, WidthMax: &widthMax, Note: "an idle GPU may lower its link generation"}},
		},
		Conditions: &bench.Conditions{OtherCPUPercent: probe.Ptr(58.0), StealPercent: probe.Ptr(0.0), Busy: true,
			Reasons: []string{"other processes used 58% of the CPUs while bench ran"}},
	}
	var b bytes.Buffer
	if err := Table(&b, r, report.NewStyle(&b, false)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "maximum CPU frequency unknown"); n != 1 {
		t.Errorf("frequency note printed %d times, want once:\n%s", n, out)
	}
	main, links, ok := strings.Cut(out, "Links")
	if !ok {
		t.Fatalf("no Links section:\n%s", out)
	}
	if strings.Contains(main, "cuda:0") || strings.Contains(main, "15.8") {
		t.Errorf("the computed link figure sits in the measured table:\n%s", out)
	}
	for _, want := range []string{"computed from the PCIe generation and width", "COMPUTED", "gen4 x8 of gen4 x16", "15.8 GB/s", "31.5 GB/s", "BELOW MAXIMUM"} {
		if !strings.Contains(links, want) {
			t.Errorf("links section lacks %q:\n%s", want, links)
		}
	}
	for _, want := range []string{"Machine: other processes 58% of CPU time", "BUSY", "spread 0.4%", "fma_fp32 3600 MHz, fma_fp64 3600 MHz"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// Without a theoretical figure anywhere the two empty columns are left out
// (the note says why once), and --compare fits about 100 columns: the
// change instead of THEORETICAL, EFFICIENCY and METHOD (the plain table and
// -o json keep them), and a "not judged" reason every row shares said once.
func TestBenchTableDropsEmptyColumnsAndFitsCompare(t *testing.T) {
	busy := "this run's machine was busy"
	res := func(name string, threads int, v float64, theo *float64) bench.Result {
		return bench.Result{Suite: bench.SuiteCPU, Name: name, Threads: threads, Value: v, Unit: bench.UnitGFLOPS, Source: bench.SourceMeasured,
			Theoretical: theo, Method: bench.Method{ISA: "avx512_bf16", Trials: 14, SpreadPercent: probe.Ptr(36.2), Settled: probe.Ptr(false),
				Note: "maximum CPU frequency unknown (no cpufreq): no theoretical figure"},
			Change: &bench.Change{Previous: v * 1.1, Percent: -9.1, NoisePercent: 36.2, Unjudged: busy}}
	}
	render := func(r *bench.Run) string {
		var b bytes.Buffer
		if err := Table(&b, r, report.NewStyle(&b, false)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	host := bench.HostIdentity{CPUModel: "Intel(R) Xeon(R) Processor", LogicalCPUs: 2, MemoryTotalMB: 24105, OS: "linux", Arch: "amd64"}
	plain := render(&bench.Run{Host: host, Threads: 2, Results: []bench.Result{res("dot_bf16", 1, 85.2, nil), res("dot_bf16", 2, 121, nil)}})
	if strings.Contains(plain, "THEORETICAL") || strings.Contains(plain, "EFFICIENCY") || !strings.Contains(plain, "METHOD") {
		t.Errorf("columns without any theoretical figure:\n%s", plain)
	}
	if n := strings.Count(plain, "no theoretical figure"); n != 1 {
		t.Errorf("the reason is said %d times, want once:\n%s", n, plain)
	}

	peak := 1331.2
	compared := &bench.Run{Host: host, Threads: 2, Results: []bench.Result{res("dot_bf16", 1, 85.2, &peak), res("dot_bf16", 2, 121, &peak)},
		Compare: &bench.Comparison{Previous: map[string]time.Time{"cpu": time.Unix(0, 0)}}}
	out := render(compared)
	for _, line := range strings.Split(out, "\n") {
		if (strings.HasPrefix(line, "|") || strings.HasPrefix(line, "+")) && len(line) > 100 {
			t.Errorf("a --compare table line is %d columns:\n%s", len(line), out)
			break
		}
	}
	if strings.Contains(out, "METHOD") || strings.Contains(out, "THEORETICAL") || strings.Count(out, busy) != 1 || !strings.Contains(out, "-9.1% (not judged)") {
		t.Errorf("--compare table:\n%s", out)
	}
}
