package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/probe"
)

// LoadSample is one look at how busy the machine is: the kernel's CPU
// counters and load average, and the CPU time this process has used, so
// that the time other processes took in between can be told from ours.
type LoadSample struct {
	Time time.Time
	// Load1 is the one-minute load average, -1 when unknown.
	Load1 float64
	// CPU is the aggregate "cpu" line of /proc/stat; OK is false when it
	// could not be read (macOS, a container without /proc/stat).
	CPU CPUTimes
	OK  bool
	// Self is the CPU time (user + system) this process has used.
	Self time.Duration
}

// CPUTimes is the aggregate "cpu" line of /proc/stat, in clock ticks.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
}

// Busy is every tick that was not idle or waiting (steal excluded: a
// stolen tick ran another guest, not this machine's work).
func (c CPUTimes) Busy() uint64 { return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ }

// Total is every tick counted.
func (c CPUTimes) Total() uint64 { return c.Busy() + c.Idle + c.IOWait + c.Steal }

// maxTicks bounds a counter: at USER_HZ on 10,000 CPUs it is over a
// hundred thousand years, and sums of eight cannot overflow.
const maxTicks = 1 << 56

// ParseProcStat reads the aggregate "cpu" line of /proc/stat. Fields the
// kernel did not have yet (steal before 2.6.11) are zero.
func ParseProcStat(b []byte) (CPUTimes, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var v [8]uint64
		for i := 0; i < len(v) && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil || n > maxTicks {
				return CPUTimes{}, fmt.Errorf("/proc/stat cpu line: field %d %q is not a tick count", i+1, f[i+1])
			}
			v[i] = n
		}
		return CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
	}
	return CPUTimes{}, fmt.Errorf("/proc/stat: no aggregate cpu line")
}

// ParseLoadAvg reads the one-minute load average from /proc/loadavg.
func ParseLoadAvg(b []byte) (float64, error) {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg: empty")
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 || v != v {
		return 0, fmt.Errorf("/proc/loadavg: %q is not a load average", f[0])
	}
	return v, nil
}

// Conditions says how quiet the machine was while bench measured: a busy
// machine makes every figure low and noisy, and a comparison with it says
// nothing about the hardware.
type Conditions struct {
	// LoadBefore and LoadAfter are the one-minute load averages (nil when
	// unknown). The average lags by a minute and also counts what ran just
	// before, so it is reported, not judged: OtherCPUPercent is the measure.
	LoadBefore *float64 `json:"load_before"`
	LoadAfter  *float64 `json:"load_after"`
	// OtherCPUPercent is the share of the machine's CPU time that other
	// processes used while bench ran (nil when /proc/stat is unreadable).
	OtherCPUPercent *float64 `json:"other_cpu_percent"`
	// StealPercent is the share of CPU time the hypervisor gave to other
	// guests (nil when unknown).
	StealPercent *float64 `json:"steal_percent"`
	// Busy is true when the figures should not be trusted or compared.
	Busy    bool     `json:"busy"`
	Reasons []string `json:"reasons,omitempty"`
}

// Thresholds above which a machine counts as busy. Bench's own threads use
// at most one CPU each; anything else running competes with them.
const (
	busyOtherCPUPercent = 10
	busyStealPercent    = 5
)

// JudgeConditions compares the samples taken before and after the run.
// cpus is the number of CPUs the counters cover.
func JudgeConditions(before, after LoadSample, cpus int) Conditions {
	var c Conditions
	if before.Load1 >= 0 {
		c.LoadBefore = probe.Ptr(before.Load1)
	}
	if after.Load1 >= 0 {
		c.LoadAfter = probe.Ptr(after.Load1)
	}
	if before.OK && after.OK && after.CPU.Total() > before.CPU.Total() {
		total := float64(after.CPU.Total() - before.CPU.Total())
		busy := float64(after.CPU.Busy()) - float64(before.CPU.Busy())
		steal := float64(after.CPU.Steal) - float64(before.CPU.Steal)
		// Our own CPU time, as a share of the machine's.
		wall := after.Time.Sub(before.Time).Seconds()
		self := (after.Self - before.Self).Seconds()
		if wall > 0 && cpus > 0 {
			selfShare := self / (wall * float64(cpus))
			other := busy/total - selfShare
			c.OtherCPUPercent = probe.Ptr(round1(max(0, other) * 100))
		}
		c.StealPercent = probe.Ptr(round1(max(0, steal/total) * 100))
	}
	if c.OtherCPUPercent != nil && *c.OtherCPUPercent > busyOtherCPUPercent {
		c.Reasons = append(c.Reasons, fmt.Sprintf("other processes used %.0f%% of the CPUs while bench ran", *c.OtherCPUPercent))
	}
	if c.StealPercent != nil && *c.StealPercent > busyStealPercent {
		c.Reasons = append(c.Reasons, fmt.Sprintf("the hypervisor gave %.0f%% of CPU time to other guests (steal)", *c.StealPercent))
	}
	c.Busy = len(c.Reasons) > 0
	return c
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// ParseSelfStat returns the user + system CPU ticks of a /proc/PID/stat
// line (fields 14 and 15). The command name in parentheses may hold
// spaces and parentheses itself, so fields are counted after the last ')'.
func ParseSelfStat(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/self/stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// After the name: state(3) ppid(4) ... utime(14) stime(15).
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/self/stat: %d fields after the name, want at least 13", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/self/stat: utime %q / stime %q are not tick counts", f[11], f[12])
	}
	return u + s, nil
}

// userHZ is the tick of /proc/stat and /proc/PID/stat: USER_HZ, 100 on
// every architecture Linux exposes to user space that devctl builds for.
const userHZ = 100

// SampleLoad reads the machine's counters through read (the host's file
// reader). Anything unreadable leaves that part unknown.
func SampleLoad(read func(string) ([]byte, error), now time.Time) LoadSample {
	s := LoadSample{Time: now, Load1: -1}
	if b, err := read("/proc/loadavg"); err == nil {
		if v, err := ParseLoadAvg(b); err == nil {
			s.Load1 = v
		}
	}
	b, err := read("/proc/stat")
	if err != nil {
		return s
	}
	cpu, err := ParseProcStat(b)
	if err != nil {
		return s
	}
	b, err = read("/proc/self/stat")
	if err != nil {
		return s
	}
	ticks, err := ParseSelfStat(b)
	if err != nil {
		return s
	}
	s.CPU, s.OK = cpu, true
	s.Self = time.Duration(ticks) * time.Second / userHZ
	return s
}
