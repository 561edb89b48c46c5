package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func run(fp string, at int, suite string, vals map[string]float64) Run {
	r := Run{Time: time.Unix(int64(at), 0).UTC(), Host: HostIdentity{Fingerprint: fp}, Suites: []string{suite}}
	for name, v := range vals {
		r.Results = append(r.Results, Result{Suite: suite, Name: name, Threads: 1, Value: v})
	}
	return r
}

func TestCompareMarksFallsOverTenPercentAgainstTheSameHostsLastRun(t *testing.T) {
	history := []Run{
		run("h1", 1, "memory", map[string]float64{"copy": 10}),
		run("h1", 2, "memory", map[string]float64{"copy": 20, "triad": 20}),
		run("h2", 3, "memory", map[string]float64{"copy": 100, "triad": 100}), // another host
		run("h1", 4, "cpu", map[string]float64{"fma_fp32": 50}),               // another suite
	}
	cur := run("h1", 5, "memory", map[string]float64{"copy": 19, "triad": 17.9})
	cur.Results = append(cur.Results, Result{Suite: "memory", Name: "add", Threads: 1, Value: 5})
	c := Compare(&cur, history, RegressionThreshold)
	if c.Regressions != 1 || !c.Previous["memory"].Equal(time.Unix(2, 0).UTC()) {
		t.Fatalf("comparison %+v", c)
	}
	got := map[string]*Change{}
	for _, r := range cur.Results {
		got[r.Name] = r.Change
	}
	want := map[string]*Change{
		"copy":  {Previous: 20, Percent: -5, Regressed: false},
		"triad": {Previous: 20, Percent: -10.5, Regressed: true},
		"add":   nil,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestCompareCallsARegressionOnlyBeyondTheMeasuredNoiseOnAQuietMachine(t *testing.T) {
	withSpread := func(r Run, spread float64) Run {
		for i := range r.Results {
			r.Results[i].Method.SpreadPercent = &spread
		}
		return r
	}
	quiet, busy := &Conditions{}, &Conditions{Busy: true, Reasons: []string{"other processes used 60% of the CPUs while bench ran"}}
	tests := []struct {
		name          string
		prev, cur     Run
		prevC, curC   *Conditions
		wantRegressed bool
		wantUnjudged  string
		wantNoise     float64
	}{
		{
			name:  "a 15% fall within 10% plus the two runs' 3% and 4% spreads is noise",
			prev:  withSpread(run("h", 1, "cpu", map[string]float64{"fma_fp32": 100}), 3),
			cur:   withSpread(run("h", 2, "cpu", map[string]float64{"fma_fp32": 85}), 4),
			prevC: quiet, curC: quiet, wantNoise: 7,
		},
		{
			name:  "a 25% fall beyond 10% plus 7% of noise is a regression",
			prev:  withSpread(run("h", 1, "cpu", map[string]float64{"fma_fp32": 100}), 3),
			cur:   withSpread(run("h", 2, "cpu", map[string]float64{"fma_fp32": 75}), 4),
			prevC: quiet, curC: quiet, wantNoise: 7, wantRegressed: true,
		},
		{
			name:  "a fall of 227 to 75 GFLOPS on a busy machine is not judged",
			prev:  run("h", 1, "cpu", map[string]float64{"fma_fp32": 227}),
			cur:   run("h", 2, "cpu", map[string]float64{"fma_fp32": 75}),
			prevC: quiet, curC: busy, wantUnjudged: "this run's machine was busy",
		},
		{
			name:  "a previous run on a busy machine is no baseline",
			prev:  run("h", 1, "cpu", map[string]float64{"fma_fp32": 227}),
			cur:   run("h", 2, "cpu", map[string]float64{"fma_fp32": 75}),
			prevC: busy, curC: quiet, wantUnjudged: "the previous run's machine was busy",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.prev.Conditions, tc.cur.Conditions = tc.prevC, tc.curC
			c := Compare(&tc.cur, []Run{tc.prev}, RegressionThreshold)
			ch := tc.cur.Results[0].Change
			if ch == nil || ch.Regressed != tc.wantRegressed || ch.Unjudged != tc.wantUnjudged || ch.NoisePercent != tc.wantNoise {
				t.Fatalf("change %+v, want regressed %v unjudged %q noise %v", ch, tc.wantRegressed, tc.wantUnjudged, tc.wantNoise)
			}
			if want := map[bool]int{true: 1}[tc.wantRegressed]; c.Regressions != want {
				t.Errorf("regressions %d, want %d", c.Regressions, want)
			}
		})
	}
}

func TestCompareNeverJudgesAComputedLinkFigure(t *testing.T) {
	prev := Run{Host: HostIdentity{Fingerprint: "h"}, Suites: []string{SuiteLink}, Results: []Result{{Suite: SuiteLink, Name: "pcie", Value: 31.5, Source: SourceComputed}}}
	cur := prev
	cur.Results = []Result{{Suite: SuiteLink, Name: "pcie", Value: 3.9, Source: SourceComputed}}
	c := Compare(&cur, []Run{prev}, RegressionThreshold)
	if c.Regressions != 0 || cur.Results[0].Change == nil || cur.Results[0].Change.Unjudged == "" {
		t.Errorf("computed link judged: %+v %+v", c, cur.Results[0].Change)
	}
}

func TestCompareWithoutHistoryFindsNothing(t *testing.T) {
	cur := run("h1", 5, "cpu", map[string]float64{"fma_fp32": 1})
	if c := Compare(&cur, nil, RegressionThreshold); len(c.Previous) != 0 || c.Regressions != 0 {
		t.Errorf("comparison %+v", c)
	}
}

func TestHistoryRoundTripDropsTheComparison(t *testing.T) {
	path := filepath.Join(t.TempDir(), "devctl", HistoryFile)
	r := run("h1", 1, "cpu", map[string]float64{"fma_fp32": 3})
	r.Compare = &Comparison{Regressions: 1}
	r.Results[0].Change = &Change{Previous: 4}
	if err := AppendHistory(path, &r); err != nil {
		t.Fatal(err)
	}
	if r.Compare == nil || r.Results[0].Change == nil {
		t.Fatal("AppendHistory changed the caller's run")
	}
	got, err := LoadHistory(path)
	if err != nil || len(got) != 1 || got[0].Compare != nil || got[0].Results[0].Change != nil || got[0].Results[0].Value != 3 {
		t.Fatalf("history %+v, %v", got, err)
	}
}

func TestHistoryInAnUnwritableDirectoryFails(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	r := run("h1", 1, "cpu", nil)
	if err := AppendHistory(filepath.Join(dir, "devctl", HistoryFile), &r); err == nil {
		t.Error("no error")
	}
}

func TestIdentityIsStableAndSecretFree(t *testing.T) {
	m := Machine{OS: "linux", Arch: "amd64", ModelName: "AMD EPYC", LogicalCPUs: 2, MemTotalBytes: 24 << 30}
	a, b := Identity(m), Identity(m)
	if a != b || len(a.Fingerprint) != 16 {
		t.Fatalf("%+v %+v", a, b)
	}
	m.LogicalCPUs = 4
	if Identity(m).Fingerprint == a.Fingerprint {
		t.Error("different CPU count, same fingerprint")
	}
}
