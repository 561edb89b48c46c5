package gate

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
)

func loadReport(t *testing.T, name string) *probe.Report {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var r probe.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"a bare boolean field has no operator", "summary.supports_bf16", "summary.supports_bf16"},
		{"spaces around the operator are dropped", "gpu_count >= 8", "gpu_count>=8"},
		{"a single = is read as ==", "backend=cuda", "backend==cuda"},
		{"a filter selects list elements", "devices[backend=cuda].pcie_link.width_current==16", "devices[backend=cuda].pcie_link.width_current==16"},
		{"several filters and != filters", "devices[backend == cuda, id!=cuda:0].name", "devices[backend=cuda,id!=cuda:0].name"},
		{"a quoted value keeps its spaces", `devices[name="NVIDIA H100 PCIe"].supports_fp8`, `devices[name="NVIDIA H100 PCIe"].supports_fp8`},
		{"versions are bare values", "cuda_version>=12.1", "cuda_version>=12.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		pos       int
		msg       string
	}{
		{"an empty requirement", "", 0, "empty requirement"},
		{"an operator without a value", "gpu_count>=", 11, "missing value"},
		{"an unknown operator", "gpu_count=>8", 10, `unexpected ">"; want a value`},
		{"a field name that starts with a digit", "8>=gpu_count", 0, "want a field name"},
		{"an unclosed filter", "devices[backend=cuda", 20, "missing ]"},
		{"a filter without a value", "devices[backend].name", 15, "want = or !="},
		{"an unterminated quote", `backend=="cuda`, 9, "unterminated quoted value"},
		{"two requirements in one", "gpu_count>=8 memory_gb>=70", 13, "one requirement per --require"},
		{"a trailing dot", "summary.", 8, "missing field name"},
		{"a control character", "gpu_count>=\x01", 11, "want a value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.src)
			se, ok := err.(*SyntaxError)
			if !ok {
				t.Fatalf("got %v, want a *SyntaxError", err)
			}
			if se.Pos != tc.pos || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("got %q at %d, want %q at %d", se.Msg, se.Pos, tc.msg, tc.pos)
			}
		})
	}
}

func TestCaret(t *testing.T) {
	_, err := Parse("gpu_count=>8")
	got := err.(*SyntaxError).Caret("  ")
	want := "  gpu_count=>8\n            ^"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBindErrors(t *testing.T) {
	tests := []struct {
		name, src string
		pos       int
		msg       string
	}{
		{"a misspelt field names the one meant and the ones that exist", "gpu_cout>=8", 0, `unknown field "gpu_cout" (did you mean "gpu_count"?); want a field of the report`},
		{"a misspelt nested field", "devices[backend=cuda].pcie_link.width>=16", 32, `unknown field "width" (did you mean "width_current"?)`},
		{"a misspelt filter field", "devices[backnd=cuda].name", 8, `unknown field "backnd" (did you mean "backend"?) in the filter`},
		{"a field far from every name gets no guess", "summary.qqqqqq", 8, `unknown field "qqqqqq"; want one of`},
		{"a filter on something that is not a list", "summary[backend=cuda].gpu_count", 0, "not a list"},
		{"a word compared with a number field", "gpu_count>=eight", 11, "want a number"},
		{"a boolean compared by order", "summary.supports_bf16>=true", 23, "compare it with =="},
		{"a non-boolean value for a boolean", "summary.supports_bf16==yes", 23, "want true or false"},
		{"a string ordered against a word", "cuda_version>=latest", 14, "want a version"},
		{"an object compared with a value", "summary==1", 9, "is an object"},
		{"a list compared with a value", "devices>=2", 9, "is a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			err = r.Bind(reflectReport)
			se, ok := err.(*SyntaxError)
			if !ok {
				t.Fatalf("got %v, want a *SyntaxError", err)
			}
			if se.Pos != tc.pos || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("got %q at %d, want %q at %d", se.Msg, se.Pos, tc.msg, tc.pos)
			}
		})
	}
}

func TestCheckAll(t *testing.T) {
	h100 := loadReport(t, "nvidia-h100-pcie-x2.json")
	tpu := loadReport(t, "tpu-v6e-8.json")
	tests := []struct {
		name    string
		report  *probe.Report
		src     string
		met     bool
		reasons []string
	}{
		{"two H100s are fewer than eight GPUs", h100, "gpu_count>=8", false, []string{"summary.gpu_count is 2"}},
		{"two H100s meet two GPUs", h100, "gpu_count>=2", true, nil},
		{"an H100 supports bf16", h100, "summary.supports_bf16", true, nil},
		{"the backend compares without case", h100, "backend==CUDA", true, nil},
		{"80 GB meets 70 GB", h100, "memory_gb>=70", true, nil},
		{"CUDA 12.4 is at least 12.1 as a version", h100, "cuda_version>=12.1", true, nil},
		{"CUDA 12.4 is below 12.10 as a version, not as a decimal", h100, "cuda_version>=12.10", false, []string{`summary.cuda_version is "12.4"`}},
		{"12.4 equals 12.4.0 as a version", h100, "cuda_version==12.4.0", true, nil},
		{"driver versions with leading zeros compare as numbers", h100, "driver_version>=550.90.7", true, nil},
		{"every matching device must hold, and each failure is named", h100, "devices[backend=cuda].pcie_link.width_current==16", false,
			[]string{"devices[cuda:0].pcie_link.width_current is 8", "devices[cuda:1].pcie_link.width_current is 8"}},
		{"a filter that selects nothing fails", h100, "devices[backend=rocm].supports_bf16", false, []string{"no element of devices matches backend=rocm"}},
		{"a list without a filter means every element", h100, "devices.supports_fp8", true, nil},
		{"devices[0] is named by its id", tpu, "devices[id=xla:0].supports_fp8", false, []string{"devices[xla:0].supports_fp8 is false"}},
		{"!= filters exclude", h100, "devices[backend!=cpu].supports_fp8", true, nil},
		{"extra fields are free-form", h100, "devices[backend=cuda].extra.ecc_mode==enabled", true, nil},
		{"a null value never meets a requirement", tpu, "cuda_version>=12.1", false, []string{"summary.cuda_version is unknown (null)"}},
		{"a TPU host has no GPUs", tpu, "backend==xla", true, nil},
		{"a device list is non-empty", tpu, "devices", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckAll([]string{tc.src}, tc.report)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{Requirement: tc.src, Met: tc.met, Reasons: tc.reasons}
			if diff := cmp.Diff(want, res[0]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"12.1", "12.1.0", 0},
		{"12.10", "12.9", 1},
		{"v1.2", "1.3", -1},
		{"535.104.05", "535.104.5", 0},
	}
	for _, tc := range tests {
		a, ok1 := parseVersion(tc.a, true)
		b, ok2 := parseVersion(tc.b, true)
		if !ok1 || !ok2 || compareVersions(a, b) != tc.want {
			t.Errorf("compare(%q, %q) = %d (%v %v), want %d", tc.a, tc.b, compareVersions(a, b), ok1, ok2, tc.want)
		}
	}
	if v, ok := parseVersion("6.8.0-45-generic", false); !ok || len(v) != 3 {
		t.Errorf("a kernel release parses leniently as 6.8.0, got %v %v", v, ok)
	}
	if _, ok := parseVersion("6.8.0-45-generic", true); ok {
		t.Error("a kernel release is not a strict version")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"gpu_count>=8", "summary.supports_bf16", "backend==cuda", "memory_gb>=70",
		"cuda_version>=12.1", "devices[backend=cuda].pcie_link.width_current==16", `devices[name="A B",id!=x].y`, "a[", `b=="`} {
		f.Add(s)
	}
	h100 := loadReportF(f)
	f.Fuzz(func(t *testing.T, src string) {
		r, err := Parse(src)
		if err != nil {
			se := err.(*SyntaxError)
			if se.Pos < 0 || se.Pos > len(se.Source) {
				t.Fatalf("caret %d outside %q", se.Pos, se.Source)
			}
			_ = se.Caret("")
			return
		}
		again, err := Parse(r.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", r.String(), src, err)
		}
		if again.String() != r.String() {
			t.Fatalf("canonical form is not stable: %q then %q", r.String(), again.String())
		}
		if r.Bind(reflectReport) == nil {
			_ = r.Eval(h100)
		}
	})
}

func loadReportF(f *testing.F) any {
	raw, err := os.ReadFile("testdata/nvidia-h100-pcie-x2.json")
	if err != nil {
		f.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		f.Fatal(err)
	}
	return doc
}

var reflectReport = reflect.TypeOf(&probe.Report{})

// TestNumbersAreFinite: `--require 'gpu_count==NaN'` (issue 22) passed
// Bind, and NaN compares false with everything, so `!=NaN` always held.
// Every spelling strconv.ParseFloat accepts that is not a finite decimal
// is refused where the requirement is checked.
func TestNumbersAreFinite(t *testing.T) {
	for _, v := range []string{"NaN", "nan", "Inf", "+Inf", "-inf", "infinity", "1e999", "0x10", "0x1p4", "1_000"} {
		for _, op := range []string{"==", "!=", ">=", "<"} {
			r, err := Parse("gpu_count" + op + v)
			if err != nil {
				t.Fatalf("%s%s%s: %v", "gpu_count", op, v, err)
			}
			err = r.Bind(reflectReport)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(se.Msg, "not NaN, Inf or hex") || se.Pos != len("gpu_count"+op) {
				t.Errorf("gpu_count%s%s: err %v, want a refusal pointing at the value", op, v, err)
			}
		}
	}
	for _, v := range []string{"8", "-1", "0.5", "1e9", "1E-3", "+2"} {
		r, err := Parse("gpu_count>=" + v)
		if err != nil || r.Bind(reflectReport) != nil {
			t.Errorf("gpu_count>=%s refused: %v", v, err)
		}
	}
}

// FuzzRequireNumber: whatever follows `gpu_count OP`, a requirement that
// binds compares with a finite number.
func FuzzRequireNumber(f *testing.F) {
	for _, s := range []string{"8", "NaN", "Inf", "1e999", "0x10", `"8"`, "-0"} {
		f.Add("==", s)
	}
	f.Fuzz(func(t *testing.T, op, value string) {
		r, err := Parse("gpu_count" + op + value)
		if err != nil || r.Op == OpTruthy || r.Bind(reflectReport) != nil {
			return
		}
		n, err := strconv.ParseFloat(r.Value, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			t.Fatalf("gpu_count%s%s bound with value %q", op, value, r.Value)
		}
	})
}
