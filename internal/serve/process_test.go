package serve

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/proc/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    procStat
		wantErr bool
	}{
		{"devctl-serve after 2,000 scrapes", readFixture(t, "devctl-serve.stat"),
			procStat{utime: 370, stime: 131, starttime: 143919, vsize: 1837096960, rss: 5838}, false},
		{"a command name with spaces and parentheses", readFixture(t, "parens.stat"),
			procStat{starttime: 143283, vsize: 2990080, rss: 412}, false},
		{"an empty file", nil, procStat{}, true},
		{"no closing parenthesis", []byte("1 (init S 0 1 1"), procStat{}, true},
		{"too few fields", []byte("1 (init) S 0 1 1 0 -1"), procStat{}, true},
		{"a field that is not a number", []byte(strings.Replace(string(readFixture(t, "devctl-serve.stat")), " 370 ", " x ", 1)), procStat{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcStat(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(procStat{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	got, err := parseLimits(readFixture(t, "devctl-serve.limits"), "Max open files", "Max address space", "Max processes", "Max nice priority")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"Max open files": 20000, "Max address space": math.Inf(1), "Max processes": 96364, "Max nice priority": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseLimits([]byte("Max open files            lots   lots   files\n"), "Max open files"); err == nil {
		t.Error("a soft limit that is not a number must fail")
	}
}

func TestParseBootTime(t *testing.T) {
	if got, err := parseBootTime(readFixture(t, "proc-stat-btime")); err != nil || got != 1795629096 {
		t.Errorf("parseBootTime = %d, %v", got, err)
	}
	if _, err := parseBootTime([]byte("cpu  1 2 3\n")); err == nil {
		t.Error("no btime line must fail")
	}
}

// TestProcessMetricsMatchClientGolang computes the process_* families from
// the /proc files of a devctl-serve process and compares them with what
// client_golang's process collector answered for that process at the same
// moment (testdata/proc/README.md); only process_open_fds, a directory
// count, and the network counters devctl leaves out are not compared.
func TestProcessMetricsMatchClientGolang(t *testing.T) {
	p := procFactsFrom(readFixture(t, "devctl-serve.stat"), readFixture(t, "devctl-serve.limits"), 1795629096, 4096)
	p.openFDs = 11
	got := flatten(parseText(t, appendText(nil, p.families())))
	var want []series
	for _, s := range flatten(parseText(t, readFixture(t, "devctl-serve.prom"))) {
		if !strings.HasPrefix(s.Family, "process_network_") {
			s.Help = ""
			want = append(want, s)
		}
	}
	for i := range got {
		got[i].Help = "" // devctl's own words
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("process_* (-client_golang +devctl):\n%s", diff)
	}
}

func TestUnreadableProcLeavesFamiliesOut(t *testing.T) {
	p := procFactsFrom(nil, nil, math.NaN(), 4096)
	if fams := p.families(); len(fams) != 0 {
		t.Errorf("%d families from nothing", len(fams))
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add(readFixture(f, "devctl-serve.stat"))
	f.Add(readFixture(f, "parens.stat"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseProcStat(b) })
}

func FuzzParseLimits(f *testing.F) {
	f.Add(readFixture(f, "devctl-serve.limits"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseLimits(b, "Max open files", "Max address space") })
}
