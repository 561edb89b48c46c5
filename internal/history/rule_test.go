package history

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/explain/i18n"
)

// Every message id the rule names is one the classifier can give: a
// renamed id would silently stop counting.
func TestScopesNameRealMessageIDs(t *testing.T) {
	ids := explain.NewCatalog().IDs(i18n.English)
	for id := range scopes {
		if !slices.Contains(ids, id) {
			t.Errorf("scopes names %q, which is not in the classifier's catalogue", id)
		}
	}
}

func TestScopeOf(t *testing.T) {
	tests := []struct {
		name, category, messageID string
		want                      Scope
	}{
		{"out of memory never counts", "out_of_memory", "out_of_memory", ScopeNone},
		{"an MPS out of memory never counts", "out_of_memory", "out_of_memory.mps", ScopeNone},
		{"XLA RESOURCE_EXHAUSTED never counts", "xla_resource_exhausted", "", ScopeNone},
		{"a tensor on the wrong device is the program's bug", "device_mismatch", "device_mismatch", ScopeNone},
		{"mismatched dtypes are the program's bug", "dtype_mismatch", "", ScopeNone},
		{"an unrecognised log counts for nothing", "unknown", "", ScopeNone},
		{"a GPU fallen off the bus counts against the device", "other", "other.gpu_lost", ScopeDevice},
		{"an ECC Xid counts against the device", "other", "other.xid_ecc", ScopeDevice},
		{"an application Xid is the program's", "other", "other.xid_app", ScopeNone},
		{"a driver older than the runtime counts against the device", "cuda_driver_mismatch", "cuda_driver_mismatch.nvml", ScopeDevice},
		{"an unspecified launch failure counts against the device", "cuda_launch_failure", "cuda_launch_failure", ScopeDevice},
		{"an illegal memory access is the program's bug", "cuda_launch_failure", "cuda_launch_failure.illegal_access", ScopeNone},
		{"a CPU-only torch build is the environment's", "no_gpu_found", "no_gpu_found.cpu_build", ScopeNone},
		{"a TPU held by another process is busy, not unwell", "xla_tpu_init", "xla_tpu_init.busy", ScopeNone},
		{"a TPU runtime that cannot start counts against the device", "xla_tpu_init", "xla_tpu_init", ScopeDevice},
		{"an operator MPS lacks counts against the operation", "mps_unsupported_op", "mps_unsupported_op.sparse", ScopeOperation},
		{"float64 on MPS counts against the operation", "unsupported_dtype", "unsupported_dtype.mps_float64", ScopeOperation},
		{"a version 1 record without a message id is judged by its category", "mps_unsupported_op", "", ScopeOperation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ScopeOf(tt.category, tt.messageID); got != tt.want {
				t.Errorf("ScopeOf(%q, %q) = %v, want %v", tt.category, tt.messageID, got, tt.want)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	lost := Record{Device: "cuda", Outcome: Failure, Category: "other", MessageID: "other.gpu_lost"}
	oom := Record{Device: "cuda", Outcome: Failure, Category: "out_of_memory", MessageID: "out_of_memory"}
	bug := Record{Device: "cuda", Outcome: Failure, Category: "dtype_mismatch", MessageID: "dtype_mismatch"}
	ok := Record{Device: "cuda", Outcome: Success}
	u := Record{Device: "cuda", Outcome: Unrelated, Category: "unknown"}
	i := Record{Device: "cuda", Outcome: Interrupted}
	c := Record{Device: "cpu", Outcome: Failure, Category: "other", MessageID: "other.gpu_lost"}
	att := func(r Record, run string, n int) Record { r.Run, r.Attempt = run, n; return r }
	tests := []struct {
		name string
		rs   Records
		want Verdict
	}{
		{"a device with no record is not judged", nil, Verdict{Device: "cuda"}},
		{"out-of-memory failures never count, however many", Records{oom, oom, oom, oom, oom, oom},
			Verdict{Device: "cuda", NotCounted: 6}},
		{"bugs in the program never count", Records{ok, bug, bug, bug},
			Verdict{Device: "cuda", Runs: 1, Successes: 1, Rate: 1, NotCounted: 3}},
		{"out of memory among successes leaves the rate at 1", Records{ok, oom, ok, oom, ok},
			Verdict{Device: "cuda", Runs: 3, Successes: 3, Rate: 1, NotCounted: 2}},
		{"a lost GPU in one of one run is below the minimum of three runs", Records{lost},
			Verdict{Device: "cuda", Runs: 1, TopCategory: "other.gpu_lost"}},
		{"two lost GPUs in three runs pass the device over", Records{lost, ok, lost},
			Verdict{Device: "cuda", Runs: 3, Successes: 1, Rate: 1.0 / 3, PassOver: true, Scope: "device", TopCategory: "other.gpu_lost"}},
		{"four successes in the last five counted runs (0.8) is kept", Records{lost, lost, ok, ok, lost, ok, ok},
			Verdict{Device: "cuda", Runs: 5, Successes: 4, Rate: 0.8, TopCategory: "other.gpu_lost"}},
		{"three of five (0.6) is passed over", Records{ok, ok, ok, lost, ok, lost, ok},
			Verdict{Device: "cuda", Runs: 5, Successes: 3, Rate: 0.6, PassOver: true, Scope: "device", TopCategory: "other.gpu_lost"}},
		{"unrelated and interrupted runs and other devices do not count", Records{ok, u, i, c, ok},
			Verdict{Device: "cuda", Runs: 2, Successes: 2, Rate: 1}},
		{"a run that recovered after an out of memory counts once, as a success", Records{ok, ok, att(oom, "r1", 1), att(oom, "r1", 2), att(ok, "r1", 3)},
			Verdict{Device: "cuda", Runs: 3, Successes: 3, Rate: 1}},
		{"a lost GPU is not hidden by the out of memory of a later attempt", Records{ok, att(lost, "r2", 1), att(oom, "r2", 2), att(lost, "r3", 1), att(oom, "r3", 2)},
			Verdict{Device: "cuda", Runs: 3, Successes: 1, Rate: 1.0 / 3, PassOver: true, Scope: "device", TopCategory: "other.gpu_lost"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The operation window is TestJudgeForOperation's.
			ignore := cmpopts.IgnoreFields(Verdict{}, "OperationRuns", "OperationSuccesses", "OperationRate")
			if d := cmp.Diff(tt.want, tt.rs.Judge("cuda"), ignore); d != "" {
				t.Errorf("Judge (-want +got):\n%s", d)
			}
		})
	}
}

// Seed 003 keys its history by (device, operation): MPS that cannot run
// one operation is still used for the others.
func TestJudgeForOperation(t *testing.T) {
	op := func(name string, okay bool) Record {
		r := Record{Device: "mps", Operation: name, Outcome: Success, Source: SourceSelfTest}
		if !okay {
			r.Outcome, r.Category, r.MessageID = Failure, "mps_unsupported_op", "mps_unsupported_op.sparse"
		}
		return r
	}
	rs := Records{op("model_loading", true), op("sparse_mm", false), op("model_loading", true), op("sparse_mm", false), op("sparse_mm", false), op("model_loading", true)}
	sparse := rs.JudgeFor("mps", "sparse_mm")
	if !sparse.PassOver || sparse.Scope != "operation" || sparse.OperationRuns != 3 || sparse.OperationSuccesses != 0 {
		t.Errorf("sparse_mm: %+v, want passed over for the operation after 3 failures", sparse)
	}
	want := `mps: 0 of its last 3 runs of operation "sparse_mm" succeeded (0%, below 80%), most often mps_unsupported_op.sparse; see devctl history`
	if got := sparse.Reason(); got != want {
		t.Errorf("Reason:\n got %s\nwant %s", got, want)
	}
	if v := rs.JudgeFor("mps", "model_loading"); v.PassOver {
		t.Errorf("model_loading is passed over by another operation's failures: %+v", v)
	}
	if v := rs.Judge("mps"); v.PassOver || v.Runs != 3 || v.Successes != 3 {
		t.Errorf("the device's health: %+v, want 3 of 3 (operation failures are not the device's health)", v)
	}
}

func TestPassOverNamesEveryFailingDevice(t *testing.T) {
	var rs Records
	for range 3 {
		rs = append(rs, Record{Device: "cuda", Outcome: Failure, Category: "cuda_driver_mismatch"},
			Record{Device: "cpu", Outcome: Failure, Category: "out_of_memory"},
			Record{Device: "mps", Outcome: Failure, Category: "mps_unsupported_op"})
	}
	want := map[string]string{
		"cuda": "cuda: 0 of its last 3 counted runs succeeded (0%, below 80%), most often cuda_driver_mismatch; see devctl history",
		"mps":  "mps: 0 of its last 3 runs of jobs that name no operation succeeded (0%, below 80%), most often mps_unsupported_op; see devctl history",
	}
	if d := cmp.Diff(want, rs.PassOver("")); d != "" {
		t.Errorf("PassOver (-want +got):\n%s", d)
	}
	if got := rs.PassOver("train"); len(got) != 1 || got["cuda"] == "" {
		t.Errorf("PassOver(train) = %v, want only cuda (unwell for every operation)", got)
	}
}

func TestSummaries(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rs := Records{
		{Time: t0, Device: "mps", Outcome: Failure, Category: "out_of_memory"},
		{Time: t0.Add(time.Hour), Device: "cpu", Outcome: Success},
		{Time: t0.Add(2 * time.Hour), Device: "mps", Outcome: Unrelated, Category: "unknown"},
		{Time: t0.Add(3 * time.Hour), Device: "mps", Outcome: Failure, Category: "mps_unsupported_op", Operation: "fft"},
		{Time: t0.Add(4 * time.Hour), Device: "mps", Outcome: Interrupted},
	}
	want := []DeviceSummary{
		{Device: "cpu", Attempts: 1, Successes: 1, LastTime: t0.Add(time.Hour)},
		{Device: "mps", Attempts: 4, Failures: 2, OperationFaults: 1, Unrelated: 1, Interrupted: 1, LastCategory: "mps_unsupported_op",
			LastTime: t0.Add(4 * time.Hour), Categories: map[string]int{"out_of_memory": 1, "mps_unsupported_op": 1}, Operations: []string{"fft"}},
	}
	if d := cmp.Diff(want, rs.Summaries()); d != "" {
		t.Errorf("Summaries (-want +got):\n%s", d)
	}
}

func TestMachineID(t *testing.T) {
	files := map[string]string{}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	if got := MachineID(read); got != "" {
		t.Errorf("no id readable: %q, want \"\"", got)
	}
	files["/sys/class/dmi/id/product_uuid"] = "4c4c4544-0042-3510-8051-b4c04f4e4e32\n"
	dmi := MachineID(read)
	// machine-id(5): "a single newline-terminated, hexadecimal, 32-character, lowercase ID".
	raw := "b08dfa6083e7567a1921a715000001fb"
	files["/etc/machine-id"] = raw + "\n"
	id := MachineID(read)
	if len(id) != 16 || id == dmi || strings.Contains(raw, id) {
		t.Errorf("MachineID = %q (dmi %q): want 16 hex digits of a hash, /etc/machine-id first, never the raw id", id, dmi)
	}
	if again := MachineID(read); again != id {
		t.Errorf("MachineID is not stable: %q then %q", id, again)
	}
}

// Version 1 files (no "v", no machine) stay readable as this machine's;
// a shared file's records of other machines are left out.
func TestLogReadsVersion1AndKeepsToThisMachine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "devctl", FileName)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	v1 := `{"time":"2026-01-01T00:00:00Z","device":"xla","category":"xla_tpu_init","outcome":"failure"}
{"time":"2026-01-01T00:01:00Z","device":"xla","outcome":"success","run":"r1","attempt":1,"duration_ms":3}
`
	if err := os.WriteFile(p, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC) }
	mine, err := Open(env(dir), "aaaaaaaaaaaaaaaa", now)
	if err != nil {
		t.Fatal(err)
	}
	other := &Log{Path: p, Machine: "bbbbbbbbbbbbbbbb", Now: now}
	if err := mine.Append(Record{Device: "xla", Outcome: Success}); err != nil {
		t.Fatal(err)
	}
	if err := other.Append(Record{Device: "xla", Category: "xla_tpu_init", Outcome: Failure}); err != nil {
		t.Fatal(err)
	}
	rs, others, err := mine.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || others != 1 {
		t.Fatalf("Load kept %d records (%d of others): %+v; want the 2 version 1 records and this machine's, 1 other", len(rs), others, rs)
	}
	if last := rs[2]; last.V != SchemaVersion || last.Machine != "aaaaaaaaaaaaaaaa" || !last.Time.Equal(now()) {
		t.Errorf("appended record %+v: want v %d, this machine, the log's time", last, SchemaVersion)
	}
	recent, err := mine.Recent()
	if err != nil || len(recent) != 3 {
		t.Errorf("Recent = %d records, %v; want 3", len(recent), err)
	}
}

func TestAppendOperation(t *testing.T) {
	l := &Log{Path: filepath.Join(t.TempDir(), FileName), Machine: "m", Now: time.Now}
	for _, res := range []OperationResult{
		{Device: "mps:0", Operation: "matmul_bf16", OK: true, DurationMS: 12},
		{Device: "mps", Operation: "sparse_mm", Category: "mps_unsupported_op", MessageID: "mps_unsupported_op.sparse"},
		{Device: "mps", Operation: "conv3d", Category: "unknown"},
	} {
		if err := l.AppendOperation(res); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.AppendOperation(OperationResult{Device: "mps", OK: true}); !errors.Is(err, ErrNoOperation) {
		t.Errorf("a result without an operation: %v, want ErrNoOperation", err)
	}
	rs, _, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(rs))
	for i, r := range rs {
		got[i] = strings.Join([]string{r.Device, r.Operation, r.Source, r.Outcome, r.MessageID}, " ")
	}
	want := []string{"mps matmul_bf16 selftest success ", "mps sparse_mm selftest failure mps_unsupported_op.sparse", "mps conv3d selftest unrelated "}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
}

func TestPlanComparison(t *testing.T) {
	est := func(bytes int64, batch int) *devmem.Estimate {
		return &devmem.Estimate{Bytes: bytes, Params: 7_000_000_000, Mode: "training", Precision: "bf16", Batch: batch, BatchGiven: true, Devices: 1}
	}
	run := func(peak int64, e *devmem.Estimate, outcome string) Record {
		return Record{Device: "cuda", Outcome: outcome, Memory: &devmem.Measurement{PeakBytes: peak, Method: devmem.MethodNVML, Samples: 10, IntervalMS: 1000, Plan: e}}
	}
	const gib = 1 << 30
	rs := Records{
		run(9*gib, est(10*gib, 16), Success),
		run(40*gib, est(10*gib, 16), Failure), // an OOM peaks at the device, not the need
		run(18*gib, est(20*gib, 32), Success),
		{Device: "cuda", Outcome: Success, Memory: &devmem.Measurement{PeakBytes: gib, Plan: &devmem.Estimate{Bytes: gib, Params: 1, Mode: "training"}}},
	}
	got := PlanComparison(rs, "cuda:0", 7_000_000_000, "training")
	want := "on this machine, 2 measured runs of this model (training) on cuda peaked at 0.90× their plans (newest: 18.00 GiB measured, 20.00 GiB planned for batch 32, bf16)"
	if got != want {
		t.Errorf("PlanComparison:\n got %s\nwant %s", got, want)
	}
	if got := PlanComparison(rs, "cuda", 7_000_000_000, "inference"); got != "" {
		t.Errorf("another mode matched: %s", got)
	}
}
