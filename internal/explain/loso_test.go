package explain

import (
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/devctl/devctl/internal/explain/learn"
)

// Leave-one-source-out accuracy: the figure the README and docs/doctor.md
// quote. A source is the repository or the site a log was posted on
// (sourceOf). Every log of a source is classified with a learned model
// trained on the corpus without that source; the rules and the error
// catalogues are the same for every source (they were written with the
// corpus in view, so the figure is honest for the model and optimistic for
// the rules, as the docs say).
//
// The model is only a fallback (it is asked when no rule or catalogue entry
// matched), so only the sources with such a log need a model of their own:
// for every other log the answer does not depend on the model. That keeps
// the test to the folds that matter; it is still leave-one-source-out for
// every log.
//
//	go test ./internal/explain -run LOSO -v
//
// Without -run naming it the test is skipped (it trains a model per source,
// about a minute on two cores). LOSO_FOLDS=k groups the sources into k folds
// instead (each log is still classified by a model that never saw its
// source, with less training data): a quick estimate while working.

// Targets the issue sets: at least 95% of all logs right, and at most one in
// twenty logs labelled unknown given a device category.
const (
	minLOSO           = 0.95
	maxUnknownAsError = 0.05
)

// sourceOf is the source of a log in the leave-one-source-out sense: the
// repository for a GitHub or GitLab thread ("github.com/pytorch/pytorch"),
// the site for anything else ("stackoverflow.com").
func sourceOf(url string) string {
	rest := url
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	p := strings.Split(rest, "/")
	host := strings.TrimPrefix(strings.ToLower(p[0]), "www.")
	if (host == "github.com" || host == "gitlab.com") && len(p) >= 3 {
		return host + "/" + strings.ToLower(p[1]) + "/" + strings.ToLower(p[2])
	}
	return host
}

func TestSourceOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/pytorch/pytorch/issues/77764":                "github.com/pytorch/pytorch",
		"https://github.com/NVIDIA/nccl/issues/719":                      "github.com/nvidia/nccl",
		"https://stackoverflow.com/questions/123/cuda-error":             "stackoverflow.com",
		"https://www.kouhan.cn/post/x":                                   "kouhan.cn",
		"https://forums.developer.nvidia.com/t/some-thread/1":            "forums.developer.nvidia.com",
		"https://theneuralbase.pages.dev/pytorch/errors/runtimeerror-x/": "theneuralbase.pages.dev",
	} {
		if got := sourceOf(in); got != want {
			t.Errorf("sourceOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// corpusDoc is a corpus file read for cross-validation.
type corpusDoc struct {
	corpusCase
	log    []byte
	label  int
	source string
}

// modelClasses are the model's classes: every category, in order.
func modelClasses() []string {
	var out []string
	for _, c := range Categories() {
		out = append(out, string(c))
	}
	return out
}

func loadCorpus(t testing.TB) []corpusDoc {
	t.Helper()
	idx := map[string]int{}
	for i, c := range modelClasses() {
		idx[c] = i
	}
	var docs []corpusDoc
	for _, c := range readIndex(t) {
		b, err := os.ReadFile(filepath.Join(corpusDir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, corpusDoc{corpusCase: c, log: b, label: idx[c.cat], source: sourceOf(c.source)})
	}
	return docs
}

// trainingExamples turns docs into the model's examples.
func trainingExamples(docs []corpusDoc, opt learn.Options) []learn.Example {
	buckets := uint32(1) << opt.LogBuckets
	out := make([]learn.Example, len(docs))
	for i, d := range docs {
		out[i] = learn.Example{Features: learn.DocFeatures(modelWindow(d.log), buckets, nil), Label: d.label}
	}
	return out
}

// crossValidate classifies every doc with a model trained without its
// fold (fold[source]); docs the rules decide are classified without a
// model, their answer does not depend on one. It returns the answers and how
// many models were trained.
func crossValidate(docs []corpusDoc, fold map[string]int, opt learn.Options) ([]Explanation, []guess, int) {
	out := make([]Explanation, len(docs))
	guesses := make([]guess, len(docs))
	need := map[int][]int{} // fold -> docs that reach the model
	for i, d := range docs {
		e := classify(d.log, nil)
		out[i] = e
		if e.DecidedBy == DecidedByNone {
			need[fold[d.source]] = append(need[fold[d.source]], i)
		}
	}
	examples := trainingExamples(docs, opt)
	classes := modelClasses()
	folds := make([]int, 0, len(need))
	for f := range need {
		folds = append(folds, f)
	}
	sort.Ints(folds)
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				var train []learn.Example
				for i, d := range docs {
					if fold[d.source] != f {
						train = append(train, examples[i])
					}
				}
				m, err := learn.Decode(learn.Train(train, classes, opt).Encode())
				if err != nil {
					panic(err)
				}
				for _, i := range need[f] {
					out[i] = classify(docs[i].log, m)
					_, best, p := modelGuess(docs[i].log, m)
					guesses[i] = guess{asked: true, cat: m.Classes[best], p: p}
				}
			}
		}()
	}
	for _, f := range folds {
		work <- f
	}
	close(work)
	wg.Wait()
	return out, guesses, len(folds)
}

// guess is the model's raw answer for a log it was asked about, before the
// threshold.
type guess struct {
	asked bool
	cat   string
	p     float64
}

// thresholdTable shows, for each threshold, how many of the logs the model
// was asked about would be right: the model's answer at or above it,
// unknown below it.
func thresholdTable(docs []corpusDoc, gs []guess) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %7s %9s %15s\n", "threshold", "right", "answered", "unknown->device")
	for _, th := range []float64{0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.925, 0.95, 0.975, 0.99} {
		right, answered, unkErr, asked := 0, 0, 0, 0
		for i, g := range gs {
			if !g.asked {
				continue
			}
			asked++
			ans := string(CategoryUnknown)
			if g.p >= th && g.cat != ans {
				ans = g.cat
				answered++
			}
			if ans == docs[i].cat {
				right++
			}
			if docs[i].cat == string(CategoryUnknown) && ans != docs[i].cat {
				unkErr++
			}
		}
		fmt.Fprintf(&b, "%-9.3f %3d/%3d %9d %15d\n", th, right, asked, answered, unkErr)
	}
	return b.String()
}

// losoFolds gives every source its own fold, or, with LOSO_FOLDS=k, puts
// the sources into k folds by a hash of their name.
func losoFolds(docs []corpusDoc) (map[string]int, string) {
	fold := map[string]int{}
	k, _ := strconv.Atoi(os.Getenv("LOSO_FOLDS"))
	var names []string
	for _, d := range docs {
		if _, ok := fold[d.source]; !ok {
			fold[d.source] = len(names)
			names = append(names, d.source)
		}
	}
	if k <= 1 {
		return fold, fmt.Sprintf("leave-one-source-out (%d sources)", len(names))
	}
	for _, s := range names {
		h := fnv.New32a()
		h.Write([]byte(s))
		fold[s] = int(h.Sum32() % uint32(k))
	}
	return fold, fmt.Sprintf("%d folds grouped by source (%d sources; an estimate, not the reported figure)", k, len(names))
}

// runRequested reports whether -run names the test: the full
// leave-one-source-out run is too long for every `go test ./...`.
func runRequested(name string) bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.Contains(f.Value.String(), name)
}

func TestLOSO(t *testing.T) {
	if !runRequested("LOSO") {
		t.Skip("trains a model per source; run with: go test ./internal/explain -run LOSO -v")
	}
	docs := loadCorpus(t)
	fold, how := losoFolds(docs)
	opt := learn.DefaultOptions
	got, guesses, trained := crossValidate(docs, fold, opt)
	rulesOnly := make([]Explanation, len(docs))
	for i, d := range docs {
		rulesOnly[i] = classify(d.log, nil)
	}
	r := tally(docs, got)
	ro := tally(docs, rulesOnly)
	t.Logf("%s: %d models trained (one per fold holding a log no rule recognised)", how, trained)
	t.Logf("category accuracy %.1f%% (%d/%d); rules and catalogues alone %.1f%% (%d/%d)",
		r.pct(r.ok, r.n), r.ok, r.n, ro.pct(ro.ok, ro.n), ro.ok, ro.n)
	t.Logf("naturally sampled rounds (files 1000-1699): %.1f%% (%d/%d); rules alone %.1f%%",
		r.pct(r.sampledOK, r.sampled), r.sampledOK, r.sampled, ro.pct(ro.sampledOK, ro.sampled))
	t.Logf("unknown-labelled logs given a device category: %d of %d (%.1f%%); rules alone %d",
		r.unkAsErr, r.unk, r.pct(r.unkAsErr, r.unk), ro.unkAsErr)
	t.Logf("device accuracy %.1f%%", r.pct(r.devOK, r.n))
	for _, set := range []string{"train", "holdout"} {
		for _, sampled := range []bool{false, true} {
			n, ok := 0, 0
			for i, d := range docs {
				if d.set == set && sampledRound(d.file) == sampled {
					n++
					if string(got[i].Category) == d.cat {
						ok++
					}
				}
			}
			round := "rounds 1-17"
			if sampled {
				round = "sampled rounds"
			}
			t.Logf("  %-14s %-7s set: %.1f%% (%d/%d)", round, set, r.pct(ok, n), ok, n)
		}
	}
	t.Logf("decided by: %v", r.decided)
	t.Log("per category (recall: right / labelled; precision: right / answered)\n" + r.perCategory())
	t.Log("model answers by confidence (logs no rule recognised)\n" + r.calibration())
	t.Log("the threshold, read on the logs no rule recognised\n" + thresholdTable(docs, guesses))
	t.Log("confusion (rows: expected, columns: got)\n" + confusionTable(r.confusion))
	for i, d := range docs {
		if d.set == "train" && string(got[i].Category) != d.cat {
			t.Logf("train miss: %s: want %s, got %s by %s (%.2f) %q", d.file, d.cat, got[i].Category, got[i].DecidedBy, got[i].Confidence, first(got[i].Evidence))
		}
	}
	if acc := float64(r.ok) / float64(r.n); acc < minLOSO {
		t.Errorf("leave-one-source-out accuracy %.3f is below %.2f", acc, minLOSO)
	}
	if rate := float64(r.unkAsErr) / float64(max(r.unk, 1)); rate > maxUnknownAsError {
		t.Errorf("%.3f of unknown logs were given a device category, want at most %.2f", rate, maxUnknownAsError)
	}
}

// losoResult tallies one run.
type losoResult struct {
	n, ok, devOK, sampled, sampledOK, unk, unkAsErr int
	decided                                         map[DecidedBy]int
	byCat                                           map[string]*[3]int // labelled, answered, right
	confusion                                       map[string]map[string]int
	modelBins                                       [10][2]int // confidence decile: answered, right
}

func tally(docs []corpusDoc, got []Explanation) *losoResult {
	r := &losoResult{decided: map[DecidedBy]int{}, byCat: map[string]*[3]int{}, confusion: map[string]map[string]int{}}
	cell := func(c string) *[3]int {
		if r.byCat[c] == nil {
			r.byCat[c] = &[3]int{}
		}
		return r.byCat[c]
	}
	for i, d := range docs {
		e := got[i]
		g := string(e.Category)
		r.n++
		r.decided[e.DecidedBy]++
		cell(d.cat)[0]++
		cell(g)[1]++
		if r.confusion[d.cat] == nil {
			r.confusion[d.cat] = map[string]int{}
		}
		r.confusion[d.cat][g]++
		right := g == d.cat
		if right {
			r.ok++
			cell(g)[2]++
		}
		if string(e.Device) == d.dev {
			r.devOK++
		}
		if sampledRound(d.file) {
			r.sampled++
			if right {
				r.sampledOK++
			}
		}
		if d.cat == string(CategoryUnknown) {
			r.unk++
			if g != d.cat {
				r.unkAsErr++
			}
		}
		if e.DecidedBy == DecidedByModel {
			b := min(int(e.Confidence*10), 9)
			r.modelBins[b][0]++
			if right {
				r.modelBins[b][1]++
			}
		}
	}
	return r
}

func (r *losoResult) pct(a, n int) float64 { return 100 * float64(a) / float64(max(n, 1)) }

func (r *losoResult) perCategory() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %8s %8s %8s %9s\n", "category", "labelled", "recall", "answered", "precision")
	for _, c := range Categories() {
		x := r.byCat[string(c)]
		if x == nil {
			continue
		}
		fmt.Fprintf(&b, "%-24s %8d %7.1f%% %8d %8.1f%%\n", c, x[0], r.pct(x[2], x[0]), x[1], r.pct(x[2], x[1]))
	}
	return b.String()
}

func (r *losoResult) calibration() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %8s %6s\n", "confidence", "answered", "right")
	for i, x := range r.modelBins {
		if x[0] > 0 {
			fmt.Fprintf(&b, "%.1f-%.1f %11d %6d\n", float64(i)/10, float64(i+1)/10, x[0], x[1])
		}
	}
	return b.String()
}
