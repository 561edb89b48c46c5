package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/devctl/devctl/internal/cmd/factory"
	"github.com/devctl/devctl/internal/cmd/root"
	servecmd "github.com/devctl/devctl/internal/cmd/serve"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/iostreams"
	"github.com/devctl/devctl/schemas"
)

// start runs `devctl --from SNAPSHOT serve` on a loopback port and returns
// its base URL and a stop function that shuts it down as SIGTERM does.
func start(t *testing.T, snapshot string, interval time.Duration, mods ...func(*servecmd.Options)) (string, func() error) {
	t.Helper()
	io, _, _, _ := iostreams.Test()
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir()}
	f := factory.New(io, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "dev")
	f.Global.From = snapshot
	f.Global.Timeout = 5 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opts := servecmd.NewOptions(f)
	opts.Interval, opts.MaxInFlight, opts.RequestTimeout, opts.Listener = time.Hour, 64, 5*time.Second, ln
	if interval > 0 {
		opts.Interval = interval
	}
	for _, m := range mods {
		m(opts)
	}
	go func() { done <- cmdutil.RunSteps(ctx, opts) }()
	base := "http://" + ln.Addr().String()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if code, _ := get(t, base+"/readyz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(10 * time.Second):
				stopErr = fmt.Errorf("the server did not shut down")
			}
		})
		return stopErr
	}
	t.Cleanup(func() { _ = stop() })
	return base, stop
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func snapshot(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "snapshots", name))
	return p
}

func metricValue(t *testing.T, body []byte, series string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no series %s in /metrics", series)
	}
	return string(m[1])
}

func TestServeMetricsFromARealSnapshot(t *testing.T) {
	base, stop := start(t, snapshot("nvidia-h100-pcie-x2.tar.gz"), 0)
	code, body := get(t, base+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`devctl_device_info{architecture="Hopper",backend="cuda",compute_capability="9.0",device="cuda:0",device_type="gpu",name="NVIDIA H100 PCIe",pci_bus_id="00000000:17:00.0",uuid="GPU-00000000-0000-4000-8000-000000000001",vendor="NVIDIA"} 1`,
		`devctl_device_memory_total_bytes{device="cuda:1"} 8.589934592e+10`,
		`devctl_device_memory_free_bytes{device="cuda:0"} 8.4825604096e+10`,
		`devctl_device_pcie_link_width{device="cuda:0",kind="current"} 8`,
		`devctl_device_supports{device="cuda:0",precision="bf16"} 1`,
		`devctl_doctor_check{check="pcie.link_width",status="warn"} 1`,
		`devctl_driver_status{driver="nvidia",status="ok"} 1`,
		`devctl_probe_success 1`,
		`devctl_probe_runs_total 1`,
	} {
		if !bytes.Contains(body, []byte(want+"\n")) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if bytes.Contains(body, []byte("devctl_bench_result")) {
		t.Error("a --from snapshot must not export this machine's bench history")
	}
	if err := stop(); err != nil {
		t.Fatalf("graceful shutdown: %v", err)
	}
}

func TestServeProbesOnceUnderConcurrentLoad(t *testing.T) {
	base, _ := start(t, snapshot("nvidia-h100-pcie-x2.tar.gz"), 0)
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := []string{"/metrics", "/v1/probe", "/v1/doctor"}[i%3]
			if code, _ := get(t, base+path); code != 200 && code != 503 {
				t.Errorf("%s: %d", path, code)
			}
		}()
	}
	wg.Wait()
	_, body := get(t, base+"/metrics")
	if got := metricValue(t, body, "devctl_probe_runs_total"); got != "1" {
		t.Fatalf("400 requests within the interval ran %s probes, want 1", got)
	}
}

func TestServeJSONMatchesSchemas(t *testing.T) {
	base, _ := start(t, snapshot("rocm-mi300x-cpx.tar.gz"), 0)
	for path, name := range map[string]string{"/v1/probe": "probe", "/v1/doctor": "doctor"} {
		code, body := get(t, base+path)
		if code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		raw, _ := schemas.Get(name)
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		c := jsonschema.NewCompiler()
		_ = c.AddResource(schemas.ID(name), doc)
		s, err := c.Compile(schemas.ID(name))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s is not JSON: %v", path, err)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s does not match the %s schema: %v", path, name, err)
		}
	}
	if code, body := get(t, base+"/nope"); code != 404 || !strings.Contains(string(body), "/metrics") {
		t.Errorf("/nope: %d %s", code, body)
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
}

func TestServeRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--interval", "10ms"},
		{"serve", "--listen", "9455"},
		{"serve", "--max-in-flight", "0"},
		{"serve", "--request-timeout", "0s"},
	} {
		io, _, _, errOut := iostreams.Test()
		if code := root.Main(args, io, func(string) (string, bool) { return "", false }); code != 2 {
			t.Errorf("devctl %s: exit %d, want 2 (%s)", strings.Join(args, " "), code, errOut)
		}
	}
}

func TestServeWritesNFDLabelsAfterEachProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "devctl")
	start(t, snapshot("tpu-v6e-8.tar.gz"), 0, func(o *servecmd.Options) { o.NFDFile = path })
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no feature file after the first probe: %v", err)
	}
	for _, want := range []string{"# +expiry-time=", "devctl.io/tpu.generation=v6e\n", "devctl.io/tpu.chips=8\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("feature file lacks %q:\n%s", want, b)
		}
	}
}

// signalRun is `devctl --from SNAPSHOT serve` run with a signal channel in
// place of the process's signals, a first probe that waits for release,
// and a GET /v1/probe that waits for that probe: a request in flight.
type signalRun struct {
	base     string
	sigs     chan os.Signal
	release  func()
	inflight chan probeAnswer
	done     chan error
	errOut   *bytes.Buffer
}

type probeAnswer struct {
	code int
	body []byte
	err  error
}

func runWithSignals(t *testing.T) *signalRun {
	t.Helper()
	ios, _, _, errOut := iostreams.Test()
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "XDG_STATE_HOME": t.TempDir()}
	f := factory.New(ios, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, "dev")
	f.Global.From = snapshot("nvidia-h100-pcie-x2.tar.gz")
	f.Global.Timeout = 5 * time.Second
	rel := make(chan struct{})
	var once sync.Once
	r := &signalRun{sigs: make(chan os.Signal, 2), release: func() { once.Do(func() { close(rel) }) },
		inflight: make(chan probeAnswer, 1), done: make(chan error, 1), errOut: errOut}
	t.Cleanup(r.release)
	var calls atomic.Int64
	hostFunc := f.HostFunc
	f.HostFunc = func() (*host.Host, error) {
		if calls.Add(1) > 1 { // the first call is Run's early check; the next ones probe
			<-rel
		}
		return hostFunc()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := servecmd.NewOptions(f)
	opts.Interval, opts.MaxInFlight, opts.RequestTimeout, opts.Listener, opts.Signals = time.Hour, 64, 10*time.Second, ln, r.sigs
	go func() { r.done <- cmdutil.RunSteps(context.Background(), opts) }()
	r.base = "http://" + ln.Addr().String()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if code, _ := get(t, r.base+"/healthz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never answered /healthz")
		}
		time.Sleep(10 * time.Millisecond)
	}
	go func() {
		resp, err := http.Get(r.base + "/v1/probe")
		if err != nil {
			r.inflight <- probeAnswer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		r.inflight <- probeAnswer{code: resp.StatusCode, body: b, err: err}
	}()
	time.Sleep(100 * time.Millisecond) // the request reaches the handler and waits for the probe
	return r
}

func (r *signalRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// TestSignalsShutDownGracefully: each stop signal closes the listener,
// lets the request in flight finish, then Run returns the documented exit
// code: 0 for SIGTERM, 130 for SIGINT, 129 for SIGHUP.
func TestSignalsShutDownGracefully(t *testing.T) {
	tests := []struct {
		sig  os.Signal
		name string
		code int
	}{
		{syscall.SIGTERM, "SIGTERM", 0},
		{syscall.SIGINT, "SIGINT", 130},
		{syscall.SIGHUP, "SIGHUP", 129},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runWithSignals(t)
			r.sigs <- tc.sig
			select {
			case err := <-r.done:
				t.Fatalf("Run returned %v with a request in flight", err)
			case <-time.After(300 * time.Millisecond):
			}
			if code, _ := get(t, r.base+"/healthz"); code != 0 {
				t.Errorf("a new request after %s got %d; the listener must be closed", tc.name, code)
			}
			r.release()
			if a := <-r.inflight; a.err != nil || a.code != 200 || !bytes.Contains(a.body, []byte(`"devices"`)) {
				t.Errorf("the request in flight got %d %v: %.200s", a.code, a.err, a.body)
			}
			err := r.wait(t)
			if got := root.ExitCode(err); got != tc.code {
				t.Errorf("exit code %d (%v), want %d", got, err, tc.code)
			}
			if want := "devctl: " + tc.name + ": shutting down; in-flight requests get 5s\n"; !strings.Contains(r.errOut.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.errOut)
			}
		})
	}
}

// TestSecondSignalClosesConnections: a second Ctrl-C does not wait for
// the requests in flight.
func TestSecondSignalClosesConnections(t *testing.T) {
	r := runWithSignals(t)
	r.sigs <- syscall.SIGINT
	time.Sleep(100 * time.Millisecond)
	r.sigs <- syscall.SIGINT
	start := time.Now()
	err := r.wait(t)
	if root.ExitCode(err) != 130 || time.Since(start) > 2*time.Second {
		t.Errorf("Run returned %v after %s; want exit 130 at once", err, time.Since(start))
	}
	if a := <-r.inflight; a.err == nil {
		t.Errorf("the request in flight got %d; want its connection closed", a.code)
	}
	if !strings.Contains(r.errOut.String(), "devctl: SIGINT again: closing every connection now\n") {
		t.Errorf("stderr:\n%s", r.errOut)
	}
}

func TestListenIsValidated(t *testing.T) {
	tests := []struct {
		listen string
		want   string // "" when valid
	}{
		{"127.0.0.1:9455", ""},
		{":9455", ""},
		{"[::1]:9455", ""},
		{"localhost:9455", ""},
		{":0", ""},
		{":", `invalid --listen ":": the port is empty; want host:port`},
		{"127.0.0.1:", `invalid --listen "127.0.0.1:": the port is empty`},
		{":99999", `invalid --listen ":99999": port "99999" is not a number from 0 to 65535`},
		{":65536", `port "65536" is not a number from 0 to 65535`},
		{":-1", `invalid --listen ":-1": port "-1" is not a number from 0 to 65535`},
		{":http", `port "http" is not a number`},
		{"9455", `invalid --listen "9455": want host:port with a port from 1 to 65535`},
		{"", `invalid --listen "": want host:port`},
		{"::1:9455", `invalid --listen "::1:9455": want host:port`},
	}
	for _, tc := range tests {
		err := (&servecmd.Options{Listen: tc.listen, Interval: time.Minute, MaxInFlight: 1, RequestTimeout: time.Second}).Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("--listen %q: %v", tc.listen, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || root.ExitCode(err) != 2):
			t.Errorf("--listen %q: %v (exit %d), want exit 2 and %q", tc.listen, err, root.ExitCode(err), tc.want)
		}
	}
}
