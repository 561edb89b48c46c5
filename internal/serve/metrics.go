package serve

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

const mib = 1 << 20

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("devctl_"+name, help, labels, nil)
}

// The metrics /metrics exposes; docs/cluster.md lists them with examples.
var (
	descBuild         = desc("build_info", "devctl's version; always 1.", "version")
	descProbeRuns     = desc("probe_runs_total", "Probes run since start (at most one per --interval, however many scrapes).")
	descProbeFails    = desc("probe_failures_total", "Probes that failed since start.")
	descProbeTime     = desc("probe_timestamp_seconds", "When the cached probe started (Unix time).")
	descProbeDuration = desc("probe_duration_seconds", "How long the cached probe and checks took.")
	descProbeUp       = desc("probe_success", "1 when the cached probe succeeded, else 0.")
	descDeviceInfo    = desc("device_info", "One series per device; the labels describe it. Always 1.",
		"device", "backend", "device_type", "vendor", "name", "uuid", "pci_bus_id", "architecture", "compute_capability")
	descMemTotal  = desc("device_memory_total_bytes", "Device memory, in bytes.", "device")
	descMemFree   = desc("device_memory_free_bytes", "Free device memory at the probe, in bytes.", "device")
	descSupports  = desc("device_supports", "1 when the device runs this precision, else 0.", "device", "precision")
	descLinkWidth = desc("device_pcie_link_width", "PCIe link width (lanes), current and maximum.", "device", "kind")
	descLinkGen   = desc("device_pcie_link_generation", "PCIe link generation, current and maximum.", "device", "kind")
	descDriver    = desc("driver_status", "How each probe driver went: 1 for its status.", "driver", "status")
	descCheck     = desc("doctor_check", "Health of each doctor check: 1 for its status (pass, warn, fail, skip, error, timeout).", "check", "status")
	descChecks    = desc("doctor_checks", "Doctor checks per status.", "status")
	descBench     = desc("bench_result", "Last benchmark figures recorded on this host (devctl bench), in the unit named.", "suite", "name", "unit", "threads")
	descBenchEff  = desc("bench_efficiency_ratio", "Last benchmark figure over the hardware's theoretical peak.", "suite", "name", "threads")
	descBenchTime = desc("bench_timestamp_seconds", "When the last recorded benchmark ran (Unix time).")
)

// collector turns the cached snapshot into metrics on every scrape. It
// never probes: a stale snapshot starts a background refresh in Get.
type collector struct {
	cache   *Cache
	version string
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuild, descProbeRuns, descProbeFails, descProbeTime, descProbeDuration,
		descProbeUp, descDeviceInfo, descMemTotal, descMemFree, descSupports, descLinkWidth, descLinkGen,
		descDriver, descCheck, descChecks, descBench, descBenchEff, descBenchTime} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		for i, l := range labels {
			labels[i] = clean(l)
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descBuild, 1, c.version)
	ch <- prometheus.MustNewConstMetric(descProbeRuns, prometheus.CounterValue, float64(c.cache.Runs()))
	ch <- prometheus.MustNewConstMetric(descProbeFails, prometheus.CounterValue, float64(c.cache.Failures()))
	snap, _ := c.cache.Get(context.Background())
	if snap == nil {
		return
	}
	gauge(descProbeTime, float64(snap.Time.UnixNano())/1e9)
	gauge(descProbeDuration, snap.Duration.Seconds())
	gauge(descProbeUp, b2f(snap.Err == nil && snap.Probe != nil))
	if rep := snap.Probe; rep != nil {
		for _, d := range rep.Devices {
			gauge(descDeviceInfo, 1, d.ID, string(d.Backend), d.DeviceType, d.Vendor, d.Name, str(d.UUID), str(d.PCIBusID), str(d.Architecture), str(d.ComputeCapability))
			if d.TotalMemoryMB != nil {
				gauge(descMemTotal, float64(*d.TotalMemoryMB)*mib, d.ID)
			}
			if d.FreeMemoryMB != nil {
				gauge(descMemFree, float64(*d.FreeMemoryMB)*mib, d.ID)
			}
			for _, p := range []struct {
				name string
				on   bool
			}{{"fp16", d.SupportsFP16}, {"bf16", d.SupportsBF16}, {"8bit", d.Supports8Bit}, {"fp8", d.SupportsFP8}} {
				gauge(descSupports, b2f(p.on), d.ID, p.name)
			}
			if l := d.Link; l != nil {
				link(gauge, descLinkWidth, d.ID, l.WidthCurrent, l.WidthMax)
				link(gauge, descLinkGen, d.ID, l.GenCurrent, l.GenMax)
			}
		}
		for _, dr := range rep.Drivers {
			gauge(descDriver, 1, dr.Name, dr.Status)
		}
	}
	if doc := snap.Doctor; doc != nil {
		for _, r := range doc.Checks {
			gauge(descCheck, 1, r.ID, string(r.Status))
		}
		for st, n := range doc.Summary {
			gauge(descChecks, float64(n), string(st))
		}
	}
	if run := snap.Bench; run != nil {
		gauge(descBenchTime, float64(run.Time.UnixNano())/1e9)
		seen := map[string]bool{}
		for _, r := range run.Results {
			th := strconv.Itoa(r.Threads)
			if key := r.Suite + "\x00" + r.Name + "\x00" + th; seen[key] {
				continue
			} else {
				seen[key] = true
			}
			gauge(descBench, r.Value, r.Suite, r.Name, r.Unit, th)
			if r.Efficiency != nil {
				gauge(descBenchEff, *r.Efficiency, r.Suite, r.Name, th)
			}
		}
	}
}

func link(gauge func(*prometheus.Desc, float64, ...string), d *prometheus.Desc, id string, cur, max *int) {
	if cur != nil {
		gauge(d, float64(*cur), id, "current")
	}
	if max != nil {
		gauge(d, float64(*max), id, "max")
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// clean keeps a label value valid UTF-8 and bounded: device names come
// from sysfs and drivers, which may hold anything.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > 256 {
		s = s[:256]
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// snapshotGatherer gathers the devctl_ metrics once per snapshot: they
// change only when a refresh lands, so every scrape in between encodes
// the same families (the promhttp handler only reads them) and a scrape
// costs the encoding alone.
type snapshotGatherer struct {
	cache *Cache
	reg   *prometheus.Registry

	mu   sync.Mutex
	key  gatherKey
	mfs  []*dto.MetricFamily
	err  error
	have bool
}

type gatherKey struct {
	snap        *Snapshot
	runs, fails int64
}

func (g *snapshotGatherer) Gather() ([]*dto.MetricFamily, error) {
	key := g.current()
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.have || g.key != key {
		g.mfs, g.err = g.reg.Gather()
		g.key, g.have = key, true
	}
	return g.mfs, g.err
}

// encodedMetrics serves /metrics from the encoded answer of the current
// snapshot: client_golang's handler renders it once per snapshot and per
// negotiated Accept/Accept-Encoding pair, and every scrape until the next
// refresh gets those bytes. Rendering dominated a scrape's cost.
type encodedMetrics struct {
	render   http.Handler
	gatherer *snapshotGatherer

	mu      sync.Mutex
	key     gatherKey
	answers map[string]*recorded
}

// maxAnswers bounds the cached header combinations; odd clients beyond it
// are rendered for afresh.
const maxAnswers = 16

type recorded struct {
	header http.Header
	status int
	body   []byte
}

func (e *encodedMetrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := e.gatherer.current()
	neg := r.Header.Get("Accept") + "\x00" + r.Header.Get("Accept-Encoding")
	e.mu.Lock()
	if e.key != key || e.answers == nil {
		e.key, e.answers = key, map[string]*recorded{}
	}
	ans := e.answers[neg]
	e.mu.Unlock()
	if ans == nil {
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		e.render.ServeHTTP(rec, r)
		ans = &recorded{header: rec.header, status: rec.status, body: rec.body.Bytes()}
		if ans.status == http.StatusOK {
			e.mu.Lock()
			if e.key == key && len(e.answers) < maxAnswers {
				e.answers[neg] = ans
			}
			e.mu.Unlock()
		}
	}
	h := w.Header()
	for k, v := range ans.header {
		h[k] = v
	}
	w.WriteHeader(ans.status)
	_, _ = w.Write(ans.body)
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.status = code }

// current returns the key of the snapshot scrapes now see, starting a
// refresh when it is stale.
func (g *snapshotGatherer) current() gatherKey {
	snap, _ := g.cache.Get(context.Background())
	return gatherKey{snap, g.cache.Runs(), g.cache.Failures()}
}
