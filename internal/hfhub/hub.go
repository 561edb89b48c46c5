// Package hfhub reads the two small files devctl needs to size a Hugging
// Face model, config.json and model.safetensors.index.json, from the local
// Hugging Face cache, else from the Hub over HTTPS (bounded in time and
// size, never weights), keeping what it downloads in devctl's own cache.
//
// It takes every setting as a value (the caller reads HF_HOME, HF_HUB_CACHE,
// HF_TOKEN, HF_ENDPOINT and HF_HUB_OFFLINE) and returns errors whose text
// is one line a user can act on.
package hfhub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/devctl/devctl/internal/target"
	"github.com/devctl/devctl/internal/userfile"
)

// Files the estimate needs.
const (
	ConfigFile = "config.json"
	IndexFile  = "model.safetensors.index.json"
)

// Defaults for Options left zero.
const (
	DefaultEndpoint  = "https://huggingface.co"
	DefaultTimeout   = 15 * time.Second
	DefaultMaxConfig = 4 << 20  // a config.json is a few KB; id2label tables reach hundreds
	DefaultMaxIndex  = 64 << 20 // an index lists every tensor: DeepSeek-V3's is a few MB
)

// Errors callers branch on.
var (
	ErrInvalidID    = errors.New("invalid model id")
	ErrOffline      = errors.New("offline")
	ErrNotFound     = errors.New("not found")
	ErrUnauthorized = errors.New("unauthorized")
	ErrGated        = errors.New("gated")
	ErrBadAnswer    = errors.New("bad answer")
	ErrBadEndpoint  = errors.New("bad HF_ENDPOINT")
)

// hubError is a one-line message a user can act on, matching its sentinel
// with errors.Is without repeating the sentinel's word.
type hubError struct {
	kind error
	msg  string
}

func (e *hubError) Error() string        { return e.msg }
func (e *hubError) Is(target error) bool { return target == e.kind }

func failf(kind error, format string, args ...any) error {
	return &hubError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// Options say where to look and how to ask.
type Options struct {
	// HubCaches are Hugging Face cache directories to read, in order
	// (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub).
	HubCaches []string
	// Cache is devctl's own directory for downloaded files; "" keeps none.
	Cache string
	// Endpoint is the Hub's base URL (HF_ENDPOINT).
	Endpoint string
	// Token is sent as a bearer token (HF_TOKEN) to the endpoint's own
	// origin (scheme, host and port) only, never after a redirect
	// elsewhere; it is never stored nor shown.
	Token string
	// Offline forbids the network (HF_HUB_OFFLINE=1).
	Offline bool
	// Revision is a branch, tag or commit; "" means main.
	Revision string
	Client   *http.Client
	Timeout  time.Duration
	// MaxConfig and MaxIndex bound what is read of each file.
	MaxConfig, MaxIndex int64
	// Accept, when set, is the caller's verdict on downloaded files: what
	// it refuses is returned (the caller reports it) but not kept in the
	// cache, so the next run asks the Hub again instead of replaying a
	// file devctl cannot use.
	Accept func(config, index []byte) error

	ep *endpoint // parsed Endpoint, set by Fetch
}

// Files is what was found. Index is nil for a model stored in one file.
type Files struct {
	Repo   string
	Config []byte
	Index  []byte
	// From says where the files came from: a cache directory or a URL.
	From string
}

// Index is the part of model.safetensors.index.json devctl reads.
type Index struct {
	Metadata struct {
		TotalSize *int64 `json:"total_size"`
	} `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// ParseIndex reads an index and checks its total size.
func ParseIndex(data []byte) (Index, error) {
	var ix Index
	if err := json.Unmarshal(data, &ix); err != nil {
		return ix, failf(ErrBadAnswer, "%s is not valid JSON: %v", IndexFile, err)
	}
	if ix.Metadata.TotalSize == nil || *ix.Metadata.TotalSize < 0 || *ix.Metadata.TotalSize > 1<<50 {
		return ix, failf(ErrBadAnswer, "%s has no usable metadata.total_size", IndexFile)
	}
	return ix, nil
}

// The patterns are compiled on first use: their bounded repetitions
// compile to large programs (about 0.9 ms and 2,700 allocations at start-up
// of every devctl command, measured with GODEBUG=inittrace=1).
var idPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`) })

// ValidID checks an ORG/NAME model id the way the Hub names repositories,
// so that nothing else reaches a URL or a path.
func ValidID(id string) error {
	org, name, ok := strings.Cut(id, "/")
	if !ok || !idPart().MatchString(org) || !idPart().MatchString(name) || strings.Contains(id, "..") {
		return failf(ErrInvalidID, "invalid model id %q: want ORG/NAME (letters, digits, '.', '_', '-'), e.g. Qwen/Qwen2-1.5B", id)
	}
	return nil
}

var revisionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`) })

// Fetch returns a model's config.json and, when it has one, its
// model.safetensors.index.json: from a Hugging Face cache, from devctl's
// cache, else (unless offline) from the Hub.
//
// No error it returns holds a credential: the endpoint appears as
// scheme://host/path only, and the token, the endpoint's userinfo and
// query are withheld from any message that would quote them.
func Fetch(ctx context.Context, id string, o Options) (*Files, error) {
	f, err := fetch(ctx, id, o)
	if err != nil {
		return nil, redact(err, o)
	}
	return f, nil
}

func fetch(ctx context.Context, id string, o Options) (*Files, error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	o = withDefaults(o)
	if !revisionRe().MatchString(o.Revision) || strings.Contains(o.Revision, "..") {
		return nil, failf(ErrInvalidID, "invalid revision %q: want a branch, tag or commit", o.Revision)
	}
	for _, dir := range o.HubCaches {
		f, ok, err := fromHubCache(dir, id, o)
		if err != nil {
			return nil, err
		}
		if ok {
			return f, nil
		}
	}
	f, ok, err := fromOwnCache(o.Cache, id, o)
	if err != nil {
		return nil, err
	}
	if ok {
		return f, nil
	}
	if o.Offline {
		return nil, failf(ErrOffline, "%s is not in the Hugging Face cache (%s) and HF_HUB_OFFLINE forbids downloading it", id, strings.Join(o.HubCaches, ", "))
	}
	ep, err := parseEndpoint(o.Endpoint)
	if err != nil {
		return nil, err
	}
	o.ep = ep
	return download(ctx, id, o)
}

func withDefaults(o Options) Options {
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxConfig <= 0 {
		o.MaxConfig = DefaultMaxConfig
	}
	if o.MaxIndex <= 0 {
		o.MaxIndex = DefaultMaxIndex
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	return o
}

// fromHubCache reads the huggingface_hub layout:
// DIR/models--ORG--NAME/refs/REVISION holds a commit, whose files are in
// DIR/models--ORG--NAME/snapshots/COMMIT/. A revision that is itself a
// commit is looked up directly.
func fromHubCache(dir, id string, o Options) (*Files, bool, error) {
	if dir == "" {
		return nil, false, nil
	}
	repo := filepath.Join(dir, "models--"+strings.ReplaceAll(id, "/", "--"))
	commit := o.Revision
	if ref, err := userfile.Read(filepath.Join(repo, "refs", filepath.FromSlash(o.Revision)), 256); err == nil {
		commit = strings.TrimSpace(string(ref))
	}
	if !revisionRe().MatchString(commit) || strings.ContainsAny(commit, "/\\") {
		return nil, false, nil
	}
	snap := filepath.Join(repo, "snapshots", commit)
	cfg, err := userfile.Read(filepath.Join(snap, ConfigFile), o.MaxConfig)
	if err != nil || !json.Valid(cfg) {
		return nil, false, nil
	}
	f := &Files{Repo: id, Config: cfg, From: snap}
	ix, err := readIndex(snap, o)
	if err != nil {
		return nil, false, err
	}
	f.Index = ix
	return f, true, nil
}

// readIndex reads dir's index: nil when there is none (one weights file);
// an index that is there but cannot be used (over MaxIndex, which is
// refused from its size before a byte is read, or unreadable) is an
// error, never silently "no index": the estimate would then count the
// parameters from config.json alone and say nothing.
func readIndex(dir string, o Options) ([]byte, error) {
	p := filepath.Join(dir, IndexFile)
	ix, err := userfile.ReadAs(p, o.MaxIndex, "a "+IndexFile)
	switch {
	case err == nil:
		return ix, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	}
	return nil, failf(ErrBadAnswer, "%s: %v", p, err)
}

// ownDir is where devctl keeps a model's downloaded files.
func ownDir(cache, id string, o Options) string {
	return filepath.Join(cache, strings.ReplaceAll(id, "/", "--"), strings.ReplaceAll(o.Revision, "/", "--"))
}

// noIndex marks a model known to have no index (one safetensors file).
const noIndex = "no-index"

func fromOwnCache(cache, id string, o Options) (*Files, bool, error) {
	if cache == "" {
		return nil, false, nil
	}
	dir := ownDir(cache, id, o)
	cfg, err := userfile.Read(filepath.Join(dir, ConfigFile), o.MaxConfig)
	if err != nil || !json.Valid(cfg) {
		return nil, false, nil
	}
	f := &Files{Repo: id, Config: cfg, From: dir}
	ix, err := readIndex(dir, o)
	switch {
	case err != nil:
		return nil, false, err
	case ix != nil:
		f.Index = ix
	case !exists(filepath.Join(dir, noIndex)):
		return nil, false, nil // the index was never asked for: ask again
	}
	return f, true, nil
}

func download(ctx context.Context, id string, o Options) (*Files, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cfg, from, err := get(ctx, id, ConfigFile, o.MaxConfig, o)
	if err != nil {
		return nil, err
	}
	if !json.Valid(cfg) || !bytes.HasPrefix(bytes.TrimSpace(cfg), []byte("{")) {
		return nil, failf(ErrBadAnswer, "%s's %s from %s is not a JSON object", id, ConfigFile, o.ep.display)
	}
	f := &Files{Repo: id, Config: cfg, From: from}
	ix, _, err := get(ctx, id, IndexFile, o.MaxIndex, o)
	switch {
	case err == nil:
		if _, perr := ParseIndex(ix); perr != nil {
			return nil, failf(ErrBadAnswer, "%s's %s", id, perr.Error())
		}
		f.Index = ix
	case errors.Is(err, errNoEntry):
		// one safetensors file, no index
	default:
		return nil, err
	}
	if o.Accept == nil || o.Accept(f.Config, f.Index) == nil {
		save(o.Cache, id, o, f)
	}
	return f, nil
}

var errNoEntry = errors.New("no such file in the repository")

func get(ctx context.Context, id, file string, limit int64, o Options) ([]byte, string, error) {
	u := o.ep.file(id, o.Revision, file)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", failf(ErrBadAnswer, "HF_ENDPOINT %s: cannot build a request for %s", o.ep.display, file)
	}
	req.Header.Set("User-Agent", "devctl (config.json only)")
	resp, err := o.ep.client(o.Client, o.Token).Do(req)
	shown := o.ep.display
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", failf(ErrOffline, "%s did not answer within %s (set HF_HUB_OFFLINE=1 to use only the local cache)", shown, o.Timeout)
		}
		return nil, "", failf(ErrOffline, "cannot reach %s: %v (set HF_HUB_OFFLINE=1 to use only the local cache)", shown, unwrapURL(err))
	}
	defer resp.Body.Close()
	code := resp.Header.Get("X-Error-Code")
	switch {
	case resp.StatusCode == http.StatusOK:
	case code == "GatedRepo" || resp.StatusCode == http.StatusForbidden:
		return nil, "", failf(ErrGated, "%s is gated: accept its conditions on %s/%s, then set HF_TOKEN", id, shown, id)
	case resp.StatusCode == http.StatusUnauthorized && o.Token == "":
		return nil, "", failf(ErrUnauthorized, "%s is private or gated, or does not exist: set HF_TOKEN to a token that can read it", id)
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, "", failf(ErrUnauthorized, "the Hub refused the token in HF_TOKEN for %s", id)
	case resp.StatusCode == http.StatusNotFound && code == "EntryNotFound":
		if file == IndexFile {
			return nil, "", errNoEntry
		}
		return nil, "", failf(ErrNotFound, "%s has no %s (is it a model repository?)", id, file)
	case resp.StatusCode == http.StatusNotFound:
		if file == IndexFile {
			return nil, "", errNoEntry
		}
		return nil, "", failf(ErrNotFound, "no model %s on %s", id, shown)
	default:
		return nil, "", failf(ErrBadAnswer, "%s answered %s for %s", shown, resp.Status, file)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, "", failf(ErrOffline, "reading %s from %s: %v", file, shown, err)
	}
	if int64(len(data)) > limit {
		return nil, "", failf(ErrBadAnswer, "%s's %s from %s is larger than %d bytes: not a %s", id, file, shown, limit, file)
	}
	return data, o.ep.shownFile(id, o.Revision, file), nil
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// save keeps the downloaded files under the one output policy
// (target.Cache: never through a link); a failure to cache only costs a
// download next time, so it is not an error.
func save(cache, id string, o Options, f *Files) {
	if cache == "" {
		return
	}
	dir := ownDir(cache, id, o)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	if f.Index != nil {
		_ = target.Cache.Write(filepath.Join(dir, IndexFile), f.Index)
	} else {
		_ = target.Cache.Write(filepath.Join(dir, noIndex), nil)
	}
	_ = target.Cache.Write(filepath.Join(dir, ConfigFile), f.Config)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// OptionsFromEnv reads the Hugging Face settings from an environment, as
// huggingface_hub does: HF_HUB_CACHE, else HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub or ~/.cache/huggingface/hub; HF_TOKEN;
// HF_ENDPOINT; HF_HUB_OFFLINE. Downloads are kept under devctl's own cache
// directory ($XDG_CACHE_HOME/devctl/hf), never in Hugging Face's.
func OptionsFromEnv(lookupEnv func(string) (string, bool)) Options {
	getenv := func(k string) string {
		if lookupEnv == nil {
			return ""
		}
		v, _ := lookupEnv(k)
		return v
	}
	cacheHome := getenv("XDG_CACHE_HOME")
	if cacheHome == "" {
		if home := getenv("HOME"); home != "" {
			cacheHome = filepath.Join(home, ".cache")
		}
	}
	var hubCaches []string
	switch {
	case getenv("HF_HUB_CACHE") != "":
		hubCaches = append(hubCaches, getenv("HF_HUB_CACHE"))
	case getenv("HF_HOME") != "":
		hubCaches = append(hubCaches, filepath.Join(getenv("HF_HOME"), "hub"))
	case cacheHome != "":
		hubCaches = append(hubCaches, filepath.Join(cacheHome, "huggingface", "hub"))
	}
	o := Options{HubCaches: hubCaches, Token: getenv("HF_TOKEN"), Endpoint: getenv("HF_ENDPOINT")}
	if cacheHome != "" {
		o.Cache = filepath.Join(cacheHome, "devctl", "hf")
	}
	switch strings.ToLower(strings.TrimSpace(getenv("HF_HUB_OFFLINE"))) {
	case "1", "true", "yes", "on":
		o.Offline = true
	}
	return o
}
