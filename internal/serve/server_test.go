package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/probe"
)

func body(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestMetricsFollowTheNextSnapshot(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	var free atomic.Int64
	free.Store(1000)
	c := NewCache(func(ctx context.Context) *Snapshot {
		return &Snapshot{Probe: &probe.Report{Devices: []probe.Device{{ID: "cuda:0", Backend: "cuda", FreeMemoryMB: probe.Ptr(free.Load())}}}}
	}, time.Minute, time.Minute, clk.now)
	h := Handler(c, Options{Version: "test", MaxInFlight: 4, Timeout: time.Second})
	_, m := body(t, h, "/metrics")
	if !strings.Contains(m, `devctl_device_memory_free_bytes{device="cuda:0"} 1.048576e+09`) {
		t.Fatalf("first scrape:\n%s", m)
	}
	free.Store(2000)
	clk.add(2 * time.Minute)
	_, _ = body(t, h, "/metrics") // stale: served, and a refresh starts
	deadline := time.Now().Add(5 * time.Second)
	for c.Runs() < 2 || c.Latest().Time != clk.now() {
		if time.Now().After(deadline) {
			t.Fatal("no refresh after the interval")
		}
		time.Sleep(time.Millisecond)
	}
	_, m = body(t, h, "/metrics")
	if !strings.Contains(m, `devctl_device_memory_free_bytes{device="cuda:0"} 2.097152e+09`) || !strings.Contains(m, "devctl_probe_runs_total 2") {
		t.Fatalf("the scrape after a refresh still shows the old snapshot:\n%s", m)
	}
	if strings.Contains(m, "go_goroutines") {
		t.Error("runtime metrics are off unless asked for")
	}
}

func TestHandlerBoundsRequestsInFlight(t *testing.T) {
	block := make(chan struct{})
	c := NewCache(func(ctx context.Context) *Snapshot { <-block; return &Snapshot{Probe: &probe.Report{}} }, time.Minute, time.Minute, nil)
	h := Handler(c, Options{MaxInFlight: 1, Timeout: 5 * time.Second})
	done := make(chan int)
	go func() { code, _ := body(t, h, "/v1/probe"); done <- code }() // waits for the first probe
	time.Sleep(50 * time.Millisecond)
	if code, _ := body(t, h, "/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("a request beyond --max-in-flight got %d, want 503", code)
	}
	close(block)
	if code := <-done; code != 200 {
		t.Errorf("the first request got %d", code)
	}
	if code, _ := body(t, h, "/readyz"); code != 200 {
		t.Errorf("/readyz after the first probe: %d", code)
	}
}

func TestHandlerTimesOutSlowRequests(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	c := NewCache(func(ctx context.Context) *Snapshot { <-block; return &Snapshot{} }, time.Minute, time.Minute, nil)
	h := Handler(c, Options{MaxInFlight: 4, Timeout: 50 * time.Millisecond})
	if code, _ := body(t, h, "/v1/doctor"); code != http.StatusServiceUnavailable {
		t.Errorf("a request that outlives its deadline got %d, want 503", code)
	}
	if code, _ := body(t, h, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the first probe: %d, want 503", code)
	}
}

func TestEncodedMetricsKeepNegotiation(t *testing.T) {
	c := NewCache(func(ctx context.Context) *Snapshot { return &Snapshot{Probe: &probe.Report{}} }, time.Minute, time.Minute, nil)
	h := Handler(c, Options{Version: "v9", MaxInFlight: 4, Timeout: time.Second})
	for range 2 { // the second answer comes from the cache
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("Content-Encoding %q, want gzip", rec.Header().Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(zr)
		if !strings.Contains(string(b), `devctl_build_info{version="v9"} 1`) {
			t.Fatalf("gzip body:\n%s", b)
		}
	}
	code, plain := body(t, h, "/metrics")
	if code != 200 || !strings.Contains(plain, "devctl_probe_runs_total 1") {
		t.Fatalf("plain answer %d:\n%s", code, plain)
	}
}

func TestMetricsExportTheLastBenchRun(t *testing.T) {
	eff := 0.82
	run := &bench.Run{Time: time.Unix(1_700_000_000, 0), Results: []bench.Result{
		{Suite: "memory", Name: "triad", Threads: 2, Value: 21.5, Unit: "GB/s", Efficiency: &eff},
		{Suite: "memory", Name: "triad", Threads: 2, Value: 20.0, Unit: "GB/s"}, // a repeat must not break the scrape
	}}
	c := NewCache(func(ctx context.Context) *Snapshot { return &Snapshot{Probe: &probe.Report{}, Bench: run} }, time.Minute, time.Minute, nil)
	code, m := body(t, Handler(c, Options{MaxInFlight: 4, Timeout: time.Second}), "/metrics")
	for _, want := range []string{
		`devctl_bench_result{name="triad",suite="memory",threads="2",unit="GB/s"} 21.5`,
		`devctl_bench_efficiency_ratio{name="triad",suite="memory",threads="2"} 0.82`,
		`devctl_bench_timestamp_seconds 1.7e+09`,
	} {
		if code != 200 || !strings.Contains(m, want+"\n") {
			t.Errorf("/metrics (%d) lacks %s:\n%s", code, want, m)
		}
	}
}

// TestMetricsPassPrometheusLint runs client_golang's metric linter (the
// rules of promtool check metrics; a test-only import) over /metrics of a
// full snapshot, with the runtime metrics.
func TestMetricsPassPrometheusLint(t *testing.T) {
	c := NewCache(func(ctx context.Context) *Snapshot { return fullSnapshot() }, time.Minute, time.Minute, nil)
	code, m := body(t, Handler(c, Options{Version: "v1", MaxInFlight: 4, Timeout: time.Second, RuntimeMetrics: true}), "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	problems, err := promlint.New(strings.NewReader(m)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestOnlyGETIsServed(t *testing.T) {
	c := NewCache(func(ctx context.Context) *Snapshot { return &Snapshot{Probe: &probe.Report{}} }, time.Minute, time.Minute, nil)
	h := Handler(c, Options{MaxInFlight: 4, Timeout: time.Second})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", strings.NewReader("x")))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /metrics: %d, Allow %q; want 405 and GET, HEAD", rec.Code, rec.Header().Get("Allow"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("HEAD /healthz: %d", rec.Code)
	}
	if code, _ := body(t, h, "/v2/probe"); code != http.StatusNotFound {
		t.Errorf("/v2/probe: %d, want 404", code)
	}
}

// TestMetricsAreRenderedOncePerSnapshot: scrapes between two refreshes get
// the bytes rendered (and gzipped) for the first; a refresh renders anew.
func TestMetricsAreRenderedOncePerSnapshot(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := NewCache(func(ctx context.Context) *Snapshot { return &Snapshot{Probe: &probe.Report{}} }, time.Minute, time.Minute, clk.now)
	mh := &metricsHandler{cache: c, version: "v1"}
	scrape := func(gz bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		mh.ServeHTTP(rec, req)
		return rec
	}
	first := scrape(true)
	r1 := mh.cur
	for range 10 {
		if rec := scrape(true); !bytes.Equal(rec.Body.Bytes(), first.Body.Bytes()) || mh.cur != r1 {
			t.Fatal("a scrape within the interval rendered again")
		}
		_ = scrape(false)
	}
	if first.Header().Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8; escaping=underscores" ||
		first.Header().Get("Vary") != "Accept-Encoding" || first.Header().Get("Content-Length") != strconv.Itoa(first.Body.Len()) {
		t.Errorf("headers %v", first.Header())
	}
	clk.add(2 * time.Minute)
	_ = scrape(false) // stale: answered from the old snapshot, a refresh starts
	deadline := time.Now().Add(5 * time.Second)
	for c.Runs() < 2 || c.Latest().Time != clk.now() {
		if time.Now().After(deadline) {
			t.Fatal("no refresh")
		}
		time.Sleep(time.Millisecond)
	}
	_ = scrape(false)
	if mh.cur == r1 {
		t.Error("the scrape after a refresh reused the old rendering")
	}
}

// BenchmarkMetrics is one /metrics answer of a full snapshot through the
// whole handler (bounds, timeout, the cached rendering), plain and gzip.
func BenchmarkMetrics(b *testing.B) {
	c := NewCache(func(ctx context.Context) *Snapshot { return fullSnapshot() }, time.Hour, time.Minute, nil)
	h := Handler(c, Options{Version: "v1", MaxInFlight: 64, Timeout: 10 * time.Second})
	for _, enc := range []string{"", "gzip"} {
		b.Run("encoding="+enc, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				req.Header.Set("Accept-Encoding", enc)
				h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}
