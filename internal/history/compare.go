package history

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/units"
)

// CompareWindow is how many of the newest matching measured runs
// PlanComparison summarises.
const CompareWindow = 5

// PlanComparison says in one line how this machine's measured runs of a
// model compared with their plans: what `devctl recommend` shows as a
// reason on this machine. It matches successful attempts of `devctl run
// --model...` on the device's backend with the same parameter count and
// mode (the ratio peak/plan carries across batch sizes and precisions,
// the settings of the newest run are named). Failed attempts are left
// out: an out-of-memory run peaks at what the device had, not at what it
// needed. "" when no run matches.
//
// This is recommend's one hook into the history (internal/recommend's
// plan.go calls it with the records Deps.History gave).
func PlanComparison(rs Records, device string, params int64, mode string) string {
	device = NormalizeDevice(device)
	var ms []Record
	for i := len(rs) - 1; i >= 0 && len(ms) < CompareWindow; i-- {
		r := rs[i]
		m := r.Memory
		if r.Device != device || r.Outcome != Success || m == nil || m.Plan == nil || m.Ratio() == 0 {
			continue
		}
		if m.Plan.Params != params || !strings.EqualFold(m.Plan.Mode, mode) {
			continue
		}
		ms = append(ms, r)
	}
	if len(ms) == 0 {
		return ""
	}
	lo, hi := ms[0].Memory.Ratio(), ms[0].Memory.Ratio()
	for _, r := range ms[1:] {
		lo, hi = min(lo, r.Memory.Ratio()), max(hi, r.Memory.Ratio())
	}
	ratio := fmt.Sprintf("%.2f× its plan", lo)
	if len(ms) > 1 {
		ratio = fmt.Sprintf("%.2f–%.2f× their plans", lo, hi)
		if fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
			ratio = fmt.Sprintf("%.2f× their plans", lo)
		}
	}
	n := ms[0].Memory
	runs := "1 measured run"
	if len(ms) > 1 {
		runs = fmt.Sprintf("%d measured runs", len(ms))
	}
	return fmt.Sprintf("on this machine, %s of this model (%s) on %s peaked at %s (newest: %s measured, %s planned for %s)",
		runs, mode, device, ratio, units.Bytes(n.PeakBytes), units.Bytes(n.Plan.Bytes), n.Plan.Settings())
}
