package i18n

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRender(t *testing.T) {
	vars := map[string]string{"requested": "20.0 MiB", "free": "3.1 MiB", "total": "14.75 GiB"}
	tests := []struct {
		name, tmpl string
		vars       map[string]string
		want       string
	}{
		{"placeholders are filled from vars", "requested {requested} with {free} free of {total}", vars,
			"requested 20.0 MiB with 3.1 MiB free of 14.75 GiB"},
		{"an optional part with every value is kept without its brackets", "No memory[[ (requested {requested})]].", vars,
			"No memory (requested 20.0 MiB)."},
		{"an optional part with a missing value is dropped", "No memory[[ (requested {requested}, reserved {reserved})]].", vars,
			"No memory."},
		{"nested optional parts keep what they can", "X[[ ({requested}[[ on GPU {device_index}]])]].", vars,
			"X (20.0 MiB)."},
		{"a missing value outside an optional part renders as a question mark", "driver {driver_version}", vars,
			"driver ?"},
		{"text that only looks like a placeholder is left alone", `set {"a": 1} and {Not_A_Name}`, vars,
			`set {"a": 1} and {Not_A_Name}`},
		{"unbalanced brackets are kept as text", "a [[ b {free}", vars, "a [[ b 3.1 MiB"},
		{"unbalanced braces are kept as text", "a {free", vars, "a {free"},
		{"nil vars drop optional parts", "a[[ {free}]]b", nil, "ab"},
		{"an empty template renders empty", "", vars, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Render(tt.tmpl, tt.vars)); diff != "" {
				t.Errorf("Render(%q) (-want +got):\n%s", tt.tmpl, diff)
			}
		})
	}
}

func TestCatalogLookupFallsBack(t *testing.T) {
	c := New()
	c.MustAdd("en", Message{ID: "oom", Title: "Out of memory", Fixes: []string{"reduce batch"}},
		Message{ID: "oom.mps", Title: "MPS out of memory"},
		Message{ID: "only.en", Title: "English only"})
	c.MustAdd("pl", Message{ID: "oom", Title: "Brak pamięci"})
	tests := []struct {
		name, id, lang string
		want           string
		ok             bool
	}{
		{"the asked language wins", "oom", "pl", "Brak pamięci", true},
		{"a POSIX locale is understood", "oom", "pl_PL.UTF-8", "Brak pamięci", true},
		{"a missing translation falls back to English", "only.en", "pl", "English only", true},
		{"a sub-id in English wins over its parent in Polish", "oom.mps", "pl", "MPS out of memory", true},
		{"an unknown sub-id falls back to its parent", "oom.rocm", "pl", "Brak pamięci", true},
		{"an unknown language gives English", "oom", "de", "Out of memory", true},
		{"an unknown id is not found", "nope", "en", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := c.Lookup(tt.id, tt.lang)
			if ok != tt.ok || m.Title != tt.want {
				t.Errorf("Lookup(%q, %q) = %q, %v; want %q, %v", tt.id, tt.lang, m.Title, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCatalogLookupReturnsACopy(t *testing.T) {
	c := New().MustAdd("en", Message{ID: "a", Title: "A", Fixes: []string{"one"}})
	m, _ := c.Lookup("a", "en")
	m.Fixes[0] = "changed"
	again, _ := c.Lookup("a", "en")
	if again.Fixes[0] != "one" {
		t.Errorf("changing a looked-up message changed the catalogue: %q", again.Fixes[0])
	}
}

func TestCatalogAddRejectsBadMessages(t *testing.T) {
	tests := []struct {
		name string
		lang string
		msgs []Message
	}{
		{"an empty id", "en", []Message{{Title: "x"}}},
		{"an empty title", "en", []Message{{ID: "x"}}},
		{"an empty language", "", []Message{{ID: "x", Title: "x"}}},
		{"a duplicate id", "en", []Message{{ID: "x", Title: "x"}, {ID: "x", Title: "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := New().Add(tt.lang, tt.msgs...); !errors.Is(err, ErrInvalid) {
				t.Errorf("Add = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestCatalogListsIDsAndLanguages(t *testing.T) {
	c := New().MustAdd("en", Message{ID: "b", Title: "B"}, Message{ID: "a", Title: "A"}).
		MustAdd("pl", Message{ID: "a", Title: "A"})
	if diff := cmp.Diff([]string{"a", "b"}, c.IDs("en")); diff != "" {
		t.Errorf("IDs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"en", "pl"}, c.Languages()); diff != "" {
		t.Errorf("Languages (-want +got):\n%s", diff)
	}
}

func TestNegotiate(t *testing.T) {
	supported := []string{"en", "pl"}
	tests := []struct {
		name       string
		candidates []string
		want       string
	}{
		{"the --lang flag wins", []string{"pl", "en_US.UTF-8"}, "pl"},
		{"an empty flag falls through to LANG", []string{"", "pl_PL.UTF-8"}, "pl"},
		{"an unsupported language falls through", []string{"de_DE.UTF-8", "pl"}, "pl"},
		{"the C locale means English", []string{"C"}, "en"},
		{"nothing set means English", nil, "en"},
		{"a locale with a modifier is understood", []string{"pl_PL@euro"}, "pl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Negotiate(supported, tt.candidates...); got != tt.want {
				t.Errorf("Negotiate(%q) = %q, want %q", tt.candidates, got, tt.want)
			}
		})
	}
}

func TestMessageRenderFillsEveryField(t *testing.T) {
	m := Message{ID: "x", Title: "T {a}", Explanation: "E[[ {a}]][[ {b}]]", Fixes: []string{"F {a}"}}
	got := m.Render(map[string]string{"a": "1"})
	want := Message{ID: "x", Title: "T 1", Explanation: "E 1", Fixes: []string{"F 1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"a {b} [[ {c} ]]", "[[[[{{}}]]", "{", "[[", "]]{x}[[", "{a}{b}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		_ = Render(tmpl, map[string]string{"a": "1", "b": ""})
	})
}

func TestCatalogAcceptsADetailWithoutATitle(t *testing.T) {
	c := New()
	if err := c.Add("en", Message{ID: "check.fail", Detail: "{node} is missing", Fixes: []string{"create {node}"}}); err != nil {
		t.Fatalf("Add = %v, want a detail-only message accepted", err)
	}
	m, ok := c.Lookup("check.fail", "pl")
	if !ok {
		t.Fatal("a detail-only message is not found")
	}
	want := Message{ID: "check.fail", Detail: "/dev/kfd is missing", Fixes: []string{"create /dev/kfd"}}
	if diff := cmp.Diff(want, m.Render(map[string]string{"node": "/dev/kfd"})); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
}

func TestMissing(t *testing.T) {
	tests := []struct {
		name, tmpl string
		vars       map[string]string
		want       []string
	}{
		{"every value given leaves nothing missing", "{a} and {b}", map[string]string{"a": "1", "b": "2"}, nil},
		{"a value not given is missing", "{a} and {b}", map[string]string{"a": "1"}, []string{"b"}},
		{"an empty value is missing", "{a}", map[string]string{"a": ""}, []string{"a"}},
		{"a name is listed once, in order of use", "{b} {a} {b}", nil, []string{"b", "a"}},
		{"a missing value inside an optional part is not missing", "x[[ {a}]]", nil, nil},
		{"a missing value around a kept part is still missing", "{b}[[ {a}]]", map[string]string{"a": "1"}, []string{"b"}},
		{"text that only looks like a placeholder is not one", `{"a": 1} {Not}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Missing(tt.tmpl, tt.vars)); diff != "" {
				t.Errorf("Missing(%q) (-want +got):\n%s", tt.tmpl, diff)
			}
		})
	}
}

func TestPlaceholders(t *testing.T) {
	tests := []struct {
		name, tmpl string
		want       []string
	}{
		{"names are sorted and listed once", "{b} {a} {b}", []string{"a", "b"}},
		{"names in optional parts count, nested or not", "x[[ {c}[[ {d}]]]] {a}", []string{"a", "c", "d"}},
		{"JSON-looking text is not a name", `set {"a": 1} and {Not_A_Name}`, nil},
		{"a template without names has none", "plain text", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Placeholders(tt.tmpl)); diff != "" {
				t.Errorf("Placeholders(%q) (-want +got):\n%s", tt.tmpl, diff)
			}
		})
	}
}

func TestLocale(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"nothing set gives nothing", nil, ""},
		{"LANG alone decides", map[string]string{"LANG": "pl_PL.UTF-8"}, "pl_PL.UTF-8"},
		{"LC_MESSAGES wins over LANG", map[string]string{"LC_MESSAGES": "pl_PL", "LANG": "en_US.UTF-8"}, "pl_PL"},
		{"LC_ALL wins over both", map[string]string{"LC_ALL": "C.UTF-8", "LC_MESSAGES": "pl_PL", "LANG": "pl_PL"}, "C.UTF-8"},
		{"an empty LC_ALL is skipped", map[string]string{"LC_ALL": "", "LANG": "pl"}, "pl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Locale(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if got != tt.want {
				t.Errorf("Locale = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLocaleThenNegotiateKeepsPOSIXPrecedence(t *testing.T) {
	env := map[string]string{"LC_ALL": "de_DE.UTF-8", "LANG": "pl_PL.UTF-8"}
	got := Negotiate([]string{"en", "pl"}, Locale(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	if got != English {
		t.Errorf("a German LC_ALL over a Polish LANG gave %q, want English (LC_ALL decides)", got)
	}
}

func FuzzMissing(f *testing.F) {
	for _, s := range []string{"a {b} [[ {c} ]]", "[[[[{{}}]]", "{", "{a}{b}[[{c}]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		vars := map[string]string{"a": "1"}
		out := Render(tmpl, vars)
		if len(Missing(tmpl, vars)) > strings.Count(out, "?") {
			t.Errorf("Missing names more placeholders than Render shows as ?: %q -> %q", tmpl, out)
		}
		_ = Placeholders(tmpl)
	})
}
