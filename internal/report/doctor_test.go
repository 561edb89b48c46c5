package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/explain/i18n"
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
