package meminfo

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Values holds the /proc/meminfo lines devctl uses, in bytes.
type Values struct {
	Total int64
	// Available is MemAvailable, the kernel's estimate of memory a new
	// workload can take without swapping. Kernels before 3.14 lack it;
	// then it is MemFree+Buffers+Cached, the usual approximation, and
	// AvailableEstimated is true.
	Available          int64
	AvailableEstimated bool
	Free               int64
	SwapTotal          int64
	SwapFree           int64
}

// ErrNoMemTotal is returned when /proc/meminfo has no usable MemTotal line.
var ErrNoMemTotal = errors.New("no MemTotal line")

// Parse parses /proc/meminfo ("MemTotal:  24684092 kB"). Unknown and
// malformed lines are ignored; only a missing MemTotal is an error.
func Parse(b []byte) (Values, error) {
	var (
		m                    Values
		haveTotal, haveAvail bool
		buffers, cached      int64
	)
	for line := range bytes.Lines(b) {
		k, v, ok := bytes.Cut(bytes.TrimSuffix(line, []byte("\n")), []byte(":"))
		if !ok {
			continue
		}
		n, ok := parseKB(string(v))
		if !ok {
			continue
		}
		switch string(bytes.TrimSpace(k)) {
		case "MemTotal":
			m.Total, haveTotal = n, true
		case "MemAvailable":
			m.Available, haveAvail = n, true
		case "MemFree":
			m.Free = n
		case "Buffers":
			buffers = n
		case "Cached":
			cached = n
		case "SwapTotal":
			m.SwapTotal = n
		case "SwapFree":
			m.SwapFree = n
		}
	}
	if !haveTotal {
		return Values{}, fmt.Errorf("/proc/meminfo: %w", ErrNoMemTotal)
	}
	if !haveAvail {
		m.Available = sat(sat(m.Free, buffers), cached)
		m.AvailableEstimated = true
	}
	return m, nil
}

// parseKB reads "24684092 kB" (or a bare number, as HugePages lines have)
// into bytes.
func parseKB(s string) (int64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	if len(f) == 2 {
		if !strings.EqualFold(f[1], "kB") {
			return 0, false
		}
		if n > math.MaxInt64/1024 {
			return 0, false
		}
		n *= 1024
	}
	return n, true
}

func sat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// TmpfsSize is a tmpfs mount's size= option as a bound in bytes. The kernel
// spells an unlimited tmpfs "size=0" (mountinfo prints "size=0k"); such a
// mount is bounded in practice by RAM, which is returned with unlimited
// set (or 0 when RAM is unknown).
func TmpfsSize(opt string, ramBytes int64) (n int64, unlimited bool, err error) {
	n, err = ParseSize(opt, ramBytes)
	if err != nil {
		return 0, false, err
	}
	if n == 0 {
		return max(ramBytes, 0), true, nil
	}
	return n, false, nil
}

// ParseSize parses a tmpfs "size=" value: bytes with an optional binary
// suffix (k, m, g, t, p, e), or a percentage of RAM ("50%"), which needs
// ramBytes. The kernel prints sizes in mountinfo as "<n>k".
func ParseSize(s string, ramBytes int64) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty size")
	}
	if strings.HasSuffix(s, "%") {
		p, err := strconv.ParseInt(strings.TrimSuffix(s, "%"), 10, 64)
		if err != nil || p < 0 || p > 10000 || ramBytes <= 0 {
			return 0, fmt.Errorf("size %q: want a percentage of known RAM", s)
		}
		return int64(float64(ramBytes) * float64(p) / 100), nil
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	case 't', 'T':
		mult = 1 << 40
	case 'p', 'P':
		mult = 1 << 50
	case 'e', 'E':
		mult = 1 << 60
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number with an optional k, m, g suffix", s)
	}
	if n > math.MaxInt64/mult {
		return math.MaxInt64, nil
	}
	return n * mult, nil
}
