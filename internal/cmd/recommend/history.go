package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/recommend"
)

// addHistory applies the history rule (internal/history: Judge; a device
// whose success rate over its last 5 recorded runs is below 0.8) to the
// chosen device. Automatic selection has already passed such a device over
// (cmdutil.RunProbe); it is still chosen only when --device asked for it or
// every device fails the rule, and then this warning says so. Only probed
// devices have a history here: a catalogued device is a plan for hardware
// this machine may not have. An unreadable history is reported as a
// reason, never an error.
func addHistory(f *cmdutil.Factory, r *recommend.Result) {
	if r.Device.Catalogue {
		return
	}
	recs, err := history.Load(f.LookupEnv)
	if err != nil {
		r.Reasons = append(r.Reasons, recommend.Reason{Decision: "history", Choice: "unread", Why: fmt.Sprintf("could not read the run history: %v", err)})
		return
	}
	v := recs.Judge(string(r.Device.Backend))
	if !v.PassOver {
		return
	}
	r.Reasons = append(r.Reasons, recommend.Reason{Decision: "history", Choice: v.Device,
		Why: "warning: " + v.Reason() + "; used because it was requested or no other device passes the rule"})
}
