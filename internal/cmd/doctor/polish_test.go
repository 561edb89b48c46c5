package doctor

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/explain/i18n"
	"github.com/devctl/devctl/internal/report"
)

// englishWords are words that appear in devctl's English texts and never
// in Polish prose. Commands, paths, variables, quoted errors and values a
// user types (true, false) are cut out before the check (see prose).
var englishWords = regexp.MustCompile(`(?i)\b(the|and|of|is|are|was|were|not|none|set|pass|passed|skip|skipped|fail|failed|failure|warn|warning|warnings|want|default|device|devices|here|found|with|without|for|this|that|these|runs|last|seen|category|requested|total|free|reserved|allocated|driver|error|errors|code|index|summary|fix|fixes|evidence|numbers|machine|order|fits|params|unknown|process|processes|hold|holds|supports|ships|present|version|check|checks|link|links|width|memory|out|recorded|yet|history|success|successful|mode|precision|recompute|sharding|offload|timed|broke|your|you|run|when|than|more|less|only)\b`)

// codeSpans are parts of a text that stay untranslated on purpose.
var codeSpans = []*regexp.Regexp{
	regexp.MustCompile("`[^`]*`"),                       // commands in backticks
	regexp.MustCompile(`"[^"]*"`),                       // quoted error text and values
	regexp.MustCompile(`'[^']*'`),                       // quoted values
	regexp.MustCompile(`„[^”]*”|“[^”]*”`),               // Polish-quoted error text
	regexp.MustCompile(`\S*\w-\w\S*`),                   // hyphenated terms (device-side, peer-to-peer)
	regexp.MustCompile(`\S*[_/=.:$<>{}\[\]|@~\\]\S*`),   // paths, variables, flags, versions, placeholders
	regexp.MustCompile(`(^|[\s(])--?\w[\w-]*(\s+\w+)?`), // flags and their value
	regexp.MustCompile(`\b[A-Z][A-Z0-9]{1,}\b`),         // acronyms and constants (CUDA, NCCL, OOM)
	regexp.MustCompile(`\b(true|false)\b`),              // values a user types
}

// prose is what a Polish reader reads as language in s: for a fix that is
// a command followed by "# comment", only the comment.
func prose(s string) string {
	if i := strings.Index(s, "   #"); i >= 0 {
		s = s[i+4:]
	}
	for _, re := range codeSpans {
		s = re.ReplaceAllString(s, " ")
	}
	return s
}

func checkPolish(t *testing.T, where, text string) {
	t.Helper()
	if w := englishWords.FindAllString(prose(text), -1); len(w) > 0 {
		t.Errorf("%s: English %q in Polish text %q", where, w, text)
	}
}

// fill gives every placeholder of a template a neutral value.
var placeholder = regexp.MustCompile(`\{(\w+)\}`)

func fill(m i18n.Message) map[string]string {
	v := map[string]string{}
	for _, s := range append([]string{m.Title, m.Explanation, m.Detail}, m.Fixes...) {
		for _, p := range placeholder.FindAllStringSubmatch(s, -1) {
			v[p[1]] = "7"
		}
	}
	return v
}

// TestPolishHasNoEnglish renders every catalogued message (checks,
// machine facts, placeholder values, log explanations) and every table
// label and header in Polish, and fails on English words.
func TestPolishHasNoEnglish(t *testing.T) {
	for name, cat := range map[string]*i18n.Catalog{"doctor": doctor.Catalog(), "explain": explain.NewCatalog(), "labels": doctorLabels()} {
		ids := cat.IDs(i18n.Polish)
		if len(ids) < len(cat.IDs(i18n.English)) {
			t.Errorf("%s: %d Polish messages for %d English ones", name, len(ids), len(cat.IDs(i18n.English)))
		}
		for _, id := range cat.IDs(i18n.English) {
			m, ok := cat.Lookup(id, i18n.Polish)
			if !ok || m.ID != id {
				t.Errorf("%s %s: no Polish text", name, id)
				continue
			}
			r := m.Render(fill(m))
			checkPolish(t, name+" "+id+" title", r.Title)
			checkPolish(t, name+" "+id+" explanation", r.Explanation)
			checkPolish(t, name+" "+id+" detail", r.Detail)
			for _, f := range r.Fixes {
				checkPolish(t, name+" "+id+" fix", f)
			}
		}
	}

	// The tables as printed: every status group, the summary, a log
	// explanation with every number and an OOM plan, and the history.
	var checks []doctor.Result
	for _, s := range doctor.StatusOrder {
		checks = append(checks, doctor.Result{ID: "x.y", Title: "tytuł", Status: s, Detail: "szczegół", Fix: "naprawa"})
	}
	i64 := func(v int64) *int64 { return &v }
	one, s := 1, "x"
	rep := &doctor.Report{Lang: doctor.Polish, Checks: checks, Summary: doctor.Counts(checks),
		Log: &doctor.LogReport{Category: "out_of_memory", Device: "cuda", Title: "tytuł", Explanation: "wyjaśnienie", Evidence: []string{"dowód"},
			Numbers: explain.Numbers{RequestedBytes: i64(1), TotalBytes: i64(1), FreeBytes: i64(1), ReservedBytes: i64(1), AllocatedBytes: i64(1), OtherBytes: i64(1),
				DeviceIndex: &one, DriverVersion: &s, DriverCUDAVersion: &s, RuntimeVersion: &s, ErrorCode: &one, Operator: &s, DType: &s, Devices: []string{"cuda:0"}},
			Machine: []string{"fakt"}, Fixes: []string{"naprawa"},
			OOMPlan: &doctor.OOMPlan{ModelParams: 7e9, Device: "cuda:0", Fits: true}}}
	var b bytes.Buffer
	if err := Table(&b, rep, report.NewStyle(&b, false)); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		checkPolish(t, "doctor table", strings.ReplaceAll(line, "devctl doctor", ""))
	}
	b.Reset()
	if err := ListTable(&b, []doctor.CheckInfo{{ID: "x.y", Title: "tytuł"}}, doctor.Polish); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(b.String(), "\n")
	checkPolish(t, "list header", head)
	checkPolish(t, "record success", recordedSuccess("cuda", doctor.Polish))
}
