package history

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func env(dir string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "XDG_STATE_HOME" {
			return dir, true
		}
		return "", false
	}
}

func TestAppendAndLoad(t *testing.T) {
	dir := t.TempDir()
	lookup := env(dir)
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	in := []Record{
		{Time: t0, Device: "mps", Category: "mps_unsupported_op", Outcome: Failure},
		{Time: t0.Add(time.Minute), Device: "MPS", Outcome: Success},
		{Time: t0.Add(2 * time.Minute), Device: "cuda:1", Category: "out_of_memory", Outcome: Failure},
		{Time: t0.Add(3 * time.Minute), Device: "cuda", Category: "unknown", Outcome: Unrelated},
	}
	for _, r := range in {
		if err := Append(lookup, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Load(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := Records{
		{Time: t0, Device: "mps", Category: "mps_unsupported_op", Outcome: Failure},
		{Time: t0.Add(time.Minute), Device: "mps", Outcome: Success},
		{Time: t0.Add(2 * time.Minute), Device: "cuda", Category: "out_of_memory", Outcome: Failure},
		{Time: t0.Add(3 * time.Minute), Device: "cuda", Category: "unknown", Outcome: Unrelated},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Load (-want +got):\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "devctl", FileName)); err != nil {
		t.Errorf("history file not where documented: %v", err)
	}
}

func TestLoadMissingFileIsEmpty(t *testing.T) {
	got, err := Load(env(t.TempDir()))
	if err != nil || len(got) != 0 {
		t.Fatalf("Load on a fresh state dir = %v, %v; want empty, nil", got, err)
	}
}

func TestLoadSkipsDamagedLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	data := `{"time":"2025-01-01T00:00:00Z","device":"mps","category":"out_of_memory","outcome":"failure"}
not json
{"time":"2025-01-01T00:00:00Z","device":"","outcome":"failure"}
{"time":"2025-01-01T00:00:00Z","device":"mps","outcome":"maybe"}
`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("LoadFile kept %d records, want 1: %+v", len(got), got)
	}
}

func TestAppendRefusesBadRecords(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	for name, r := range map[string]Record{
		"a record without a device is refused": {Outcome: Failure},
		"an unknown outcome is refused":        {Device: "cpu", Outcome: "meh"},
	} {
		if err := AppendFile(p, r); err == nil {
			t.Errorf("%s: AppendFile(%+v) succeeded", name, r)
		}
	}
}

func TestSummary(t *testing.T) {
	rs := Records{
		{Device: "mps", Outcome: Failure, Category: "mps_unsupported_op"},
		{Device: "mps", Outcome: Success},
		{Device: "mps", Outcome: Failure, Category: "out_of_memory"},
		{Device: "mps", Outcome: Unrelated, Category: "unknown"},
		{Device: "cuda", Outcome: Success},
	}
	tests := []struct {
		name, device   string
		runs, failures int
		lastCategory   string
	}{
		{"failures and successes count as runs, unrelated logs do not", "mps", 3, 2, "out_of_memory"},
		{"a device id is reduced to its backend", "cuda:0", 1, 0, ""},
		{"a device never seen has no runs", "xla", 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, failures, last := rs.Summary(tt.device)
			if runs != tt.runs || failures != tt.failures || last != tt.lastCategory {
				t.Errorf("Summary(%q) = %d, %d, %q; want %d, %d, %q", tt.device, runs, failures, last, tt.runs, tt.failures, tt.lastCategory)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	f := Record{Device: "mps", Outcome: Failure, Category: "mps_unsupported_op"}
	o := Record{Device: "mps", Outcome: Failure, Category: "out_of_memory"}
	s := Record{Device: "mps", Outcome: Success}
	u := Record{Device: "mps", Outcome: Unrelated, Category: "unknown"}
	i := Record{Device: "mps", Outcome: Interrupted}
	c := Record{Device: "cpu", Outcome: Failure, Category: "out_of_memory"}
	att := func(r Record, run string, n int) Record { r.Run, r.Attempt = run, n; return r }
	tests := []struct {
		name string
		rs   Records
		want Verdict
	}{
		{"a device with no record is not judged", nil, Verdict{Device: "mps"}},
		{"four successes in the last five runs (0.8) is kept", Records{f, f, s, s, f, s, s}, Verdict{Device: "mps", Runs: 5, Successes: 4, Rate: 0.8, TopCategory: "mps_unsupported_op"}},
		{"three successes in the last five runs (0.6) is passed over", Records{s, s, s, f, s, o, s}, Verdict{Device: "mps", Runs: 5, Successes: 3, Rate: 0.6, PassOver: true, TopCategory: "mps_unsupported_op"}},
		{"only the last five runs count", Records{f, f, f, f, s, s, s, s, s}, Verdict{Device: "mps", Runs: 5, Successes: 5, Rate: 1}},
		{"one failed run out of one is below 0.8", Records{o}, Verdict{Device: "mps", Runs: 1, Rate: 0, PassOver: true, TopCategory: "out_of_memory"}},
		{"unrelated and interrupted runs and other devices do not count", Records{s, u, i, c, s}, Verdict{Device: "mps", Runs: 2, Successes: 2, Rate: 1}},
		{"a run that recovered after an OOM counts once, as a success", Records{s, s, att(o, "r1", 1), att(o, "r1", 2), att(s, "r1", 3)}, Verdict{Device: "mps", Runs: 3, Successes: 3, Rate: 1}},
		{"a run whose last attempt on the device failed counts once, as a failure", Records{s, s, s, att(s, "r2", 1), att(o, "r3", 1), att(o, "r3", 2)}, Verdict{Device: "mps", Runs: 5, Successes: 4, Rate: 0.8, TopCategory: "out_of_memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.rs.Judge("mps")); d != "" {
				t.Errorf("Judge (-want +got):\n%s", d)
			}
		})
	}
}

func TestPassOverNamesEveryFailingDevice(t *testing.T) {
	rs := Records{
		{Device: "cuda", Outcome: Failure, Category: "out_of_memory"},
		{Device: "cpu", Outcome: Success},
		{Device: "mps", Outcome: Success},
		{Device: "mps", Outcome: Failure, Category: "mps_unsupported_op"},
	}
	got := rs.PassOver()
	want := map[string]string{
		"cuda": "cuda: 0 of its last 1 recorded runs succeeded (0%, below 80%), most often out_of_memory; see devctl history",
		"mps":  "mps: 1 of its last 2 recorded runs succeeded (50%, below 80%), most often mps_unsupported_op; see devctl history",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PassOver (-want +got):\n%s", d)
	}
}

func TestClear(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	if err := Clear(p); err != nil {
		t.Errorf("clearing a missing history: %v", err)
	}
	if err := AppendFile(p, Record{Device: "cpu", Outcome: Success}); err != nil {
		t.Fatal(err)
	}
	if err := Clear(p); err != nil {
		t.Fatal(err)
	}
	if rs, err := LoadFile(p); err != nil || len(rs) != 0 {
		t.Errorf("after Clear: %v, %v; want empty", rs, err)
	}
}

func TestSummaries(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rs := Records{
		{Time: t0, Device: "mps", Outcome: Failure, Category: "out_of_memory"},
		{Time: t0.Add(time.Hour), Device: "cpu", Outcome: Success},
		{Time: t0.Add(2 * time.Hour), Device: "mps", Outcome: Unrelated, Category: "unknown"},
	}
	want := []DeviceSummary{
		{Device: "cpu", Runs: 1, Successes: 1, LastTime: t0.Add(time.Hour)},
		{Device: "mps", Runs: 1, Failures: 1, Unrelated: 1, LastCategory: "out_of_memory", LastTime: t0.Add(2 * time.Hour), Categories: map[string]int{"out_of_memory": 1}},
	}
	if d := cmp.Diff(want, rs.Summaries()); d != "" {
		t.Errorf("Summaries (-want +got):\n%s", d)
	}
}

func TestLoadRecentReadsTheNewestRecords(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all Records
	for i := 0; i < 600; i++ {
		r := Record{Time: t0.Add(time.Duration(i) * time.Minute), Device: "cuda", Outcome: Success, Run: fmt.Sprintf("run%04d", i), Attempt: 1, DurationMS: 1000}
		if i%3 == 0 {
			r.Outcome, r.Category = Failure, "out_of_memory"
		}
		all = append(all, r)
		if err := AppendFile(p, r); err != nil {
			t.Fatal(err)
		}
	}
	// A damaged line near the end is skipped, the rest kept.
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{not json\\n")
	f.Close()
	got, err := LoadRecentFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 100 || len(got) >= len(all) {
		t.Fatalf("LoadRecent kept %d of %d records, want the newest few hundred", len(got), len(all))
	}
	if d := cmp.Diff(all[len(all)-len(got):], got); d != "" {
		t.Errorf("LoadRecent is not the newest records (-want +got):\\n%s", d)
	}
	if d := cmp.Diff(all.Judge("cuda"), got.Judge("cuda")); d != "" {
		t.Errorf("the rule differs on the recent records (-whole +recent):\\n%s", d)
	}
	if rs, err := LoadRecentFile(filepath.Join(t.TempDir(), "none")); err != nil || len(rs) != 0 {
		t.Errorf("a missing file: %v, %v", rs, err)
	}
	if _, err := LoadRecentFile(t.TempDir()); err == nil {
		t.Errorf("a directory was read as a history")
	}
}
