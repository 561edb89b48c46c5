package serve

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/probe"
)

var update = flag.Bool("update", false, "rewrite testdata/*.prom with what /metrics answers now")

// fullSnapshot sets every metric devctl exports, the bench ones included
// (a --from snapshot has none), and a failed refresh. The devices are those
// of testdata/snapshots/nvidia-h100-pcie-x2 and cpu-x86-sapphire-rapids (as
// their /metrics in internal/cmd/serve/testdata/metrics show them); the
// bench results are the example run of docs/bench.md (fma_fp32 475.1
// GFLOPS, triad 48.9 GB/s with its median 48.1 as a repeated figure, the
// computed pcie link 15.75 GB/s at efficiency 0.5).
func fullSnapshot() *Snapshot {
	eff := 0.5
	return &Snapshot{
		Probe: &probe.Report{
			Devices: []probe.Device{
				{ID: "cuda:0", Backend: "cuda", DeviceType: "gpu", Vendor: "NVIDIA", Name: "NVIDIA H100 PCIe", UUID: probe.Ptr("GPU-00000000-0000-4000-8000-000000000001"),
					PCIBusID: probe.Ptr("00000000:17:00.0"), Architecture: probe.Ptr("Hopper"), ComputeCapability: probe.Ptr("9.0"),
					TotalMemoryMB: probe.Ptr(int64(81920)), FreeMemoryMB: probe.Ptr(int64(80896)), SupportsFP16: true, SupportsBF16: true, Supports8Bit: true, SupportsFP8: true,
					Link: &probe.PCIeLink{WidthCurrent: probe.Ptr(8), WidthMax: probe.Ptr(16), GenCurrent: probe.Ptr(5), GenMax: probe.Ptr(5)}},
				{ID: "cpu", Backend: "cpu", DeviceType: "cpu", Vendor: "Intel", Name: "Intel(R) Xeon(R) Platinum 8488C", Architecture: probe.Ptr("amd64"), SupportsBF16: true,
					Link: &probe.PCIeLink{GenMax: probe.Ptr(5)}},
			},
			Drivers: []probe.DriverStatus{{Name: "nvidia", Status: probe.StatusOK}, {Name: "rocm", Status: probe.StatusAbsent}, {Name: "xla", Status: "timeout"}},
		},
		Doctor: &doctor.Report{Checks: []doctor.Result{{ID: "pcie.link_width", Status: doctor.Warn}, {ID: "nvidia.driver_loaded", Status: doctor.Pass}},
			Summary: map[doctor.Status]int{doctor.Warn: 1, doctor.Pass: 1}},
		Bench: &bench.Run{Time: time.Date(2026, 11, 24, 10, 30, 0, 500_000_000, time.UTC), Results: []bench.Result{
			{Suite: "cpu", Name: "fma_fp32", Threads: 2, Value: 475.1, Unit: "GFLOPS"},
			{Suite: "memory", Name: "triad", Threads: 2, Value: 48.9, Unit: "GB/s"},
			{Suite: "memory", Name: "triad", Threads: 2, Value: 48.1, Unit: "GB/s"}, // a repeat must not break the scrape
			{Suite: "link", Name: "pcie", Threads: 0, Value: 15.75, Unit: "GB/s", Efficiency: &eff},
		}},
		Err: context.DeadlineExceeded,
	}
}

// TestFullSnapshotGolden compares /metrics for fullSnapshot with
// testdata/full.prom, first written by the client_golang collector
// (testdata/README.md): the same families, series, order and bytes.
func TestFullSnapshotGolden(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	c := NewCache(func(ctx context.Context) *Snapshot { return fullSnapshot() }, time.Minute, time.Minute, clk.now)
	_, got := body(t, Handler(c, Options{Version: "v1.2.3", MaxInFlight: 4, Timeout: time.Second}), "/metrics")
	path := filepath.Join("testdata", "full.prom")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("/metrics differs from %s; got:\n%s", path, got)
	}
}
