package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The process_* families of --runtime-metrics, on Linux: the names and
// types of prometheus/client_golang v1.25.0's process collector, read from
// /proc/self as it read them (through prometheus/procfs). Its
// process_network_{receive,transmit}_bytes_total are left out: they count
// the whole network namespace's traffic (/proc/self/net/netstat), not
// devctl's. Elsewhere there are no process_* metrics.
//
// The /proc files are described in proc_pid_stat(5), proc_pid_limits(5)
// and proc_stat(5) (https://man.archlinux.org/man/proc_pid_stat.5.en).

// userHZ is the unit of the times in /proc/self/stat ("clock ticks, divide
// by sysconf(_SC_CLK_TCK)"): the kernel's USER_HZ, 100 on the
// architectures Go supports; prometheus/procfs uses the same constant.
const userHZ = 100

// procStat holds the fields of /proc/self/stat that process_* need.
type procStat struct {
	utime, stime uint64 // fields 14 and 15, clock ticks
	starttime    uint64 // field 22, clock ticks after boot
	vsize        uint64 // field 23, bytes
	rss          int64  // field 24, pages
}

// parseProcStat parses /proc/PID/stat. The second field, the command name
// in parentheses, may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("no ')' after the command name")
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	const first = 3
	if len(f) < 24-first+1 {
		return procStat{}, fmt.Errorf("%d fields after the command name, want at least %d", len(f), 24-first+1)
	}
	var st procStat
	var errs []error
	u := func(n int) uint64 {
		v, err := strconv.ParseUint(string(f[n-first]), 10, 64)
		errs = append(errs, err)
		return v
	}
	st.utime, st.stime, st.starttime, st.vsize = u(14), u(15), u(22), u(23)
	rss, err := strconv.ParseInt(string(f[24-first]), 10, 64)
	st.rss = rss
	if err := errors.Join(append(errs, err)...); err != nil {
		return procStat{}, err
	}
	return st, nil
}

// parseLimits returns the soft limits of /proc/PID/limits named, in the
// units of the file; "unlimited" is +Inf. A limit the file lacks is
// absent from the map.
func parseLimits(b []byte, names ...string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		for _, name := range names {
			rest, ok := bytes.CutPrefix(line, []byte(name))
			if !ok || len(rest) == 0 || rest[0] != ' ' {
				continue
			}
			f := bytes.Fields(rest)
			if len(f) == 0 {
				return nil, fmt.Errorf("%q has no soft limit", name)
			}
			if string(f[0]) == "unlimited" {
				out[name] = math.Inf(1)
				continue
			}
			v, err := strconv.ParseUint(string(f[0]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", name, err)
			}
			out[name] = float64(v)
		}
	}
	return out, sc.Err()
}

// parseBootTime returns the btime line of /proc/stat: when the machine
// booted, in Unix seconds.
func parseBootTime(b []byte) (int64, error) {
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			return strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
		}
	}
	return 0, errors.New("no btime line")
}

// procFacts are what the process_* families are made of; a field that
// could not be read is NaN and its family left out.
type procFacts struct {
	cpuSeconds, residentBytes, virtualBytes, startTime float64
	openFDs, maxFDs, maxVirtualBytes                   float64
}

// procFactsFrom computes the facts from the contents of /proc/self/stat
// and /proc/self/limits (nil when unread), the boot time (Unix seconds,
// NaN when unknown) and the page size. Open descriptors are counted apart.
func procFactsFrom(stat, limits []byte, boot float64, pageSize int) procFacts {
	nan := math.NaN()
	p := procFacts{cpuSeconds: nan, residentBytes: nan, virtualBytes: nan, startTime: nan, openFDs: nan, maxFDs: nan, maxVirtualBytes: nan}
	if st, err := parseProcStat(stat); err == nil {
		p.cpuSeconds = float64(st.utime+st.stime) / userHZ
		p.residentBytes = float64(st.rss) * float64(pageSize)
		p.virtualBytes = float64(st.vsize)
		p.startTime = boot + float64(st.starttime)/userHZ
	}
	if lim, err := parseLimits(limits, "Max open files", "Max address space"); err == nil {
		if v, ok := lim["Max open files"]; ok {
			p.maxFDs = v
		}
		if v, ok := lim["Max address space"]; ok {
			p.maxVirtualBytes = v
		}
	}
	return p
}

func (p procFacts) families() []*family {
	var fams []*family
	add := func(name, help string, typ metricType, v float64) {
		if math.IsNaN(v) {
			return
		}
		if math.IsInf(v, 1) { // "unlimited", written as client_golang did: the largest uint64
			v = math.MaxUint64
		}
		f := newFamily(name, help, typ)
		f.add(v)
		fams = append(fams, f)
	}
	add("process_cpu_seconds_total", "User and system CPU time devctl has used, in seconds (/proc/self/stat).", counter, p.cpuSeconds)
	add("process_resident_memory_bytes", "devctl's resident memory, in bytes (/proc/self/stat).", gauge, p.residentBytes)
	add("process_virtual_memory_bytes", "devctl's virtual memory, in bytes (/proc/self/stat).", gauge, p.virtualBytes)
	add("process_start_time_seconds", "When devctl started (Unix time; /proc/self/stat and /proc/stat).", gauge, p.startTime)
	add("process_open_fds", "File descriptors devctl has open (/proc/self/fd).", gauge, p.openFDs)
	add("process_max_fds", "devctl's soft limit of open file descriptors (/proc/self/limits).", gauge, p.maxFDs)
	add("process_virtual_memory_max_bytes", "devctl's soft limit of virtual memory, in bytes (/proc/self/limits).", gauge, p.maxVirtualBytes)
	return fams
}
