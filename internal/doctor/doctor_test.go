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
	ok := &Check{ID: "cpu.avx2", Run: func(context.Context, *Env) Finding { return Finding{Status: Pass, Msg: "pass"} }}
	panics := &Check{ID: "t.panic", Run: func(context.Context, *Env) Finding { panic("boom") }}
	hangs := &Check{ID: "t.hang", Run: func(ctx context.Context, _ *Env) Finding {
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

func TestRenderShowsWhatTheCatalogueLacks(t *testing.T) {
	c := &Check{ID: "t.unknown"}
	got := Render(Outcome{Check: c, Finding: Finding{Status: Warn, Msg: "no_such_key"}}, Polish)
	want := Result{ID: "t.unknown", Title: "t.unknown", Status: Warn, Detail: "no_such_key"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("an id and a key without messages (-want +got):\n%s", d)
	}
}

func TestRenderUsesTheCommonMessageAfterTheChecksOwn(t *testing.T) {
	c := Lookup("nvidia.ecc")
	got := Render(Outcome{Check: c, Finding: Finding{Status: Skip, Msg: "skip_no_nvml", Args: Args{"why": "no NVML source"}}}, English)
	if want := "no NVML answers (NVML not loaded, or a --sysroot tree without them): no NVML source"; got.Detail != want {
		t.Errorf("Detail = %q, want %q", got.Detail, want)
	}
	if got.Title != "No ECC errors, pending page retirement or row remaps" {
		t.Errorf("Title = %q", got.Title)
	}
}

func TestRenderDropsOptionalPartsWithEmptyValues(t *testing.T) {
	c := Lookup("env.visible_devices")
	f := Finding{Status: Warn, Msg: "hidden", Args: Args{"var": "CUDA_VISIBLE_DEVICES", "value": ""}}
	want := `CUDA_VISIBLE_DEVICES="" hides every GPU: frameworks fall back to the CPU`
	if got := Render(Outcome{Check: c, Finding: f}, English).Detail; got != want {
		t.Errorf("Detail = %q, want %q", got, want)
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
	if _, err := Select(all, []string{"env.xla", "b.nope", "a.nope"}); err == nil || err.Error() != `unknown check "a.nope"; unknown check "b.nope"` {
		t.Errorf("unknown ids: %v", err)
	}
	// A typo gets the check it most likely meant.
	if _, err := Select(all, []string{"nvidia.nvml_int"}); err == nil || err.Error() != `unknown check "nvidia.nvml_int": did you mean "nvidia.nvml_init"?` {
		t.Errorf("typo: %v", err)
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
		{"a language devctl lacks in LC_ALL means English, not LANG's", map[string]string{"LC_ALL": "de_DE.UTF-8", "LANG": "pl_PL.UTF-8"}, English},
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

func TestParseLang(t *testing.T) {
	tests := []struct {
		name, in string
		want     Lang
		err      string
	}{
		{"pl is Polish", "pl", Polish, ""},
		{"case and spaces do not matter", " EN ", English, ""},
		{"a locale names its language", "pl_PL.UTF-8", Polish, ""},
		{"a language devctl lacks is refused", "de", "", `invalid --lang "de": want en or pl`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLang(tt.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.err {
				t.Errorf("ParseLang(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.err)
			}
		})
	}
}
