package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/recommend"
)

// History window: the device-manager design judged a device by its last 5
// runs and fell back at a success rate of 0.8 or less; 3 runs at least so
// one bad run does not condemn a device.
const (
	historyWindow  = 5
	historyMinRuns = 3
)

// addHistory warns when doctor's per-device history
// ($XDG_STATE_HOME/devctl/history.jsonl) shows that recent runs on the
// chosen device mostly failed. Only probed devices have a history here; a
// catalogued device is a plan for hardware this machine may not have.
// An unreadable history is reported as a reason, never an error.
func addHistory(f *cmdutil.Factory, r *recommend.Result) {
	if r.Device.Catalogue {
		return
	}
	recs, err := history.Load(f.LookupEnv)
	if err != nil {
		r.Reasons = append(r.Reasons, recommend.Reason{Decision: "history", Choice: "unread", Why: fmt.Sprintf("could not read the run history: %v", err)})
		return
	}
	dev := history.NormalizeDevice(string(r.Device.Backend))
	bad, category := recs.MostlyFailing(dev, historyWindow, historyMinRuns)
	if !bad {
		return
	}
	recent := recs.Recent(dev, historyWindow)
	failed := 0
	for _, x := range recent {
		if x.Outcome == history.Failure {
			failed++
		}
	}
	why := fmt.Sprintf("warning: %d of the last %d recorded runs on %s failed", failed, len(recent), dev)
	if category != "" {
		why += ", most often " + category
	}
	why += " (devctl doctor --history); consider another device or the fallback"
	r.Reasons = append(r.Reasons, recommend.Reason{Decision: "history", Choice: dev, Why: why})
}
