package recommend

import (
	"fmt"

	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/oomsim"
)

// DefaultSource is the source of a setting the user did not set.
const DefaultSource = "default"

// SetStrategy takes the configured memory strategy when the user chose one
// (its source is not "default"), set a memory fraction, or asked for
// custom; otherwise Strategy stays empty and Recommend picks by model
// size. The source reported for a custom strategy is the fraction's, when
// the user set it.
func (in *Input) SetStrategy(strategy oomsim.Strategy, fraction float64, strategySource, fractionSource string) {
	in.Strategy = ""
	if strategySource == DefaultSource && fractionSource == DefaultSource && strategy != oomsim.Custom {
		return
	}
	in.Strategy, in.Fraction, in.StrategySource = strategy, fraction, strategySource
	if strategy == oomsim.Custom && fractionSource != DefaultSource {
		in.StrategySource = fractionSource
	}
}

// AddHistory applies the history rule (internal/history: Judge; a device
// whose success rate over its last 5 recorded runs is below 0.8) to the
// chosen device. Automatic selection has already passed such a device over
// (cmdutil.RunProbe); it is still chosen only when --device asked for it or
// every device fails the rule, and then this warning says so. Only probed
// devices have a history here: a catalogued device is a plan for hardware
// this machine may not have. loadErr, when the history could not be read,
// is reported as a reason, never an error.
func AddHistory(r *Result, recs history.Records, loadErr error) {
	if r.Device.Catalogue {
		return
	}
	if loadErr != nil {
		r.Reasons = append(r.Reasons, Reason{Decision: "history", Choice: "unread", Why: fmt.Sprintf("could not read the run history: %v", loadErr)})
		return
	}
	v := recs.Judge(string(r.Device.Backend))
	if !v.PassOver {
		return
	}
	r.Reasons = append(r.Reasons, Reason{Decision: "history", Choice: v.Device,
		Why: "warning: " + v.Reason() + "; used because it was requested or no other device passes the rule"})
}
