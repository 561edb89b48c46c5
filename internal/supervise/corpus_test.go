package supervise

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/explain"
)

// The recovery decision of `devctl run` on every real log of the corpus
// (testdata/logs, from public issue trackers): the first step taken for
// the category the classifier finds must be the step for the category the
// log really is. A wrong category costs a useless retry (or a missed
// one); the figure that counts is the one on the held-out sources.
func TestRecoveryDecisionsOnTheCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "logs")
	f, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first := func(c explain.Category) string {
		l, err := NewLadder(LadderConfig{Devices: []Candidate{{ID: "cuda:0", Backend: "cuda"}, {ID: "cuda:1", Backend: "cuda"}, {ID: "cpu", Backend: "cpu"}},
			Batch: &IntVar{"BATCH_SIZE", 8}, AllowCPU: true})
		if err != nil {
			t.Fatal(err)
		}
		s, ok, _ := l.Next(c, nil)
		if !ok {
			return "stop"
		}
		return s.ID
	}
	type tally struct{ n, ok int }
	by := map[string]*tally{}
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		p := strings.Split(sc.Text(), "\t")
		if line == 0 || len(p) < 5 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, p[0]))
		if err != nil {
			t.Fatal(err)
		}
		want, got := first(explain.Category(p[1])), first(explain.Classify(data).Category)
		set := p[4]
		if by[set] == nil {
			by[set] = &tally{}
		}
		by[set].n++
		if want == got {
			by[set].ok++
		} else if set == "holdout" {
			t.Logf("holdout %s: step %s, want %s", p[0], got, want)
		}
	}
	for set, c := range by {
		t.Logf("%s: first recovery step right for %d of %d logs (%.1f%%)", set, c.ok, c.n, 100*float64(c.ok)/float64(c.n))
	}
	if h := by["holdout"]; h == nil || h.n < 50 || float64(h.ok)/float64(h.n) < 0.9 {
		t.Errorf("holdout decisions %+v: want at least 50 logs and 90%% right", h)
	}
}
