package probe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/jsonenc/gen"
	"github.com/devctl/devctl/internal/output"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/drivers"
)

var update = flag.Bool("update", false, "rewrite report_json.go from the Go types (make schemas)")

// The generated encoder is what internal/jsonenc/gen writes for Report
// today: a field added to a report type without `make schemas` fails here.
func TestReportEncoderUpToDate(t *testing.T) {
	src, err := gen.Generate("probe", reflect.TypeFor[probe.Report]())
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("report_json.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile("report_json.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, src) {
		t.Error("internal/probe/report_json.go is out of date: run make schemas")
	}
}

// encodingJSON is what the report encodes to through encoding/json, the
// reference: HTML escaping off, as internal/output writes JSON.
func encodingJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func sameAsEncodingJSON(t *testing.T, name string, rep *probe.Report) {
	t.Helper()
	got, err := rep.AppendJSON(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if want := encodingJSON(t, rep); !bytes.Equal(got, want) {
		t.Fatalf("%s: AppendJSON and encoding/json differ:\n got %s\nwant %s", name, got, want)
	}
}

// Every real machine tree in testdata, probed as `devctl probe --sysroot`
// would: the generated encoder writes encoding/json's bytes.
func TestAppendJSONOnRealTrees(t *testing.T) {
	var dirs []string
	for _, glob := range []string{"../../testdata/hosts/*", "../../testdata/accel/*", "../../testdata/software/*"} {
		m, _ := filepath.Glob(glob)
		for _, d := range m {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("found %d machine trees, want the testdata ones", len(dirs))
	}
	for _, d := range dirs {
		h, err := host.Local(host.LocalOptions{Sysroot: d})
		if err != nil {
			t.Fatal(err)
		}
		// The software trees' environments, as a user would have them
		// active, so that their reports carry a software section.
		env := host.MapEnv{"PATH": "/usr/bin:/bin"}
		if envs, _ := filepath.Glob(filepath.Join(d, "home/u/*/envs/*")); len(envs) > 0 {
			env["CONDA_PREFIX"] = "/" + filepath.ToSlash(must(filepath.Rel(d, envs[0])))
		} else if _, err := os.Stat(filepath.Join(d, "home/u/venv")); err == nil {
			env["VIRTUAL_ENV"] = "/home/u/venv"
		}
		h.Env = env
		rep, _, err := probe.Run(context.Background(), h, drivers.All(), probe.Options{Sweep: drivers.Unanswered, FallbackEnabled: true, DevctlVersion: "test"})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if strings.Contains(d, "software") && (rep.Software == nil || len(rep.Software.Environments) == 0) {
			t.Errorf("%s: no Python environment found: the tree no longer exercises the software section", d)
		}
		sameAsEncodingJSON(t, d, rep)
		// What -o json prints: the generated encoder, indented.
		var got, want bytes.Buffer
		if err := output.WriteJSON(&got, rep); err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%s: -o json output differs from encoding/json's:\n%s\n%s", d, got.Bytes(), want.Bytes())
		}
	}
}

// Random reports, with the strings and numbers that encoders get wrong:
// invalid UTF-8, control characters, HTML, U+2028, tiny and huge floats.
func TestAppendJSONOnRandomReports(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		var rep probe.Report
		fill(r, reflect.ValueOf(&rep).Elem(), 0)
		sameAsEncodingJSON(t, "random report", &rep)
	}
}

func TestAppendJSONRefusesWhatEncodingJSONRefuses(t *testing.T) {
	rep := probe.Report{Summary: probe.Summary{MemoryFraction: math.NaN()}}
	if _, err := rep.AppendJSON(nil); err == nil {
		t.Error("NaN encoded")
	}
}

var strs = []string{"", "a", "cuda:0", "<&>", "\"quoted\"\\", "tab\there\nnl", "\x00\x1f\x7f", "\xff\xfe bad utf-8", "\u2028\u2029", "zażółć", "日本語", "emoji 🚀"}

func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(strs[r.IntN(len(strs))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt([]int64{0, 1, -1, 42, math.MaxInt32, math.MinInt64}[r.IntN(6)])
	case reflect.Float64:
		v.SetFloat([]float64{0, 0.75, -1.5, 1e-7, 123456789.125, 1e21, 5e-324, 1e300, 0.1}[r.IntN(9)])
	case reflect.Pointer:
		if r.IntN(3) == 0 || depth > 4 {
			return // nil
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem(), depth+1)
	case reflect.Slice:
		switch r.IntN(3) {
		case 0:
			return // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + r.IntN(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := 0; i < n; i++ {
				fill(r, v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		if r.IntN(2) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for i := 0; i < r.IntN(4); i++ {
			vals := []any{1, "x<y", 2.5, true, nil, []string{"a"}, map[string]any{"k": 1}}
			m.SetMapIndex(reflect.ValueOf(strs[r.IntN(len(strs))]), reflect.ValueOf(&vals[r.IntN(len(vals))]).Elem())
		}
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(r, v.Field(i), depth+1)
			}
		}
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
