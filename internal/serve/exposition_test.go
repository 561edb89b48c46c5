package serve

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/devctl/devctl/internal/probe"
)

// parseText parses b with prometheus/common's text parser (what
// Prometheus itself uses for the format; a test-only import), requiring
// legacy metric and label names, as the Content-Type's escaping=underscores
// promises.
func parseText(t testing.TB, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the text parser refuses the answer: %v\n%s", err, b)
	}
	return mfs
}

// series is one parsed sample, in a form cmp can compare.
type series struct {
	Family, Type, Help, Labels, Value string
}

func flatten(mfs map[string]*dto.MetricFamily) []series {
	var out []series
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+fmt.Sprintf("%q", l.GetValue()))
			}
			sort.Strings(labels)
			s := series{Family: name, Type: mf.GetType().String(), Help: mf.GetHelp(), Labels: strings.Join(labels, ",")}
			switch {
			case m.Gauge != nil:
				out = append(out, withValue(s, m.Gauge.GetValue()))
			case m.Counter != nil:
				out = append(out, withValue(s, m.Counter.GetValue()))
			case m.Summary != nil:
				for _, q := range m.Summary.GetQuantile() {
					qs := s
					qs.Labels = strings.TrimPrefix(s.Labels+",quantile="+fmt.Sprint(q.GetQuantile()), ",")
					out = append(out, withValue(qs, q.GetValue()))
				}
				out = append(out, withValue(series{Family: name + "_sum", Type: s.Type, Help: s.Help, Labels: s.Labels}, m.Summary.GetSampleSum()),
					withValue(series{Family: name + "_count", Type: s.Type, Help: s.Help, Labels: s.Labels}, float64(m.Summary.GetSampleCount())))
			default:
				out = append(out, withValue(s, m.Untyped.GetValue()))
			}
		}
	}
	slices.SortFunc(out, func(a, b series) int { return strings.Compare(a.Family+"\x00"+a.Labels, b.Family+"\x00"+b.Labels) })
	return out
}

func withValue(s series, v float64) series {
	s.Value = fmt.Sprint(v)
	return s
}

// TestFullSnapshotParsesAsTheOldCollectorsDid parses /metrics of a full
// snapshot and the answer the client_golang collector gave for it
// (testdata/full.prom) and compares every family, type, help, label set
// and value.
func TestFullSnapshotParsesAsTheOldCollectorsDid(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	c := NewCache(func(ctx context.Context) *Snapshot { return fullSnapshot() }, time.Minute, time.Minute, clk.now)
	_, got := body(t, Handler(c, Options{Version: "v1.2.3", MaxInFlight: 4, Timeout: time.Second}), "/metrics")
	old, err := os.ReadFile("testdata/full.prom")
	if err != nil {
		t.Fatal(err)
	}
	want := flatten(parseText(t, old))
	if len(want) < 30 {
		t.Fatalf("only %d series in testdata/full.prom", len(want))
	}
	if diff := cmp.Diff(want, flatten(parseText(t, []byte(got)))); diff != "" {
		t.Errorf("/metrics parsed (-client_golang +devctl):\n%s", diff)
	}
}

// documentedRuntimeFamilies is the --runtime-metrics set docs/cluster.md
// lists: client_golang's less go_gc_gogc_percent (runtime.go says why).
var documentedRuntimeFamilies = []string{
	"go_gc_duration_seconds", "go_gc_gomemlimit_bytes", "go_goroutines", "go_info",
	"go_memstats_alloc_bytes", "go_memstats_alloc_bytes_total", "go_memstats_buck_hash_sys_bytes", "go_memstats_frees_total",
	"go_memstats_gc_sys_bytes", "go_memstats_heap_alloc_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_inuse_bytes",
	"go_memstats_heap_objects", "go_memstats_heap_released_bytes", "go_memstats_heap_sys_bytes", "go_memstats_last_gc_time_seconds",
	"go_memstats_mallocs_total", "go_memstats_mcache_inuse_bytes", "go_memstats_mcache_sys_bytes", "go_memstats_mspan_inuse_bytes",
	"go_memstats_mspan_sys_bytes", "go_memstats_next_gc_bytes", "go_memstats_other_sys_bytes", "go_memstats_stack_inuse_bytes",
	"go_memstats_stack_sys_bytes", "go_memstats_sys_bytes", "go_sched_gomaxprocs_threads", "go_threads",
}

// documentedProcessFamilies are the Linux-only process_* families.
var documentedProcessFamilies = []string{
	"process_cpu_seconds_total", "process_max_fds", "process_open_fds", "process_resident_memory_bytes",
	"process_start_time_seconds", "process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
}

// TestRuntimeMetricsKeepClientGolangsNames: every go_* and process_*
// family has the name, type and labels client_golang's collectors gave it
// (testdata/runtime-client_golang-v1.25.0.prom); the set is the documented
// one, which is client_golang's less go_gc_gogc_percent and the two
// network counters.
func TestRuntimeMetricsKeepClientGolangsNames(t *testing.T) {
	old, err := os.ReadFile("testdata/runtime-client_golang-v1.25.0.prom")
	if err != nil {
		t.Fatal(err)
	}
	oldFams := parseText(t, old)
	c := NewCache(func(ctx context.Context) *Snapshot { return fullSnapshot() }, time.Minute, time.Minute, nil)
	_, got := body(t, Handler(c, Options{Version: "v1", MaxInFlight: 4, Timeout: time.Second, RuntimeMetrics: true}), "/metrics")
	fams := parseText(t, []byte(got))
	var names []string
	for name, mf := range fams {
		if strings.HasPrefix(name, "devctl_") {
			continue
		}
		names = append(names, name)
		o := oldFams[name]
		if o == nil {
			t.Errorf("%s: client_golang had no such family", name)
			continue
		}
		if mf.GetType() != o.GetType() {
			t.Errorf("%s: type %s, client_golang's %s", name, mf.GetType(), o.GetType())
		}
		if got, want := labelNames(mf), labelNames(o); !slices.Equal(got, want) {
			t.Errorf("%s: labels %v, client_golang's %v", name, got, want)
		}
	}
	want := slices.Clone(documentedRuntimeFamilies)
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		want = append(want, documentedProcessFamilies...)
	}
	slices.Sort(want)
	slices.Sort(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("runtime families (-documented +served):\n%s", diff)
	}
	for old := range oldFams {
		if !slices.Contains(names, old) && !strings.HasPrefix(old, "devctl_") && !strings.HasPrefix(old, "process_network_") && old != "go_gc_gogc_percent" {
			t.Errorf("client_golang's %s is not served", old)
		}
	}
	// Values that must be right whatever the moment.
	gr := fams["go_goroutines"].GetMetric()[0].GetGauge().GetValue()
	if gr < 1 {
		t.Errorf("go_goroutines %v", gr)
	}
	if v := fams["go_sched_gomaxprocs_threads"].GetMetric()[0].GetGauge().GetValue(); v < 1 {
		t.Errorf("go_sched_gomaxprocs_threads %v", v)
	}
	if s := fams["go_gc_duration_seconds"].GetMetric()[0].GetSummary(); len(s.GetQuantile()) != 5 {
		t.Errorf("go_gc_duration_seconds has %d quantiles, want 5", len(s.GetQuantile()))
	}
	if mf := fams["process_start_time_seconds"]; mf != nil {
		start := mf.GetMetric()[0].GetGauge().GetValue()
		if now := float64(time.Now().Unix()); start > now+1 || start < now-24*3600 {
			t.Errorf("process_start_time_seconds %v is not within the last day (now %v)", start, now)
		}
		if rss := fams["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue(); rss < 1<<20 {
			t.Errorf("process_resident_memory_bytes %v", rss)
		}
	}
}

func labelNames(mf *dto.MetricFamily) []string {
	var out []string
	if ms := mf.GetMetric(); len(ms) > 0 {
		for _, l := range ms[0].GetLabel() {
			out = append(out, l.GetName())
		}
	}
	slices.Sort(out)
	return out
}

// TestLabelValuesFromTheMachineAreSanitised puts hostile strings where
// drivers put what sysfs and vendor tools say (device names, check ids):
// the answer parses, and what a scraper stores has no control character
// and no bidirectional control (issue 22).
func TestLabelValuesFromTheMachineAreSanitised(t *testing.T) {
	long := strings.Repeat("x", 255) + "é" // the cut falls inside é
	tests := []struct {
		name, in, want string
	}{
		{"quotes and backslashes are kept, escaped", `NVIDIA "H100" C:\gpu\`, `NVIDIA "H100" C:\gpu\`},
		{"a line feed is removed", "H100\nfake_metric 1", "H100fake_metric 1"},
		{"a carriage return and a tab are removed", "H100\r\tPCIe", "H100PCIe"},
		{"invalid UTF-8 becomes one U+FFFD per run", "GPU\xff\xfe0", "GPU\uFFFD0"},
		{"an ANSI colour sequence loses its ESC", "\x1b[31mred\x1b[0m", "[31mred[0m"},
		{"an OSC title sequence loses ESC and BEL", "\x1b]0;owned\x07x", "]0;ownedx"},
		{"a C1 CSI is removed", "a\u009b31mb", "a31mb"},
		{"DEL and NUL are removed", "a\x7fb\x00c", "abc"},
		{"a right-to-left override is removed", "cuda:0\u202e1:aduc", "cuda:01:aduc"},
		{"bidi isolates and marks are removed", "\u2066a\u2069\u200fb\u061c", "ab"},
		{"other text is kept", "Radeon™ Instinct MI300X — 192 GB", "Radeon™ Instinct MI300X — 192 GB"},
		{"values are cut at 256 bytes on a character boundary", long, strings.Repeat("x", 255)},
	}
	var devs []probe.Device
	for i, tc := range tests {
		devs = append(devs, probe.Device{ID: fmt.Sprintf("dev:%02d", i), Backend: "cuda", Name: tc.in, Vendor: tc.in})
	}
	c := NewCache(func(ctx context.Context) *Snapshot {
		return &Snapshot{Probe: &probe.Report{Devices: devs, Drivers: []probe.DriverStatus{{Name: "nvidia\x1b[2J", Status: probe.StatusOK}}}}
	}, time.Minute, time.Minute, nil)
	_, m := body(t, Handler(c, Options{Version: "v1\u202e", MaxInFlight: 4, Timeout: time.Second}), "/metrics")
	for _, r := range m {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)) {
			t.Fatalf("/metrics holds %U", r)
		}
	}
	fams := parseText(t, []byte(m))
	got := map[string]string{}
	for _, mt := range fams["devctl_device_info"].GetMetric() {
		var id, name, vendor string
		for _, l := range mt.GetLabel() {
			switch l.GetName() {
			case "device":
				id = l.GetValue()
			case "name":
				name = l.GetValue()
			case "vendor":
				vendor = l.GetValue()
			}
		}
		if name != vendor {
			t.Errorf("%s: name %q and vendor %q differ", id, name, vendor)
		}
		got[id] = name
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if g := got[fmt.Sprintf("dev:%02d", i)]; g != tc.want {
				t.Errorf("label value %q, want %q", g, tc.want)
			}
		})
	}
	if !strings.Contains(m, `devctl_driver_status{driver="nvidia[2J",status="ok"} 1`) || !strings.Contains(m, `devctl_build_info{version="v1"} 1`) {
		t.Errorf("driver and version labels are not sanitised:\n%s", m)
	}
}

// TestWriterEscapesAsTheSpecSays: the writer alone (no sanitising) turns
// any UTF-8 label value and help text into text the parser reads back
// unchanged, with the escapes the format defines.
func TestWriterEscapesAsTheSpecSays(t *testing.T) {
	f := newFamily("x_info", "Help with a \\ backslash,\na line feed and \"quotes\".", gauge, "v")
	f.add(1, "a\\b\"c\nd")
	got := string(appendText(nil, []*family{f}))
	want := "# HELP x_info Help with a \\\\ backslash,\\na line feed and \"quotes\".\n# TYPE x_info gauge\nx_info{v=\"a\\\\b\\\"c\\nd\"} 1\n"
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	mf := parseText(t, []byte(got))["x_info"]
	if mf.GetHelp() != f.help || mf.GetMetric()[0].GetLabel()[0].GetValue() != "a\\b\"c\nd" {
		t.Errorf("parsed back: help %q, label %q", mf.GetHelp(), mf.GetMetric()[0].GetLabel()[0].GetValue())
	}
}

func TestFloatsAreWrittenAsTheFormatWants(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-1, "-1"},
		{0.5, "0.5"},
		{48.9, "48.9"},
		{408832, "408832"},
		{1445203, "1.445203e+06"},
		{85899345920, "8.589934592e+10"},
		{1.7955162005e+09, "1.7955162005e+09"},
		{math.MaxUint64, "1.8446744073709552e+19"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, "5e-324"},
		{1e-7, "1e-07"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := string(appendFloat(nil, tc.v)); got != tc.want {
				t.Errorf("appendFloat(%v) = %s, want %s", tc.v, got, tc.want)
			}
			f := newFamily("x", "x", gauge)
			f.add(tc.v)
			back := parseText(t, appendText(nil, []*family{f}))["x"].GetMetric()[0].GetGauge().GetValue()
			if back != tc.v && !(math.IsNaN(back) && math.IsNaN(tc.v)) {
				t.Errorf("parsed back as %v", back)
			}
		})
	}
}

func TestSamplesAreSortedAndRepeatsDropped(t *testing.T) {
	f := newFamily("x", "x", gauge, "z", "a")
	f.add(1, "2", "b")
	f.add(2, "1", "b")
	f.add(3, "9", "a")
	f.add(4, "2", "b") // a repeat: the first figure is kept
	empty := newFamily("a_empty", "never written", gauge)
	got := string(appendText(nil, []*family{f, empty}))
	want := "# HELP x x\n# TYPE x gauge\nx{a=\"a\",z=\"9\"} 3\nx{a=\"b\",z=\"1\"} 2\nx{a=\"b\",z=\"2\"} 1\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header []string
		want   bool
	}{
		{nil, false},
		{[]string{"gzip"}, true},
		{[]string{"deflate, gzip"}, true},
		{[]string{"GZIP"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.0"}, false},
		{[]string{"br, gzip;q=0.5"}, true},
		{[]string{"identity"}, false},
		{[]string{"*"}, false},
		{[]string{"gzipper"}, false},
		{[]string{"br", "gzip"}, true},
	}
	for _, tc := range tests {
		if got := acceptsGzip(tc.header); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

// FuzzLabelValue: whatever the machine says, /metrics parses and the
// stored value is the sanitised one: valid UTF-8, no control or bidi
// character, at most maxLabelValue bytes.
func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"", "NVIDIA H100", "a\"b\\c\nd", "\x1b[31m", "\u202e", "\xff", strings.Repeat("é", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := labelValue(s)
		if !utf8.ValidString(v) || len(v) > maxLabelValue {
			t.Fatalf("labelValue(%q) = %q", s, v)
		}
		for _, r := range v {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
				t.Fatalf("labelValue(%q) keeps %U", s, r)
			}
		}
		fam := newFamily("x_info", "x", gauge, "v")
		fam.add(1, v)
		if got := parseText(t, appendText(nil, []*family{fam}))["x_info"].GetMetric()[0].GetLabel()[0].GetValue(); got != v {
			t.Fatalf("parsed back %q, wrote %q", got, v)
		}
	})
}

// FuzzWriterRoundTrip: any valid UTF-8 label value and help text, not
// sanitised, is read back unchanged.
func FuzzWriterRoundTrip(f *testing.F) {
	f.Add("a\"b\\c\nd", "help \\ with\nlines")
	f.Fuzz(func(t *testing.T, value, help string) {
		if !utf8.ValidString(value) || !utf8.ValidString(help) {
			t.Skip()
		}
		fam := newFamily("x_info", help, gauge, "v")
		fam.add(1, value)
		mf := parseText(t, appendText(nil, []*family{fam}))["x_info"]
		// Blanks between the name and the text separate them, so a help
		// text's leading blanks are not kept (ours have none).
		if mf.GetHelp() != strings.TrimLeft(help, " \t") || mf.GetMetric()[0].GetLabel()[0].GetValue() != value {
			t.Fatalf("parsed back help %q label %q", mf.GetHelp(), mf.GetMetric()[0].GetLabel()[0].GetValue())
		}
	})
}
