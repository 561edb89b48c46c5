package doctor

import "github.com/devctl/devctl/internal/selftest"

// SchemaVersion is the version of doctor's JSON output.
const SchemaVersion = 1

// Report is what `devctl doctor` prints: devctl's JSON schema (checks[],
// log, summary). Field names are stable.
type Report struct {
	SchemaVersion int            `json:"schema_version"`
	Lang          Lang           `json:"lang"`
	Checks        []Result       `json:"checks"`
	Summary       map[Status]int `json:"summary"`
	Log           *LogReport     `json:"log,omitempty"`
	// Selftest is the on-device self-test (doctor --selftest).
	Selftest *selftest.Outcome `json:"selftest,omitempty"`
}

// CheckInfo is one line of `doctor --list`.
type CheckInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// List describes the checks in lang.
func List(checks []*Check, lang Lang) []CheckInfo {
	out := make([]CheckInfo, len(checks))
	for i, c := range checks {
		out[i] = CheckInfo{ID: c.ID, Title: title(c.ID, lang)}
	}
	return out
}
