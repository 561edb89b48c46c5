package bench

import (
	"sort"
	"time"
)

// Best is the shortest of the trial times: STREAM and peak-FLOPS probes
// report the best trial because interference (other processes, interrupts,
// frequency ramps) only ever makes a trial slower.
func Best(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	b := ds[0]
	for _, d := range ds[1:] {
		if d < b {
			b = d
		}
	}
	return b
}

// Median is the middle trial time (the mean of the two middle ones for an
// even count); devctl reports it beside the best to show the spread.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Rate converts work done in a duration to units per second divided by
// scale (1e9 for G-ops or GB). A zero duration gives 0, not infinity.
func Rate(work float64, d time.Duration, scale float64) float64 {
	if d <= 0 {
		return 0
	}
	return work / d.Seconds() / scale
}

// Settled reports whether the three shortest trials lie within spread (a
// fraction) of the shortest: the best figure has been reached more than
// once, so one more trial is unlikely to change it.
func Settled(ds []time.Duration, spread float64) bool {
	if len(ds) < 3 {
		return false
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[2]) <= float64(s[0])*(1+spread)
}
