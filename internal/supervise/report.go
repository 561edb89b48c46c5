package supervise

import (
	"time"

	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/envvar"
)

// Report is what `devctl run --report FILE` holds: every attempt and how the run ended.
// It names the program, never its arguments or environment values beyond
// the variables devctl itself set.
type Report struct {
	Command string `json:"command"`
	// Operation is what --operation named ("" when not given).
	Operation string    `json:"operation,omitempty"`
	Retries   int       `json:"retries"`
	Attempts  []Attempt `json:"attempts"`
	// Outcome is the last attempt's: success, failure, unrelated or
	// interrupted; ExitCode is devctl run's own exit code.
	Outcome   string `json:"outcome"`
	ExitCode  int    `json:"exit_code"`
	Recovered bool   `json:"recovered"`
	// Stopped says why no further attempt was made after a failure.
	Stopped string `json:"stopped,omitempty"`
	// Explanation is the classifier's reading of the last failure.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// Attempt is one run of the command.
type Attempt struct {
	Attempt    int          `json:"attempt"`
	Time       time.Time    `json:"time"`
	Device     string       `json:"device"`
	Step       string       `json:"step,omitempty"`
	Set        []envvar.Var `json:"set,omitempty"`
	ExitCode   int          `json:"exit_code"`
	Signal     string       `json:"signal,omitempty"`
	Category   string       `json:"category,omitempty"`
	Outcome    string       `json:"outcome"`
	DurationMS int64        `json:"duration_ms"`
	// Memory is the device memory the attempt's processes held at their
	// peak, beside the plan's estimate for the attempt's settings (nil:
	// not measured; MemoryNote then says why, when sampling was on).
	Memory     *devmem.Measurement `json:"memory,omitempty"`
	MemoryNote string              `json:"memory_note,omitempty"`
}

// Explanation is the part of the classifier's answer a person acts on.
type Explanation struct {
	Category string   `json:"category"`
	Title    string   `json:"title"`
	Fixes    []string `json:"fixes,omitempty"`
}
