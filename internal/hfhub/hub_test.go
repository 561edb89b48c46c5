package hfhub

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const repo = "YouriLalain/3PRYMMAL-PHI3-3B-SLERP"

func realFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "YouriLalain--3PRYMMAL-PHI3-3B-SLERP", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// hub serves the real files in the Hub's URL layout and counts requests.
type hub struct {
	*httptest.Server
	hits  atomic.Int32
	auth  atomic.Value // the last Authorization header
	files map[string][]byte
}

func newHub(t *testing.T, handler func(w http.ResponseWriter, r *http.Request) bool) *hub {
	t.Helper()
	h := &hub{files: map[string][]byte{
		"/" + repo + "/resolve/main/config.json":                  realFile(t, "config.json"),
		"/" + repo + "/resolve/main/model.safetensors.index.json": realFile(t, "model.safetensors.index.json"),
	}}
	h.auth.Store("")
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		h.auth.Store(r.Header.Get("Authorization"))
		if handler != nil && handler(w, r) {
			return
		}
		data, ok := h.files[r.URL.Path]
		if !ok {
			w.Header().Set("X-Error-Code", "EntryNotFound")
			http.Error(w, "Entry not found", http.StatusNotFound)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(h.Close)
	return h
}

func TestDownloadsOnlyTheTwoFilesAndCachesThem(t *testing.T) {
	h := newHub(t, nil)
	cache := t.TempDir()
	o := Options{Endpoint: h.URL, Cache: cache, Token: "hf_test"}
	f, err := Fetch(context.Background(), repo, o)
	if err != nil {
		t.Fatal(err)
	}
	if string(f.Config) != string(realFile(t, "config.json")) || string(f.Index) != string(realFile(t, "model.safetensors.index.json")) {
		t.Fatal("the files differ from what the Hub served")
	}
	if h.hits.Load() != 2 {
		t.Errorf("%d requests, want 2 (config.json and the index, never weights)", h.hits.Load())
	}
	if got := h.auth.Load(); got != "Bearer hf_test" {
		t.Errorf("Authorization %q, want the HF_TOKEN bearer", got)
	}
	ix, err := ParseIndex(f.Index)
	if err != nil || *ix.Metadata.TotalSize != 7_642_159_104 {
		t.Errorf("index total_size %v, %v", ix.Metadata.TotalSize, err)
	}
	// Second time: devctl's cache, no request, even offline.
	o.Offline = true
	if _, err := Fetch(context.Background(), repo, o); err != nil {
		t.Fatal(err)
	}
	if h.hits.Load() != 2 {
		t.Errorf("the cached model was asked for again (%d requests)", h.hits.Load())
	}
	// The token is never written to the cache.
	_ = filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "hf_test") {
				t.Errorf("%s holds the token", p)
			}
		}
		return nil
	})
}

func TestReadsTheHuggingFaceCacheLayout(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "models--YouriLalain--3PRYMMAL-PHI3-3B-SLERP")
	commit := "cfe714af820a913b68c32cbe56b955be18b49352"
	snap := filepath.Join(base, "snapshots", commit)
	blobs := filepath.Join(base, "blobs")
	for _, d := range []string{snap, blobs, filepath.Join(base, "refs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// huggingface_hub stores blobs and links the snapshot's files to them.
	if err := os.WriteFile(filepath.Join(blobs, "cfgblob"), realFile(t, "config.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", "blobs", "cfgblob"), filepath.Join(snap, "config.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "refs", "main"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	// A Hub that must not be asked.
	h := newHub(t, func(w http.ResponseWriter, r *http.Request) bool {
		t.Errorf("asked the Hub for %s", r.URL.Path)
		return false
	})
	f, err := Fetch(context.Background(), repo, Options{HubCaches: []string{filepath.Join(dir, "missing"), dir}, Endpoint: h.URL})
	if err != nil {
		t.Fatal(err)
	}
	if f.From != snap || f.Index != nil || len(f.Config) == 0 {
		t.Errorf("from %q, index %d bytes, config %d bytes", f.From, len(f.Index), len(f.Config))
	}
}

// Every failure is one line naming what was wrong, with a sentinel the
// command turns into exit 2.
func TestFailuresAreOneClearLine(t *testing.T) {
	cases := []struct {
		name    string
		id      string
		o       func(h *hub) Options
		handler func(w http.ResponseWriter, r *http.Request) bool
		is      error
		want    string
	}{
		{name: "offline and not cached", id: repo, o: func(h *hub) Options {
			return Options{Endpoint: h.URL, Offline: true, HubCaches: []string{"/nonexistent"}}
		},
			is: ErrOffline, want: "HF_HUB_OFFLINE forbids downloading it"},
		{name: "a private or gated model without a token", id: repo, handler: status(http.StatusUnauthorized, ""), is: ErrUnauthorized, want: "set HF_TOKEN"},
		{name: "a refused token", id: repo, o: func(h *hub) Options { return Options{Endpoint: h.URL, Token: "bad"} }, handler: status(http.StatusUnauthorized, ""), is: ErrUnauthorized, want: "refused the token"},
		{name: "a gated model", id: repo, handler: status(http.StatusForbidden, "GatedRepo"), is: ErrGated, want: "is gated: accept its conditions"},
		{name: "a model that does not exist", id: "nobody/nothing", handler: status(http.StatusNotFound, "RepoNotFound"), is: ErrNotFound, want: "no model nobody/nothing"},
		{name: "a repository without config.json", id: repo, handler: func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, "/config.json") {
				w.Header().Set("X-Error-Code", "EntryNotFound")
				w.WriteHeader(http.StatusNotFound)
				return true
			}
			return false
		}, is: ErrNotFound, want: "has no config.json"},
		{name: "an HTML page instead of JSON", id: repo, handler: func(w http.ResponseWriter, r *http.Request) bool {
			_, _ = w.Write([]byte("<html>captive portal</html>"))
			return true
		}, is: ErrBadAnswer, want: "is not a JSON object"},
		{name: "an oversized answer", id: repo, handler: func(w http.ResponseWriter, r *http.Request) bool {
			_, _ = w.Write([]byte(strings.Repeat(" ", 5<<20)))
			return true
		}, is: ErrBadAnswer, want: "larger than 4194304 bytes"},
		{name: "an index without total_size", id: repo, handler: func(w http.ResponseWriter, r *http.Request) bool {
			if strings.HasSuffix(r.URL.Path, IndexFile) {
				_, _ = w.Write([]byte(`{"metadata": {}, "weight_map": {}}`))
				return true
			}
			return false
		}, is: ErrBadAnswer, want: "no usable metadata.total_size"},
		{name: "a server error", id: repo, handler: status(http.StatusBadGateway, ""), is: ErrBadAnswer, want: "answered 502"},
		{name: "a Hub that never answers", id: repo, o: func(h *hub) Options { return Options{Endpoint: h.URL, Timeout: 200 * time.Millisecond} },
			handler: func(w http.ResponseWriter, r *http.Request) bool { time.Sleep(2 * time.Second); return true }, is: ErrOffline, want: "did not answer within 200ms"},
		{name: "an id that is not ORG/NAME", id: "../../etc/passwd", is: ErrInvalidID, want: "want ORG/NAME"},
		{name: "an id with a path in it", id: "org/name/../../x", is: ErrInvalidID, want: "want ORG/NAME"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHub(t, c.handler)
			o := Options{Endpoint: h.URL}
			if c.o != nil {
				o = c.o(h)
			}
			_, err := Fetch(context.Background(), c.id, o)
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want %v mentioning %q on one line", err, c.is, c.want)
			}
		})
	}
}

// A model stored in one file has no index: the Hub's 404 for it is not an
// error, and the cache remembers it.
func TestAModelWithoutAnIndex(t *testing.T) {
	h := newHub(t, nil)
	delete(h.files, "/"+repo+"/resolve/main/model.safetensors.index.json")
	cache := t.TempDir()
	f, err := Fetch(context.Background(), repo, Options{Endpoint: h.URL, Cache: cache})
	if err != nil || f.Index != nil {
		t.Fatalf("index %d bytes, err %v", len(f.Index), err)
	}
	if _, err := Fetch(context.Background(), repo, Options{Endpoint: h.URL, Cache: cache, Offline: true}); err != nil {
		t.Fatalf("the cached single-file model: %v", err)
	}
}

func status(code int, xerr string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if xerr != "" {
			w.Header().Set("X-Error-Code", xerr)
		}
		w.WriteHeader(code)
		return true
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"metadata": {"total_size": 7642159104}, "weight_map": {"a": "b"}}`))
	f.Add([]byte(`{"metadata": {"total_size": -1}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := ParseIndex(data)
		if err == nil && (ix.Metadata.TotalSize == nil || *ix.Metadata.TotalSize < 0) {
			t.Fatal("accepted an index without a usable total")
		}
	})
}
