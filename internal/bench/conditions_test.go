package bench

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A /proc/stat from this development VM (2 vCPUs, Linux 6.18) and one from
// a kernel without the guest columns; /proc/self/stat with a command name
// holding spaces and parentheses.
const (
	procStatVM = `cpu  2255 34 2290 22625563 6290 127 456 181 0 0
cpu0 1132 34 1441 11311247 3128 64 148 90 0 0
cpu1 1123 0 849 11314316 3162 63 308 91 0 0
intr 114927 0 9 0 0 0
ctxt 1990473
btime 1062191376
`
	procStatOld = "cpu  1 2 3 4\n"
	selfStat    = "4242 (devctl (x) y) R 1 4242 4242 0 -1 4194560 1209 0 0 0 173 52 0 0 20 0 3 0 100 1000 100 18446744073709551615\n"
)

func TestParseProcStat(t *testing.T) {
	got, err := ParseProcStat([]byte(procStatVM))
	want := CPUTimes{User: 2255, Nice: 34, System: 2290, Idle: 22625563, IOWait: 6290, IRQ: 127, SoftIRQ: 456, Steal: 181}
	if err != nil || got != want {
		t.Fatalf("ParseProcStat = %+v, %v; want %+v", got, err, want)
	}
	if got, err := ParseProcStat([]byte(procStatOld)); err != nil || got.Busy() != 6 || got.Idle != 4 {
		t.Errorf("old kernel: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "intr 1 2\n", "cpu  x 2 3 4\n"} {
		if _, err := ParseProcStat([]byte(bad)); err == nil {
			t.Errorf("ParseProcStat(%q) accepted", bad)
		}
	}
}

func TestParseSelfStatCountsFieldsAfterTheLastParenthesis(t *testing.T) {
	if got, err := ParseSelfStat([]byte(selfStat)); err != nil || got != 173+52 {
		t.Fatalf("ParseSelfStat = %d, %v; want 225", got, err)
	}
	for _, bad := range []string{"", "1 (x) R 1", "1 (x) R 1 2 3 4 5 6 7 8 9 10 u s"} {
		if _, err := ParseSelfStat([]byte(bad)); err == nil {
			t.Errorf("ParseSelfStat(%q) accepted", bad)
		}
	}
}

func TestParseLoadAvg(t *testing.T) {
	if v, err := ParseLoadAvg([]byte("1.14 1.00 0.56 2/94 23739\n")); err != nil || v != 1.14 {
		t.Errorf("ParseLoadAvg = %v, %v", v, err)
	}
	for _, bad := range []string{"", "-1 0 0", "NaN 1 1", "x"} {
		if _, err := ParseLoadAvg([]byte(bad)); err == nil {
			t.Errorf("ParseLoadAvg(%q) accepted", bad)
		}
	}
}

func TestJudgeConditions(t *testing.T) {
	at := func(sec int, busy, idle, steal uint64, self time.Duration) LoadSample {
		return LoadSample{Time: time.Unix(int64(sec), 0), Load1: 0.5, OK: true, Self: self,
			CPU: CPUTimes{User: busy, Idle: idle, Steal: steal}}
	}
	tests := []struct {
		name          string
		before, after LoadSample
		want          Conditions
	}{
		{
			name:   "bench alone on 2 CPUs for 10 s: its own 20 s of CPU are not other load",
			before: at(0, 1000, 5000, 0, 0), after: at(10, 3000, 5000, 0, 20*time.Second),
			want: Conditions{LoadBefore: p(0.5), LoadAfter: p(0.5), OtherCPUPercent: p(0.0), StealPercent: p(0.0)},
		},
		{
			name:   "another process took a CPU for the whole run",
			before: at(0, 1000, 5000, 0, 0), after: at(10, 3000, 5000, 0, 10*time.Second),
			want: Conditions{LoadBefore: p(0.5), LoadAfter: p(0.5), OtherCPUPercent: p(50.0), StealPercent: p(0.0), Busy: true,
				Reasons: []string{"other processes used 50% of the CPUs while bench ran"}},
		},
		{
			name:   "the hypervisor stole a fifth of the time",
			before: at(0, 0, 0, 0, 0), after: at(10, 1600, 0, 400, 16*time.Second),
			want: Conditions{LoadBefore: p(0.5), LoadAfter: p(0.5), OtherCPUPercent: p(0.0), StealPercent: p(20.0), Busy: true,
				Reasons: []string{"the hypervisor gave 20% of CPU time to other guests (steal)"}},
		},
		{
			name:   "no /proc/stat (macOS): nothing judged",
			before: LoadSample{Load1: -1}, after: LoadSample{Load1: -1},
			want: Conditions{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, JudgeConditions(tc.before, tc.after, 2)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func p(v float64) *float64 { return &v }

func TestSampleLoadReadsThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	s := SampleLoad(os.ReadFile, time.Now())
	if !s.OK || s.CPU.Total() == 0 {
		t.Fatalf("sample %+v", s)
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte(procStatVM))
	f.Add([]byte(procStatOld))
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := ParseProcStat(b); err == nil && c.Total() < c.Busy() {
			t.Fatalf("total %d below busy %d", c.Total(), c.Busy())
		}
	})
}

func FuzzParseSelfStat(f *testing.F) {
	f.Add([]byte(selfStat))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseSelfStat(b) })
}
