package doctor

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/explain/i18n"
)

// Every member of a sameFix group names a fix that exists, in both
// languages: a renamed finding or a reordered explanation would otherwise
// silently stop de-duplicating.
func TestSameFixNamesRealFixes(t *testing.T) {
	en, pl := byID(messagesEN), byID(messagesPL)
	cat := explain.NewCatalog()
	for _, g := range sameFix {
		general := false
		for _, id := range g {
			if !strings.Contains(id, "#") && general {
				t.Errorf("%v: a check's finding after an explanation's fix: list the checks first", g)
			}
			if msg, i, ok := strings.Cut(id, "#"); ok {
				general = true
				n, err := strconv.Atoi(i)
				if err != nil {
					t.Errorf("%s: bad fix index", id)
					continue
				}
				for _, lang := range []string{i18n.English, i18n.Polish} {
					m, found := cat.Lookup(msg, lang)
					if !found || m.ID != msg || n >= len(m.Fixes) {
						t.Errorf("%s: no fix %d in the %s explanation %q", id, n, lang, msg)
					}
				}
				continue
			}
			for lang, msgs := range map[string]map[string]i18n.Message{"English": en, "Polish": pl} {
				if m, found := msgs[id]; !found || len(m.Fixes) != 1 {
					t.Errorf("%s: no %s finding with a fix", id, lang)
				}
			}
		}
	}
}

// A log explained on a machine whose checks found the same cause lists
// each action once: the checks' own fix first, then what they do not say.
func TestLogReportListsEachFixOnce(t *testing.T) {
	exp := explain.Explanation{Category: explain.CategoryCUDADriverMismatch, MessageID: "cuda_driver_mismatch.nvml"}
	m := exp.Message(explain.NewCatalog(), "en")
	results := []Result{
		{ID: "nvidia.nvml_init", Status: Fail, Fix: "reboot so the kernel module matches the upgraded libraries: `sudo reboot` (see nvidia.version_match)", FixID: "nvidia.nvml_init.LIB_RM_VERSION_MISMATCH"},
		{ID: "nvidia.version_match", Status: Fail, Fix: "reboot to load the new module", FixID: "nvidia.version_match.mismatch"},
		{ID: "cuda.framework_runtime", Status: Skip},
	}
	lr := BuildLogReport(context.Background(), exp, LogMessage{ID: m.ID, Title: m.Title, Explanation: m.Explanation, Fixes: m.Fixes}, nil, results, English)
	want := []string{"reboot to load the new module", m.Fixes[2]}
	if diff := cmp.Diff(want, lr.Fixes); diff != "" {
		t.Errorf("fixes (-want +got)\n%s", diff)
	}

	// Without checks, the explanation's own fixes are all there.
	lr = BuildLogReport(context.Background(), exp, LogMessage{ID: m.ID, Fixes: m.Fixes}, nil, nil, English)
	if diff := cmp.Diff(m.Fixes, lr.Fixes); diff != "" {
		t.Errorf("fixes without checks (-want +got)\n%s", diff)
	}
}

// Once the related checks ran, "devctl doctor" as a fix says nothing new.
func TestLogReportDropsRunDoctorOnceChecksRan(t *testing.T) {
	fixes := []string{"Upgrade the driver.", "devctl doctor   # compares the driver's CUDA"}
	lr := BuildLogReport(context.Background(), explain.Explanation{}, LogMessage{ID: "x", Fixes: fixes}, nil, []Result{{ID: "nvidia.nvml_init", Status: Pass}}, English)
	if diff := cmp.Diff([]string{"Upgrade the driver."}, lr.Fixes); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
