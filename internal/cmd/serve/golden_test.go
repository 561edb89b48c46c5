package serve_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	servecmd "github.com/devctl/devctl/internal/cmd/serve"
)

var update = flag.Bool("update", false, "rewrite testdata/metrics/*.prom with what /metrics answers now")

// fixedNow is the clock of the golden scrapes: the probe's timestamp is
// this instant and its duration zero.
var fixedNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// TestMetricsGolden scrapes /metrics of every testdata snapshot and
// compares the answer with testdata/metrics/NAME.prom. The files were first
// written by the client_golang collector devctl-serve used (see
// testdata/metrics/README.md), so the hand-written exposition must give
// the same bytes.
func TestMetricsGolden(t *testing.T) {
	snaps, err := filepath.Glob(snapshot("*.tar.gz"))
	if err != nil || len(snaps) < 10 {
		t.Fatalf("testdata snapshots: %v %v", snaps, err)
	}
	for _, s := range snaps {
		name := strings.TrimSuffix(filepath.Base(s), ".tar.gz")
		t.Run(name, func(t *testing.T) {
			base, _ := start(t, s, 0, func(o *servecmd.Options) {
				o.Factory.Now = func() time.Time { return fixedNow }
				o.Factory.Version = "v0.0.0-golden"
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
