package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/explain/i18n"
	"github.com/devctl/devctl/internal/report"
)

func TestDoctorLabelsExistInBothLanguages(t *testing.T) {
	cat := doctorLabels()
	if d := cmp.Diff(cat.IDs(i18n.English), cat.IDs(i18n.Polish)); d != "" {
		t.Errorf("label ids differ between English and Polish (-en +pl):\n%s", d)
	}
	for _, s := range doctor.StatusOrder {
		for _, lang := range doctor.Langs {
			if m, ok := cat.Lookup("status."+string(s), string(lang)); !ok || m.ID != "status."+string(s) {
				t.Errorf("status %s has no %s heading", s, lang)
			}
		}
	}
}

func TestDoctorLabelFollowsTheLanguage(t *testing.T) {
	tests := []struct {
		name, id string
		lang     doctor.Lang
		want     string
	}{
		{"an English heading", "status.fail", doctor.English, "Failed"},
		{"a Polish heading", "status.fail", doctor.Polish, "Błędy"},
		{"a Polish fix label", "fix", doctor.Polish, "naprawa:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := label(tt.id, tt.lang); got != tt.want {
				t.Errorf("label(%q, %s) = %q, want %q", tt.id, tt.lang, got, tt.want)
			}
		})
	}
}

func TestDoctorLogTableNeutralisesEscapeSequences(t *testing.T) {
	// A log line carrying an OSC 52 clipboard write, a title change and a
	// screen clear, as `doctor --log` once printed raw.
	evil := "RuntimeError: CUDA out of memory.\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b[2J\u202e"
	op := "ad\x1bd\x9b31m"
	r := &doctor.Report{Log: &doctor.LogReport{
		Category: "out_of_memory", Device: "cuda", Title: "Out of memory", Explanation: "x\x1b[31m",
		Evidence: []string{evil, "second\rline"}, Line: 7,
		Numbers: explain.Numbers{Operator: &op}, Fixes: []string{"fix\x1b[0m"}, Machine: []string{"m\x07"},
	}}
	var b bytes.Buffer
	if err := Table(&b, r, report.NewStyle(&b, false)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"\x1b", "\x07", "\r", "\u202e", "\u009b"} {
		if strings.Contains(b.String(), c) {
			t.Errorf("output holds control character %q:\n%q", c, b.String())
		}
	}
	if !strings.Contains(b.String(), "7> RuntimeError: CUDA out of memory.?]52;c;cm0gLXJmIH4=??]0;pwned??[2J?") {
		t.Errorf("evidence not shown with ? for control characters:\n%s", b.String())
	}
}

// Folded, the skipped checks are one line with their count (singular for
// one); the failing ones keep their full entries.
func TestDoctorTableFoldsSkippedChecks(t *testing.T) {
	skip := doctor.Result{ID: "nvidia.ecc", Title: "No ECC errors", Status: doctor.Skip, Detail: "no NVIDIA GPU"}
	fail := doctor.Result{ID: "host.shm_size", Title: "/dev/shm", Status: doctor.Fail, Detail: "64 MiB", Fix: "raise it"}
	render := func(rs []doctor.Result, o TableOptions) string {
		r := &doctor.Report{Lang: doctor.English, Checks: rs, Summary: map[doctor.Status]int{}}
		for _, c := range rs {
			r.Summary[c.Status]++
		}
		var b bytes.Buffer
		if err := TableWith(&b, r, report.NewStyle(&b, false), o); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := render([]doctor.Result{fail, skip, skip}, TableOptions{FoldSkips: true})
	if !strings.Contains(out, "\n2 checks skipped (not applicable here); -v to list them\n") || strings.Contains(out, "SKIP") || !strings.Contains(out, "fix: raise it") {
		t.Errorf("folded:\n%s", out)
	}
	if out := render([]doctor.Result{skip}, TableOptions{FoldSkips: true}); !strings.Contains(out, "1 check skipped (not applicable here); -v to list it") {
		t.Errorf("one folded:\n%s", out)
	}
	if out := render([]doctor.Result{fail, skip}, TableOptions{}); !strings.Contains(out, "SKIP    nvidia.ecc") {
		t.Errorf("unfolded:\n%s", out)
	}
}
