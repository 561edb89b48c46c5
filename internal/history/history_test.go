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
		{V: SchemaVersion, Time: t0, Device: "mps", Category: "mps_unsupported_op", Outcome: Failure},
		{V: SchemaVersion, Time: t0.Add(time.Minute), Device: "mps", Outcome: Success},
		{V: SchemaVersion, Time: t0.Add(2 * time.Minute), Device: "cuda", Category: "out_of_memory", Outcome: Failure},
		{V: SchemaVersion, Time: t0.Add(3 * time.Minute), Device: "cuda", Category: "unknown", Outcome: Unrelated},
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

func TestLoadRecentReadsTheNewestRecords(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all Records
	for i := 0; i < 600; i++ {
		r := Record{V: SchemaVersion, Time: t0.Add(time.Duration(i) * time.Minute), Device: "cuda", Outcome: Success, Run: fmt.Sprintf("run%04d", i), Attempt: 1, DurationMS: 1000}
		switch i % 3 {
		case 0:
			r.Outcome, r.Category = Failure, "out_of_memory"
		case 1:
			r.Outcome, r.Category, r.MessageID = Failure, "other", "other.gpu_lost"
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
