package serve

import (
	"context"
	"net/http"
	"time"
)

// Options configure the handler.
type Options struct {
	Version string
	// MaxInFlight bounds concurrent requests; more are answered 503.
	MaxInFlight int
	// Timeout bounds one request's handling.
	Timeout time.Duration
	// RuntimeMetrics adds the Go runtime's and, on Linux, the process's
	// metrics (go_*, process_*; runtime.go, process.go). They are read
	// afresh on every scrape, so /metrics is no longer a copy of bytes
	// rendered once per probe.
	RuntimeMetrics bool
}

// Handler serves /metrics, /v1/probe, /v1/doctor, /healthz and /readyz
// from the cache.
func Handler(c *Cache, opts Options) http.Handler {
	metrics := &metricsHandler{cache: c, version: opts.Version, runtime: opts.RuntimeMetrics}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /v1/probe", func(w http.ResponseWriter, r *http.Request) {
		snap, err := c.Get(r.Context())
		if err != nil || snap.Probe == nil {
			unavailable(w, snap, err)
			return
		}
		writeJSON(w, snap, &snap.probeJSON, snap.Probe)
	})
	mux.HandleFunc("GET /v1/doctor", func(w http.ResponseWriter, r *http.Request) {
		snap, err := c.Get(r.Context())
		if err != nil || snap.Doctor == nil {
			unavailable(w, snap, err)
			return
		}
		writeJSON(w, snap, &snap.doctorJSON, snap.Doctor)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		select {
		case <-c.Ready():
			_, _ = w.Write([]byte("ok\n"))
		default:
			http.Error(w, ErrNotReady.Error(), http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics", "/v1/probe", "/v1/doctor", "/healthz", "/readyz":
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "devctl: "+r.Method+" is not allowed here; use GET", http.StatusMethodNotAllowed)
			return
		}
		http.Error(w, "not found: devctl serves /metrics, /v1/probe, /v1/doctor, /healthz and /readyz", http.StatusNotFound)
	})
	return bound(mux, opts)
}

// bound caps the requests in flight (503 beyond) and each request's time.
func bound(h http.Handler, opts Options) http.Handler {
	if opts.Timeout > 0 {
		h = http.TimeoutHandler(h, opts.Timeout, "devctl: request timed out\n")
	}
	if opts.MaxInFlight <= 0 {
		return h
	}
	sem := make(chan struct{}, opts.MaxInFlight)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "devctl: too many requests in flight", http.StatusServiceUnavailable)
		}
	})
}

func writeJSON(w http.ResponseWriter, snap *Snapshot, enc *lazyJSON, v any) {
	b, err := enc.get(v)
	if err != nil {
		http.Error(w, "devctl: encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Last-Modified", snap.Time.UTC().Format(http.TimeFormat))
	_, _ = w.Write(b)
}

func unavailable(w http.ResponseWriter, snap *Snapshot, err error) {
	w.Header().Set("Retry-After", "1")
	msg := "devctl: " + ErrNotReady.Error()
	if err == nil && snap != nil && snap.Err != nil {
		msg = "devctl: the probe failed: " + snap.Err.Error()
	}
	http.Error(w, msg, http.StatusServiceUnavailable)
}

// ShutdownGrace is how long in-flight requests get after SIGTERM.
const ShutdownGrace = 5 * time.Second

// Serve runs srv until ctx ends, then shuts it down gracefully: no new
// connections, in-flight requests get ShutdownGrace to finish.
func Serve(ctx context.Context, srv *http.Server, listen func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- listen() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}
