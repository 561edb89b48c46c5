package recommend

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/probe"
)

// The self-test's history outranks the device's rules: an MPS device whose
// rules grant bf16, where the last self-test could not run a bf16 matmul,
// is planned in fp16, and the reasons say why; a later self-test that ran
// bf16 clears it. Another framework's or another backend's failures, and
// failures that are not a missing operator, change nothing.
func TestPlanPrefersWhatTheSelfTestRan(t *testing.T) {
	rep := &probe.Report{
		Host:      probe.HostInfo{MemoryTotalMB: probe.Ptr(int64(32768))},
		Summary:   probe.Summary{DefaultDevice: "mps"},
		Selection: &probe.Selection{Chosen: "mps"},
		Devices: []probe.Device{{ID: "mps", Backend: "mps", TotalMemoryMB: probe.Ptr(int64(32768)),
			SupportsFP16: true, SupportsBF16: true}},
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rec := func(dev, op, outcome, cat string, at time.Time) history.Record {
		return history.Record{V: 2, Time: at, Device: dev, Operation: op, Source: history.SourceSelfTest, Outcome: outcome, Category: cat}
	}
	plan := func(recs history.Records) *Result {
		t.Helper()
		res, err := Plan(context.Background(), Request{Model: ModelSpec{Params: "150M"}},
			Deps{Probe: func(context.Context) (*probe.Report, error) { return rep, nil },
				History: func() (history.Records, error) { return recs, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	failedBF16 := rec("mps", "torch.matmul_bf16", history.Failure, "unsupported_dtype", t0)
	if got := plan(nil).Plan.Precision; got != capability.BF16 {
		t.Fatalf("without a self-test: precision %s, want bf16", got)
	}
	res := plan(history.Records{failedBF16})
	if res.Plan.Precision != capability.FP16 {
		t.Errorf("after a failed bf16 matmul: precision %s, want fp16", res.Plan.Precision)
	}
	found := false
	for _, r := range res.Reasons {
		if r.Decision == "selftest" && strings.Contains(r.Why, "could not run a torch matmul in bf16 on mps") {
			found = true
		}
	}
	if !found {
		t.Errorf("no selftest reason in %+v", res.Reasons)
	}
	for name, recs := range map[string]history.Records{
		"a later self-test ran it": {failedBF16, rec("mps", "torch.matmul_bf16", history.Success, "", t0.Add(time.Hour))},
		"another framework":        {rec("mps", "jax.matmul_bf16", history.Failure, "unsupported_dtype", t0)},
		"another backend":          {rec("cuda", "torch.matmul_bf16", history.Failure, "unsupported_dtype", t0)},
		"not a missing operator":   {rec("mps", "torch.matmul_bf16", history.Failure, "out_of_memory", t0)},
		"another operation":        {rec("mps", "torch.conv1d_bf16", history.Failure, "unsupported_dtype", t0)},
	} {
		if got := plan(recs).Plan.Precision; got != capability.BF16 {
			t.Errorf("%s: precision %s, want bf16", name, got)
		}
	}
}
