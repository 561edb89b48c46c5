package explain

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// corpusDir holds real error excerpts from public issue trackers; its
// index.tsv names the expected category, device and source of each.
const corpusDir = "../../testdata/logs"

// minAccuracy is the category accuracy the classifier must keep on the
// whole corpus (the issue asks for ≥ 90%).
const minAccuracy = 0.90

type corpusCase struct {
	file, cat, dev, source, set string
}

func readIndex(t testing.TB) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "index.tsv"))
	if err != nil {
		t.Fatalf("opening corpus index: %v", err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		if first || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		p := strings.Split(sc.Text(), "\t")
		if len(p) < 5 {
			t.Fatalf("index line %q: want file, category, device, source, set", sc.Text())
		}
		out = append(out, corpusCase{p[0], p[1], p[2], p[3], p[4]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCorpusIndexIsConsistent(t *testing.T) {
	cases := readIndex(t)
	files := map[string]bool{}
	valid := map[string]bool{}
	for _, c := range Categories() {
		valid[string(c)] = true
	}
	for _, c := range cases {
		if files[c.file] {
			t.Errorf("%s is listed twice", c.file)
		}
		files[c.file] = true
		if !valid[c.cat] {
			t.Errorf("%s: unknown category %q", c.file, c.cat)
		}
		if !strings.HasPrefix(c.file, c.cat+"/") {
			t.Errorf("%s: file is not under its category %q", c.file, c.cat)
		}
		if !strings.HasPrefix(c.source, "https://github.com/") {
			t.Errorf("%s: source %q is not an issue-tracker URL", c.file, c.source)
		}
		if c.set != "dev" && c.set != "holdout" {
			t.Errorf("%s: set %q, want dev or holdout", c.file, c.set)
		}
	}
	err := filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".log") {
			return err
		}
		rel, _ := filepath.Rel(corpusDir, p)
		if !files[filepath.ToSlash(rel)] {
			t.Errorf("%s is not in index.tsv", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCorpusAccuracy classifies every corpus file, compares with the index
// and logs the accuracy and the confusion table (go test -v -run Corpus).
func TestCorpusAccuracy(t *testing.T) {
	cases := readIndex(t)
	type tally struct{ n, catOK, devOK int }
	bySet := map[string]*tally{}
	total := &tally{}
	confusion := map[string]map[string]int{}
	var misses []string
	for _, c := range cases {
		b, err := os.ReadFile(filepath.Join(corpusDir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		e := Classify(b)
		got := string(e.Category)
		if confusion[c.cat] == nil {
			confusion[c.cat] = map[string]int{}
		}
		confusion[c.cat][got]++
		s := bySet[c.set]
		if s == nil {
			s = &tally{}
			bySet[c.set] = s
		}
		for _, x := range []*tally{s, total} {
			x.n++
			if got == c.cat {
				x.catOK++
			}
			if string(e.Device) == c.dev {
				x.devOK++
			}
		}
		if got != c.cat || string(e.Device) != c.dev {
			misses = append(misses, fmt.Sprintf("%s: want %s/%s, got %s/%s (%q)", c.file, c.cat, c.dev, got, e.Device, first(e.Evidence)))
		}
	}
	pct := func(a, n int) float64 { return 100 * float64(a) / float64(max(n, 1)) }
	t.Logf("corpus: %d logs; category accuracy %.1f%% (%d/%d), device accuracy %.1f%% (%d/%d)",
		total.n, pct(total.catOK, total.n), total.catOK, total.n, pct(total.devOK, total.n), total.devOK, total.n)
	sets := make([]string, 0, len(bySet))
	for s := range bySet {
		sets = append(sets, s)
	}
	sort.Strings(sets)
	for _, s := range sets {
		x := bySet[s]
		t.Logf("  set %-8s %3d logs: category %.1f%%, device %.1f%%", s, x.n, pct(x.catOK, x.n), pct(x.devOK, x.n))
	}
	t.Log("confusion table (rows: expected, columns: got)\n" + confusionTable(confusion))
	for _, m := range misses {
		t.Log("miss: " + m)
	}
	if acc := float64(total.catOK) / float64(max(total.n, 1)); acc < minAccuracy {
		t.Errorf("category accuracy %.3f is below %.2f", acc, minAccuracy)
	}
	if acc := float64(total.devOK) / float64(max(total.n, 1)); acc < minAccuracy {
		t.Errorf("device accuracy %.3f is below %.2f", acc, minAccuracy)
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// confusionTable renders expected×got counts with short column names.
func confusionTable(m map[string]map[string]int) string {
	cats := make([]string, 0, len(Categories()))
	for _, c := range Categories() {
		cats = append(cats, string(c))
	}
	short := func(s string) string {
		parts := strings.Split(s, "_")
		out := ""
		for _, p := range parts {
			out += p[:min(3, len(p))]
		}
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s", "")
	for _, c := range cats {
		fmt.Fprintf(&b, "%9s", short(c))
	}
	b.WriteString("\n")
	for _, want := range cats {
		row := m[want]
		if row == nil {
			continue
		}
		fmt.Fprintf(&b, "%-24s", want)
		for _, got := range cats {
			if n := row[got]; n > 0 {
				fmt.Fprintf(&b, "%9d", n)
			} else {
				fmt.Fprintf(&b, "%9s", ".")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}
