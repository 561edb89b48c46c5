package supervise

import (
	"bytes"
	"errors"
	"os"
	"strconv"
)

// procStat is what the supervisor reads of a process in /proc/PID/stat:
// enough to tell the job's processes from the others.
type procStat struct {
	pid, ppid, pgid int
	state           byte   // 'R', 'S', 'Z' (zombie), ...
	start           uint64 // start time, clock ticks after boot
}

var errStat = errors.New("malformed /proc/PID/stat")

// parseStat reads the fields of proc(5)'s /proc/PID/stat that procStat
// holds. The command name (field 2) is in parentheses and may itself hold
// spaces and parentheses, so the fields after it are counted from the last
// ')'.
func parseStat(b []byte) (procStat, error) {
	var s procStat
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return s, errStat
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return s, errStat
	}
	// After ")": state(3) ppid(4) pgrp(5) session(6) tty_nr(7) tpgid(8)
	// flags(9) minflt(10) cminflt(11) majflt(12) cmajflt(13) utime(14)
	// stime(15) cutime(16) cstime(17) priority(18) nice(19)
	// num_threads(20) itrealvalue(21) starttime(22).
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return s, errStat
	}
	s.pid, s.state = pid, f[0][0]
	if s.ppid, err = strconv.Atoi(string(f[1])); err != nil {
		return s, errStat
	}
	if s.pgid, err = strconv.Atoi(string(f[2])); err != nil {
		return s, errStat
	}
	if s.start, err = strconv.ParseUint(string(f[19]), 10, 64); err != nil {
		return s, errStat
	}
	return s, nil
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// allProcs reads every process's stat. A process that ends while /proc is
// read is left out.
func allProcs() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if s, err := readStat(pid); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// parseCgroup2 returns the cgroup v2 path of a /proc/PID/cgroup file (the
// "0::PATH" line), or "" when the process is in no v2 hierarchy.
func parseCgroup2(b []byte) string {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if p, ok := bytes.CutPrefix(line, []byte("0::")); ok {
			return string(p)
		}
	}
	return ""
}

// descendsFrom reports whether pid's chain of parents reaches ancestor
// (pid itself included), walking at most 4096 generations.
func descendsFrom(pid, ancestor int) bool {
	for range 4096 {
		if pid == ancestor {
			return true
		}
		if pid <= 1 {
			return false
		}
		s, err := readStat(pid)
		if err != nil {
			return false
		}
		pid = s.ppid
	}
	return false
}
