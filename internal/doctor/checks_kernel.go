package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/hw/kernlog"
)

// kernelLog reads this boot's kernel log once per doctor run.
func (e *Env) kernelLog(ctx context.Context) kernlog.Log {
	e.klOnce.Do(func() { e.kl = kernlog.Read(ctx, e.Host) })
	return e.kl
}

var checkKernelLog = &Check{
	ID:  "kernel.device_errors",
	Run: runKernelLog,
}

// runKernelLog reports the accelerator lines of this boot's kernel log:
// hardware events (ECC, fallen off the bus) fail, driver and application
// events warn. The log is only as old as this boot.
func runKernelLog(ctx context.Context, e *Env) Finding {
	l := e.kernelLog(ctx)
	if !l.Readable {
		return skip("skip_unreadable", Args{"why": l.Why})
	}
	if len(l.Events) == 0 {
		return Finding{Status: Pass, Msg: "pass", Args: Args{"lines": strconv.Itoa(l.Lines)}}
	}
	worst := kernlog.SevApplication
	var parts []string
	var ev []Evidence
	for _, x := range l.Events {
		switch {
		case x.Severity == kernlog.SevHardware:
			worst = kernlog.SevHardware
		case x.Severity == kernlog.SevDriver && worst == kernlog.SevApplication:
			worst = kernlog.SevDriver
		}
		what := x.Meaning
		if x.Xid > 0 {
			what = fmt.Sprintf("Xid %d (%s)", x.Xid, x.Meaning)
		}
		where := x.Source
		if x.Device != "" {
			where += " " + x.Device
		}
		parts = append(parts, fmt.Sprintf("%s: %s ×%d", where, what, x.Count))
		if len(ev) < 5 {
			ev = append(ev, Evidence{"kernel log", x.Example})
		}
	}
	args := Args{"count": strconv.Itoa(len(l.Events)), "events": strings.Join(parts, "; ")}
	switch worst {
	case kernlog.SevHardware:
		return Finding{Status: Fail, Msg: "hardware", Args: args, Evidence: ev}
	case kernlog.SevDriver:
		return Finding{Status: Warn, Msg: "driver", Args: args, Evidence: ev}
	}
	return Finding{Status: Warn, Msg: "application", Args: args, Evidence: ev}
}
