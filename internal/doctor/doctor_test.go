package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
)

func testEnv() *Env {
	return &Env{Host: &host.Host{OS: "linux", Arch: "amd64", FS: host.DirFS("/nonexistent-devctl-test"), Env: host.MapEnv{}, Sysctl: host.NoSysctl{}}}
}

func TestRunIsolatesBrokenChecks(t *testing.T) {
	ok := &Check{ID: "t.ok", Title: Text{EN: "ok"}, Messages: map[string]Message{"pass": {Detail: Text{EN: "fine"}}},
		Run: func(context.Context, *Env) Finding { return Finding{Status: Pass, Msg: "pass"} }}
	panics := &Check{ID: "t.panic", Title: Text{EN: "panics"}, Run: func(context.Context, *Env) Finding { panic("boom") }}
	hangs := &Check{ID: "t.hang", Title: Text{EN: "hangs"}, Run: func(ctx context.Context, _ *Env) Finding {
		time.Sleep(time.Hour) // ignores ctx on purpose: the runner must not wait
		return Finding{}
	}}
	start := time.Now()
	out := RenderAll(Run(context.Background(), []*Check{panics, hangs, ok}, testEnv(), Options{Timeout: 50 * time.Millisecond}), English)
	if time.Since(start) > 2*time.Second {
		t.Fatalf("a hanging check held the run for %s", time.Since(start))
	}
	got := []Status{out[0].Status, out[1].Status, out[2].Status}
	if d := cmp.Diff([]Status{Error, Timeout, Pass}, got); d != "" {
		t.Errorf("statuses (-want +got):\n%s", d)
	}
	if !strings.Contains(out[0].Detail, "check panicked: boom") || out[0].Fix == "" {
		t.Errorf("panic not reported with a fix: %+v", out[0])
	}
	if !Failed(out, false) {
		t.Error("a broken check must count as failed")
	}
}

func TestCatalogueIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All() {
		if seen[c.ID] {
			t.Errorf("duplicate id %s", c.ID)
		}
		seen[c.ID] = true
		if c.Title.EN == "" || c.Title.PL == "" {
			t.Errorf("%s: title needs English and Polish", c.ID)
		}
		for key, m := range c.Messages {
			if m.Detail.EN == "" || m.Detail.PL == "" {
				t.Errorf("%s/%s: detail needs English and Polish", c.ID, key)
			}
			if (m.Fix.EN == "") != (m.Fix.PL == "") {
				t.Errorf("%s/%s: fix must exist in both languages or neither", c.ID, key)
			}
			if d := cmp.Diff(placeholders(m.Detail.EN), placeholders(m.Detail.PL)); d != "" {
				t.Errorf("%s/%s: Polish detail names other placeholders (-en +pl):\n%s", c.ID, key, d)
			}
			if d := cmp.Diff(placeholders(m.Fix.EN), placeholders(m.Fix.PL)); d != "" {
				t.Errorf("%s/%s: Polish fix names other placeholders (-en +pl):\n%s", c.ID, key, d)
			}
		}
	}
	for key, m := range common {
		if m.Detail.EN == "" || m.Detail.PL == "" {
			t.Errorf("common/%s: detail needs both languages", key)
		}
	}
}

func TestSelect(t *testing.T) {
	all := All()
	got, err := Select(all, []string{"env.xla", " cpu.avx2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "cpu.avx2" || got[1].ID != "env.xla" {
		t.Errorf("Select kept registry order? got %v", []string{got[0].ID, got[1].ID})
	}
	if _, err := Select(all, []string{"env.xla", "b.nope", "a.nope"}); err == nil || err.Error() != `unknown check "a.nope", "b.nope"` {
		t.Errorf("unknown ids: %v", err)
	}
}

func TestDetectLang(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Lang
	}{
		{"no locale is English", nil, English},
		{"a Polish LANG is Polish", map[string]string{"LANG": "pl_PL.UTF-8"}, Polish},
		{"LC_ALL wins over a Polish LANG", map[string]string{"LC_ALL": "C.UTF-8", "LANG": "pl_PL.UTF-8"}, English},
		{"LC_MESSAGES wins over LANG", map[string]string{"LC_MESSAGES": "pl_PL", "LANG": "en_US.UTF-8"}, Polish},
		{"an empty LC_ALL is skipped", map[string]string{"LC_ALL": "", "LANG": "pl"}, Polish},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DetectLang(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if got != tt.want {
				t.Errorf("DetectLang = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	if got := Expand("driver {v} on {gpu}, {missing}", Args{"v": "550", "gpu": "GPU 0"}); got != "driver 550 on GPU 0, {missing}" {
		t.Errorf("Expand = %q", got)
	}
	if got := Expand("unclosed {v", Args{"v": "x"}); got != "unclosed {v" {
		t.Errorf("Expand = %q", got)
	}
}
