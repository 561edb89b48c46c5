package cmdutil

import (
	"errors"

	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/probe"
)

// ErrReplay is HistoryLog's answer for a --from or --sysroot run.
var ErrReplay = errors.New("a --from or --sysroot replay describes another machine: nothing is recorded in this machine's history")

// HistoryLog returns this machine's history (history.Log: the file in the
// state directory, this machine's id, the clock). A replay gets ErrReplay:
// it never writes. Every writer of the history (run, doctor, self-tests)
// starts here.
func HistoryLog(f *Factory) (*history.Log, error) {
	if f.Replay() {
		return nil, ErrReplay
	}
	return history.Open(f.LookupEnv, f.MachineID(), f.Now)
}

// HistoryVerdicts is the history rule's verdict for operation on this
// machine: the backends to pass over, with the reason. A replay, an
// unreadable history or an empty one steer nothing.
func HistoryVerdicts(f *Factory, operation string) map[string]string {
	l, err := HistoryLog(f)
	if err != nil {
		return nil
	}
	recs, err := l.Recent()
	if err != nil {
		return nil
	}
	return recs.PassOver(operation)
}

// keepWhenFallbackOff applies device.fallback_enabled=false to the rule:
// warn, never move. The chosen device stays; the verdict against it is
// added to the selection's reason and the summary's notes.
func keepWhenFallbackOff(rep *probe.Report, cfg *config.Config, verdicts map[string]string) {
	if rep == nil || rep.Selection == nil || cfg.Device.FallbackEnabled {
		return
	}
	why, bad := verdicts[string(rep.Summary.Backend)]
	if !bad {
		return
	}
	note := "history rule: " + why + "; kept because device.fallback_enabled is false"
	rep.Selection.Reason += "; " + note
	rep.Summary.Notes = append(rep.Summary.Notes, note)
}
