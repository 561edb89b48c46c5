package serve_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	servecmd "github.com/devctl/devctl/internal/cmd/serve"
)

var update = flag.Bool("update", false, "rewrite testdata/metrics/*.prom with what /metrics answers now")

// fixedNow is the clock of the golden scrapes: the probe's timestamp is
// this instant and its duration zero.
var fixedNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// TestMetricsGolden scrapes /metrics of every testdata snapshot, parses it
// with prometheus/common's text parser (a test-only import) and compares
// it with testdata/metrics/NAME.prom. The files were written by the
// client_golang collector devctl-serve used (testdata/metrics/README.md),
// so the hand-written exposition must give the same bytes.
func TestMetricsGolden(t *testing.T) {
	snaps, err := filepath.Glob(snapshot("*.tar.gz"))
	if err != nil || len(snaps) < 10 {
		t.Fatalf("testdata snapshots: %v %v", snaps, err)
	}
	for _, s := range snaps {
		name := strings.TrimSuffix(filepath.Base(s), ".tar.gz")
		t.Run(name, func(t *testing.T) {
			base, _ := start(t, s, 0, func(o *servecmd.Options) {
				o.Now = func() time.Time { return fixedNow }
				o.Version = "v0.0.0-golden"
			})
			code, got := get(t, base+"/metrics")
			if code != 200 {
				t.Fatalf("/metrics: %d", code)
			}
			path := filepath.Join("testdata", "metrics", name+".prom")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p := expfmt.NewTextParser(model.LegacyValidation)
			fams, err := p.TextToMetricFamilies(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("the text parser refuses /metrics: %v", err)
			}
			if fams["devctl_probe_success"].GetMetric()[0].GetGauge().GetValue() != 1 || len(fams["devctl_driver_status"].GetMetric()) < 5 {
				t.Errorf("parsed: probe_success %v, %d driver statuses", fams["devctl_probe_success"], len(fams["devctl_driver_status"].GetMetric()))
			}
			if !bytes.Equal(want, got) {
				t.Errorf("/metrics differs from %s:\n%s", path, lineDiff(string(want), string(got)))
			}
		})
	}
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(the same lines in another order)"
	}
	return b.String()
}
