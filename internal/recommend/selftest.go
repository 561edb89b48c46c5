package recommend

import (
	"fmt"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/selftest"
)

// SelfTestFailures are the precisions this machine's latest self-test
// (doctor --selftest) could not run a torch matmul in on backend b because
// the backend lacks the operator (unsupported_dtype, mps_unsupported_op),
// each with the line that says so. The newest record of each precision
// decides: a later self-test that passed clears it. A plan for this
// machine then prefers what really ran over what the device's rules claim.
func SelfTestFailures(recs history.Records, b backend.Backend) map[capability.Precision]string {
	latest := map[capability.Precision]history.Record{}
	for _, r := range recs {
		if r.Source != history.SourceSelfTest || history.NormalizeDevice(r.Device) != string(b) {
			continue
		}
		fw, op, prec, ok := selftest.ParseHistoryOperation(r.Operation)
		if !ok || fw != "torch" || op != selftest.OpMatmul {
			continue // torch: the framework recommend configures
		}
		p, err := capability.ParsePrecision(prec)
		if err != nil {
			continue
		}
		if cur, seen := latest[p]; !seen || r.Time.After(cur.Time) {
			latest[p] = r
		}
	}
	out := map[capability.Precision]string{}
	for p, r := range latest {
		unsupported := r.Category == string(explain.CategoryUnsupportedDType) || r.Category == string(explain.CategoryMPSUnsupportedOp)
		if r.Outcome == history.Failure && unsupported {
			out[p] = fmt.Sprintf("this machine's self-test of %s could not run a torch matmul in %s on %s (%s); devctl doctor --selftest again after changing torch", r.Time.Format(time.DateOnly), p, b, r.Category)
		}
	}
	return out
}
