package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/history"
	"github.com/devctl/devctl/internal/iostreams"
)

// clearWith runs `history clear` on a history with one record, with the
// terminal (or not) and the answer typed.
func clearWith(t *testing.T, yes, terminal bool, answer string) (exists bool, stderr string, err error) {
	t.Helper()
	l := &history.Log{Path: filepath.Join(t.TempDir(), history.FileName), Now: time.Now}
	if err := l.Append(history.Record{Device: "cpu", Outcome: history.Success}); err != nil {
		t.Fatal(err)
	}
	io, in, _, errOut := iostreams.Test()
	in.WriteString(answer)
	o := &ClearOptions{IO: io, Log: func() (*history.Log, error) { return l, nil }, Yes: yes, Terminal: func() bool { return terminal }}
	err = o.Run()
	_, statErr := os.Stat(l.Path)
	return statErr == nil && size(l.Path) > 0, errOut.String(), err
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func TestClearAsksOnATerminal(t *testing.T) {
	tests := []struct {
		name            string
		yes, terminal   bool
		answer          string
		wantKept        bool
		wantUsage       bool
		wantStderrMatch string
	}{
		{"--yes clears without asking", true, false, "", false, false, "history cleared"},
		{"no terminal and no --yes refuses (exit 2)", false, false, "y\n", true, true, ""},
		{"y on a terminal clears", false, true, "y\n", false, false, "Forget every record in"},
		{"anything else on a terminal keeps it", false, true, "\n", true, false, "history not cleared"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, stderr, err := clearWith(t, tt.yes, tt.terminal, tt.answer)
			if kept != tt.wantKept {
				t.Errorf("history kept = %v, want %v (stderr %q, err %v)", kept, tt.wantKept, stderr, err)
			}
			if got := errors.Is(err, cmdutil.ErrUsage); got != tt.wantUsage {
				t.Errorf("usage error = %v (%v), want %v", got, err, tt.wantUsage)
			}
			if !strings.Contains(stderr, tt.wantStderrMatch) {
				t.Errorf("stderr %q lacks %q", stderr, tt.wantStderrMatch)
			}
		})
	}
}

func TestEmptyHistorySaysWhatRecords(t *testing.T) {
	var b bytes.Buffer
	s := history.Report{File: "/s/devctl/history.jsonl"}
	if err := summaryTables(&b, s); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if !strings.Contains(got, "`devctl doctor --log FILE --record`") || strings.Contains(got, "`devctl doctor --log` record") {
		t.Errorf("empty history: %q; doctor --log records only with --record", got)
	}
}
