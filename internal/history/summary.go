package history

import (
	"sort"
	"time"
)

// DeviceSummary is one device's line in `devctl history`.
type DeviceSummary struct {
	Device string `json:"device"`
	// Attempts counts every record (an attempt of `devctl run`, a doctor
	// record, a self-test); Successes and Failures split them.
	Attempts  int `json:"attempts"`
	Successes int `json:"successes"`
	Failures  int `json:"failures"`
	// DeviceFaults and OperationFaults are the failures that count
	// against the device (Scope); the rest of Failures never count.
	DeviceFaults    int            `json:"device_faults"`
	OperationFaults int            `json:"operation_faults"`
	Unrelated       int            `json:"unrelated"`
	Interrupted     int            `json:"interrupted"`
	LastCategory    string         `json:"last_category,omitempty"`
	LastTime        time.Time      `json:"last_time"`
	Categories      map[string]int `json:"categories,omitempty"`
	// Operations are the operations recorded on the device ("" is left
	// out), sorted.
	Operations []string `json:"operations,omitempty"`
}

// Summaries gives every device's record, sorted by device name.
func (rs Records) Summaries() []DeviceSummary {
	by := map[string]*DeviceSummary{}
	ops := map[string]map[string]bool{}
	for _, r := range rs {
		s := by[r.Device]
		if s == nil {
			s = &DeviceSummary{Device: r.Device}
			by[r.Device] = s
			ops[r.Device] = map[string]bool{}
		}
		s.Attempts++
		if r.Operation != "" {
			ops[r.Device][r.Operation] = true
		}
		switch r.Outcome {
		case Success:
			s.Successes++
		case Failure:
			s.Failures++
			s.LastCategory = label(r)
			if s.Categories == nil {
				s.Categories = map[string]int{}
			}
			s.Categories[r.Category]++
			switch ScopeOf(r.Category, r.MessageID) {
			case ScopeDevice:
				s.DeviceFaults++
			case ScopeOperation:
				s.OperationFaults++
			}
		case Unrelated:
			s.Unrelated++
		case Interrupted:
			s.Interrupted++
		}
		if r.Time.After(s.LastTime) {
			s.LastTime = r.Time
		}
	}
	out := make([]DeviceSummary, 0, len(by))
	for d, s := range by {
		for op := range ops[d] {
			s.Operations = append(s.Operations, op)
		}
		sort.Strings(s.Operations)
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}

// Measured returns the records that carry a memory measurement, newest
// first, at most n (n <= 0: all).
func (rs Records) Measured(n int) Records {
	var out Records
	for i := len(rs) - 1; i >= 0 && (n <= 0 || len(out) < n); i-- {
		if m := rs[i].Memory; m != nil && m.PeakBytes > 0 {
			out = append(out, rs[i])
		}
	}
	return out
}
