package bench

import (
	"path/filepath"
	"time"

	"github.com/devctl/devctl/internal/state"
)

// HistoryFile is the bench history inside devctl's state directory.
const HistoryFile = "bench.jsonl"

// RegressionThreshold is the fall (as a fraction) that --compare marks.
const RegressionThreshold = 0.10

// HistoryPath returns $XDG_STATE_HOME/devctl/bench.jsonl.
func HistoryPath(lookup func(string) (string, bool)) (string, error) {
	d, err := state.Dir(lookup)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, HistoryFile), nil
}

// LoadHistory reads past runs, oldest first. A missing file is no history.
func LoadHistory(path string) ([]Run, error) {
	runs, err := state.Read[Run](path)
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// AppendHistory records a run (without its comparison) in the bounded
// history file.
func AppendHistory(path string, r *Run) error {
	rec := *r
	rec.Compare = nil
	rec.Results = make([]Result, len(r.Results))
	for i, res := range r.Results {
		res.Change = nil
		rec.Results[i] = res
	}
	return state.Append(path, rec)
}

// Change is a figure against the same figure in the previous run.
type Change struct {
	Previous float64 `json:"previous"`
	// Percent is (value - previous) / previous × 100.
	Percent float64 `json:"percent"`
	// NoisePercent is the two runs' measured spreads added: a fall within
	// it is noise, not a regression.
	NoisePercent float64 `json:"noise_percent"`
	Regressed    bool    `json:"regressed"`
	// Unjudged says why a fall was not judged (a busy machine in either
	// run, a computed figure); empty when it was.
	Unjudged string `json:"unjudged,omitempty"`
}

// Comparison summarises --compare.
type Comparison struct {
	// Previous maps each suite to the time of the run compared against;
	// a suite without a previous run on this host is absent.
	Previous    map[string]time.Time `json:"previous"`
	Threshold   float64              `json:"threshold"`
	Regressions int                  `json:"regressions"`
}

// Compare fills each result's Change from the latest earlier run of the
// same suite on the same host (same fingerprint), matching figures by
// suite, name and thread count, and counts the figures that fell by more
// than threshold plus the noise both runs measured. A run on a busy
// machine is compared but never judged: its figures say what the other
// processes left, not what the hardware does.
func Compare(cur *Run, history []Run, threshold float64) *Comparison {
	cmp := &Comparison{Previous: map[string]time.Time{}, Threshold: threshold}
	for _, suite := range cur.Suites {
		prev := latestWithSuite(history, cur.Host.Fingerprint, suite)
		if prev == nil {
			continue
		}
		cmp.Previous[suite] = prev.Time
		for i := range cur.Results {
			res := &cur.Results[i]
			if res.Suite != suite {
				continue
			}
			for _, p := range prev.Results {
				if p.Suite != res.Suite || p.Name != res.Name || p.Threads != res.Threads || p.Method.Device != res.Method.Device || p.Value <= 0 {
					continue
				}
				ch := &Change{Previous: p.Value, Percent: (res.Value - p.Value) / p.Value * 100}
				ch.NoisePercent = round1(spreadOf(*res) + spreadOf(p))
				switch {
				case res.Source == SourceComputed:
					ch.Unjudged = "computed from the link, not measured"
				case cur.Conditions != nil && cur.Conditions.Busy:
					ch.Unjudged = "this run's machine was busy"
				case prev.Conditions != nil && prev.Conditions.Busy:
					ch.Unjudged = "the previous run's machine was busy"
				default:
					ch.Regressed = -ch.Percent > threshold*100+ch.NoisePercent
				}
				if ch.Regressed {
					cmp.Regressions++
				}
				res.Change = ch
				break
			}
		}
	}
	return cmp
}

func latestWithSuite(history []Run, fingerprint, suite string) *Run {
	for i := len(history) - 1; i >= 0; i-- {
		h := &history[i]
		if h.Host.Fingerprint != fingerprint {
			continue
		}
		for _, r := range h.Results {
			if r.Suite == suite {
				return h
			}
		}
	}
	return nil
}

// spreadOf is a figure's measured spread in percent; runs recorded before
// devctl measured it count as noiseless.
func spreadOf(r Result) float64 {
	if r.Method.SpreadPercent == nil {
		return 0
	}
	return *r.Method.SpreadPercent
}
