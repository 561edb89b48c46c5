package serve

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

const mib = 1 << 20

// The devctl_ families; docs/cluster.md lists them with examples.
func devctlFamilies(snap *Snapshot, runs, fails int64, version string) []*family {
	var (
		build         = newFamily("devctl_build_info", "devctl's version; always 1.", gauge, "version")
		probeRuns     = newFamily("devctl_probe_runs_total", "Probes run since start (at most one per --interval, however many scrapes).", counter)
		probeFails    = newFamily("devctl_probe_failures_total", "Probes that failed since start.", counter)
		probeTime     = newFamily("devctl_probe_timestamp_seconds", "When the cached probe started (Unix time).", gauge)
		probeDuration = newFamily("devctl_probe_duration_seconds", "How long the cached probe and checks took.", gauge)
		probeUp       = newFamily("devctl_probe_success", "1 when the cached probe succeeded, else 0.", gauge)
		deviceInfo    = newFamily("devctl_device_info", "One series per device; the labels describe it. Always 1.", gauge,
			"device", "backend", "device_type", "vendor", "name", "uuid", "pci_bus_id", "architecture", "compute_capability")
		memTotal  = newFamily("devctl_device_memory_total_bytes", "Device memory, in bytes.", gauge, "device")
		memFree   = newFamily("devctl_device_memory_free_bytes", "Free device memory at the probe, in bytes.", gauge, "device")
		supports  = newFamily("devctl_device_supports", "1 when the device runs this precision, else 0.", gauge, "device", "precision")
		linkWidth = newFamily("devctl_device_pcie_link_width", "PCIe link width (lanes), current and maximum.", gauge, "device", "kind")
		linkGen   = newFamily("devctl_device_pcie_link_generation", "PCIe link generation, current and maximum.", gauge, "device", "kind")
		driver    = newFamily("devctl_driver_status", "How each probe driver went: 1 for its status.", gauge, "driver", "status")
		check     = newFamily("devctl_doctor_check", "Health of each doctor check: 1 for its status (pass, warn, fail, skip, error, timeout).", gauge, "check", "status")
		checks    = newFamily("devctl_doctor_checks", "Doctor checks per status.", gauge, "status")
		benchRes  = newFamily("devctl_bench_result", "Last benchmark figures recorded on this host (devctl bench), in the unit named.", gauge, "suite", "name", "unit", "threads")
		benchEff  = newFamily("devctl_bench_efficiency_ratio", "Last benchmark figure over the hardware's theoretical peak.", gauge, "suite", "name", "threads")
		benchTime = newFamily("devctl_bench_timestamp_seconds", "When the last recorded benchmark ran (Unix time).", gauge)
	)
	fams := []*family{build, probeRuns, probeFails, probeTime, probeDuration, probeUp, deviceInfo, memTotal, memFree,
		supports, linkWidth, linkGen, driver, check, checks, benchRes, benchEff, benchTime}
	lv := labelValue
	build.add(1, lv(version))
	probeRuns.add(float64(runs))
	probeFails.add(float64(fails))
	if snap == nil {
		return fams
	}
	probeTime.add(float64(snap.Time.UnixNano()) / 1e9)
	probeDuration.add(snap.Duration.Seconds())
	probeUp.add(b2f(snap.Err == nil && snap.Probe != nil))
	if rep := snap.Probe; rep != nil {
		for _, d := range rep.Devices {
			id := lv(d.ID)
			deviceInfo.add(1, id, lv(string(d.Backend)), lv(d.DeviceType), lv(d.Vendor), lv(d.Name), lv(str(d.UUID)), lv(str(d.PCIBusID)),
				lv(str(d.Architecture)), lv(str(d.ComputeCapability)))
			if d.TotalMemoryMB != nil {
				memTotal.add(float64(*d.TotalMemoryMB)*mib, id)
			}
			if d.FreeMemoryMB != nil {
				memFree.add(float64(*d.FreeMemoryMB)*mib, id)
			}
			supports.add(b2f(d.SupportsFP16), id, "fp16")
			supports.add(b2f(d.SupportsBF16), id, "bf16")
			supports.add(b2f(d.Supports8Bit), id, "8bit")
			supports.add(b2f(d.SupportsFP8), id, "fp8")
			if l := d.Link; l != nil {
				link(linkWidth, id, l.WidthCurrent, l.WidthMax)
				link(linkGen, id, l.GenCurrent, l.GenMax)
			}
		}
		for _, dr := range rep.Drivers {
			driver.add(1, lv(dr.Name), lv(dr.Status))
		}
	}
	if doc := snap.Doctor; doc != nil {
		for _, r := range doc.Checks {
			check.add(1, lv(r.ID), lv(string(r.Status)))
		}
		for st, n := range doc.Summary {
			checks.add(float64(n), lv(string(st)))
		}
	}
	if run := snap.Bench; run != nil {
		benchTime.add(float64(run.Time.UnixNano()) / 1e9)
		for _, r := range run.Results { // a repeated suite/name/threads keeps its first figure
			th := strconv.Itoa(r.Threads)
			benchRes.add(r.Value, lv(r.Suite), lv(r.Name), lv(r.Unit), th)
			if r.Efficiency != nil {
				benchEff.add(*r.Efficiency, lv(r.Suite), lv(r.Name), th)
			}
		}
	}
	return fams
}

func link(f *family, id string, cur, max *int) {
	if cur != nil {
		f.add(float64(*cur), id, "current")
	}
	if max != nil {
		f.add(float64(*max), id, "max")
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

// metricsHandler serves /metrics. The devctl_ metrics change only when a
// refresh starts or lands, so they are rendered once per snapshot (and
// gzipped once, when a client first asks for gzip); every scrape until
// the next refresh is a copy of those bytes. The runtime metrics, when
// asked for, change on every scrape and are rendered for each.
type metricsHandler struct {
	cache   *Cache
	version string
	runtime bool

	mu  sync.Mutex
	cur *rendered
}

// renderKey names what the devctl_ metrics were rendered from.
type renderKey struct {
	snap        *Snapshot
	runs, fails int64
}

type rendered struct {
	key    renderKey
	text   []byte
	gzOnce sync.Once
	gz     []byte
}

func (r *rendered) gzipped() []byte {
	r.gzOnce.Do(func() { r.gz = gzipBytes(r.text, gzip.BestCompression) })
	return r.gz
}

func (h *metricsHandler) current(r *http.Request) *rendered {
	// A stale snapshot is returned at once and starts a refresh; only
	// before the first one does this wait (bounded by the request).
	snap, _ := h.cache.Get(r.Context())
	key := renderKey{snap, h.cache.Runs(), h.cache.Failures()}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil || h.cur.key != key {
		h.cur = &rendered{key: key, text: appendText(nil, devctlFamilies(snap, key.runs, key.fails, h.version))}
	}
	return h.cur
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ans := h.current(r)
	gz := acceptsGzip(r.Header.Values("Accept-Encoding"))
	body := ans.text
	switch {
	case h.runtime:
		body = appendText(bytes.Clone(ans.text), runtimeFamilies())
		if gz {
			body = gzipBytes(body, gzip.BestSpeed)
		}
	case gz:
		body = ans.gzipped()
	}
	hd := w.Header()
	hd.Set("Content-Type", textContentType)
	hd.Set("Vary", "Accept-Encoding")
	if gz {
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func gzipBytes(b []byte, level int) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, level) // the level is a valid constant
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// acceptsGzip reports whether an Accept-Encoding header names gzip with a
// weight above zero (RFC 9110, section 12.5.3). Like client_golang, only a
// named gzip counts: "*" is answered uncompressed, which it also allows.
func acceptsGzip(headers []string) bool {
	for _, h := range headers {
		for part := range strings.SplitSeq(h, ",") {
			coding, params, _ := strings.Cut(part, ";")
			if coding = strings.TrimSpace(coding); !strings.EqualFold(coding, "gzip") && !strings.EqualFold(coding, "x-gzip") {
				continue
			}
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				if k, v, ok := strings.Cut(p, "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						q = f
					}
				}
			}
			return q > 0
		}
	}
	return false
}
