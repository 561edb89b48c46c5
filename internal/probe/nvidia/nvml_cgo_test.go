//go:build linux && cgo

package nvidia

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// probeWith runs the driver against a host whose only NVIDIA source is lib,
// and returns its result and the raw answers doctor reads (Answers).
func probeWith(t *testing.T, lib nvml.Interface) (probe.Result, *Raw, error) {
	t.Helper()
	h := &host.Host{OS: "linux", FS: host.DirFS(t.TempDir()), Runner: host.NoRunner{}, NVML: FromInterface(lib)}
	res, err := New().Probe(context.Background(), h)
	raw, _ := Answers(h)
	return res, raw, err
}

func TestCollectDGXMocks(t *testing.T) {
	tests := []struct {
		name      string
		lib       nvml.Interface
		wantName  string
		wantMemMB int64
		wantCC    string
		wantArch  string
		wantBF16  bool
		wantFP8   bool
	}{
		{"a DGX A100 gives eight Ampere GPUs of 40 GiB with bf16 but no fp8", dgxa100.New(), "Mock NVIDIA A100-SXM4-40GB", 40960, "8.0", "Ampere", true, false},
		{"a DGX H100 gives eight Hopper GPUs of 80 GiB with fp8", dgxh100.New(), "NVIDIA H100 80GB HBM3", 81920, "9.0", "Hopper", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, raw, err := probeWith(t, tt.lib)
			if err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if res.Source != SourceNVML {
				t.Errorf("Source = %q, want nvml", res.Source)
			}
			if len(res.Devices) != 8 {
				t.Fatalf("got %d devices, want 8", len(res.Devices))
			}
			for i, d := range res.Devices {
				if d.ID != "cuda:"+string(rune('0'+i)) || d.Name != tt.wantName || d.TotalMemoryMB == nil || *d.TotalMemoryMB != tt.wantMemMB {
					t.Errorf("device %d = %s %q mem %v", i, d.ID, d.Name, d.TotalMemoryMB)
				}
				if d.ComputeCapability == nil || *d.ComputeCapability != tt.wantCC || d.Architecture == nil || *d.Architecture != tt.wantArch {
					t.Errorf("device %d cc %v arch %v, want %s %s", i, d.ComputeCapability, d.Architecture, tt.wantCC, tt.wantArch)
				}
				if !d.SupportsFP16 || d.SupportsBF16 != tt.wantBF16 || d.SupportsFP8 != tt.wantFP8 {
					t.Errorf("device %d precisions fp16=%v bf16=%v fp8=%v", i, d.SupportsFP16, d.SupportsBF16, d.SupportsFP8)
				}
				if d.UUID == nil || !strings.HasPrefix(*d.UUID, "GPU-") {
					t.Errorf("device %d uuid %v", i, d.UUID)
				}
				// The mocks leave power, temperature and PCIe unset: absent, not errors.
				if d.Link != nil {
					t.Errorf("device %d has a PCIe link the mock never set: %+v", i, d.Link)
				}
				if _, ok := d.Extra["power_draw_w"]; ok {
					t.Errorf("device %d has a power reading the mock never set", i)
				}
			}
			want := Platform(raw)
			if diff := cmp.Diff(probe.Ptr("550.54.15"), want.DriverVersion); diff != "" {
				t.Errorf("driver version (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(probe.Ptr("12.4"), res.Platform.RuntimeVersion); diff != "" {
				t.Errorf("CUDA version (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(probe.Ptr("12.550.54.15"), res.Platform.LibraryVersion); diff != "" {
				t.Errorf("NVML version (-want +got):\n%s", diff)
			}
			// The mock has no GetPowerUsage: a panic there must read as not supported.
			if g := raw.GPUs[0]; g.PowerUsageMW == nil || g.PowerUsageMW.Ret != ErrNotSupported {
				t.Errorf("power answer = %+v, want ERROR_NOT_SUPPORTED", g.PowerUsageMW)
			}
			if g := raw.GPUs[0]; g.MIGMode == nil || !g.MIGMode.OK() {
				t.Errorf("MIG mode answer = %+v, want success from the mock", g.MIGMode)
			}
		})
	}
}

// fullDevice is a GPU with every optional query answered, as an H100 PCIe
// on a server would.
func fullDevice(index int) *mock.Device {
	return &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return "NVIDIA H100 PCIe", nvml.SUCCESS },
		GetUUIDFunc: func() (string, nvml.Return) {
			return "GPU-4f6b1c2e-0000-0000-0000-00000000000" + string(rune('0'+index)), nvml.SUCCESS
		},
		GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) {
			return pciInfo(fmt.Sprintf("00000000:%02X:00.0", 0x17+index), 0x233110DE), nvml.SUCCESS
		},
		GetMinorNumberFunc: func() (int, nvml.Return) { return index, nvml.SUCCESS },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: 80 << 30, Reserved: 500 << 20, Free: 79 << 30, Used: 524 << 20}, nvml.SUCCESS
		},
		GetCudaComputeCapabilityFunc:       func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetArchitectureFunc:                func() (nvml.DeviceArchitecture, nvml.Return) { return nvml.DEVICE_ARCH_HOPPER, nvml.SUCCESS },
		GetBrandFunc:                       func() (nvml.BrandType, nvml.Return) { return nvml.BRAND_NVIDIA, nvml.SUCCESS },
		GetCurrPcieLinkGenerationFunc:      func() (int, nvml.Return) { return 5, nvml.SUCCESS },
		GetMaxPcieLinkGenerationFunc:       func() (int, nvml.Return) { return 5, nvml.SUCCESS },
		GetGpuMaxPcieLinkGenerationFunc:    func() (int, nvml.Return) { return 5, nvml.SUCCESS },
		GetCurrPcieLinkWidthFunc:           func() (int, nvml.Return) { return 8, nvml.SUCCESS },
		GetMaxPcieLinkWidthFunc:            func() (int, nvml.Return) { return 16, nvml.SUCCESS },
		GetPersistenceModeFunc:             func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS },
		GetMigModeFunc:                     func() (int, int, nvml.Return) { return 0, 1, nvml.SUCCESS },
		GetComputeModeFunc:                 func() (nvml.ComputeMode, nvml.Return) { return nvml.COMPUTEMODE_DEFAULT, nvml.SUCCESS },
		GetPowerUsageFunc:                  func() (uint32, nvml.Return) { return 61234, nvml.SUCCESS },
		GetEnforcedPowerLimitFunc:          func() (uint32, nvml.Return) { return 250000, nvml.SUCCESS },
		GetPowerManagementDefaultLimitFunc: func() (uint32, nvml.Return) { return 350000, nvml.SUCCESS },
		GetTemperatureFunc:                 func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 41, nvml.SUCCESS },
		GetCurrentClocksEventReasonsFunc:   func() (uint64, nvml.Return) { return 0x001 | 0x004, nvml.SUCCESS },
		GetEccModeFunc: func() (nvml.EnableState, nvml.EnableState, nvml.Return) {
			return nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED, nvml.SUCCESS
		},
		GetTotalEccErrorsFunc: func(_ nvml.MemoryErrorType, c nvml.EccCounterType) (uint64, nvml.Return) {
			if c == nvml.AGGREGATE_ECC {
				return 2, nvml.SUCCESS
			}
			return 0, nvml.SUCCESS
		},
		GetRetiredPagesPendingStatusFunc: func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_DISABLED, nvml.SUCCESS },
		GetRemappedRowsFunc:              func() (int, int, bool, bool, nvml.Return) { return 0, 1, true, false, nvml.SUCCESS },
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 2 << 30}}, nvml.SUCCESS
		},
		GetGpuFabricInfoFunc: func() (nvml.GpuFabricInfo, nvml.Return) { return nvml.GpuFabricInfo{}, nvml.ERROR_NOT_SUPPORTED },
		GetP2PStatusFunc: func(nvml.Device, nvml.GpuP2PCapsIndex) (nvml.GpuP2PStatus, nvml.Return) {
			return nvml.P2P_STATUS_CHIPSET_NOT_SUPPORTED, nvml.SUCCESS
		},
	}
}

func pciInfo(bus string, id uint32) nvml.PciInfo {
	p := nvml.PciInfo{PciDeviceId: id}
	for i := 0; i < len(bus) && i < len(p.BusId)-1; i++ {
		p.BusId[i] = int8(bus[i])
	}
	return p
}

// server builds an nvml.Interface over devices with the given init result.
func server(initRet nvml.Return, devices ...nvml.Device) *mock.Interface {
	return &mock.Interface{
		InitFunc:                          func() nvml.Return { return initRet },
		ShutdownFunc:                      func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:        func() (string, nvml.Return) { return "550.90.07", nvml.SUCCESS },
		SystemGetNVMLVersionFunc:          func() (string, nvml.Return) { return "12.550.90.07", nvml.SUCCESS },
		SystemGetCudaDriverVersion_v2Func: func() (int, nvml.Return) { return 12040, nvml.SUCCESS },
		DeviceGetCountFunc:                func() (int, nvml.Return) { return len(devices), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(devices) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devices[i], nvml.SUCCESS
		},
	}
}

func TestCollectEveryField(t *testing.T) {
	raw := Collect(context.Background(), server(nvml.SUCCESS, fullDevice(0), fullDevice(1)))
	if !raw.Usable() || len(raw.GPUs) != 2 {
		t.Fatalf("raw not usable: %+v", raw)
	}
	g := raw.GPUs[0]
	reserved := uint64(500 << 20)
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"the PCI bus id comes from the C string", g.PCI, Ok(PCIInfo{BusID: "00000000:17:00.0", DeviceID: 0x233110DE})},
		{"memory v2 carries the reserved amount", g.MemoryV2, Ok(Memory{Total: 80 << 30, Free: 79 << 30, Used: 524 << 20, Reserved: &reserved})},
		{"v1 memory is not asked when v2 answers", g.Memory, (*Answer[Memory])(nil)},
		{"MIG mode keeps current and pending apart", g.MIGMode, Ok(ModePair{Current: 0, Pending: 1})},
		{"remapped rows keep pending and failure", g.RemappedRows, Ok(RemappedRows{Uncorrectable: 1, Pending: true})},
		{"processes keep pid and memory", g.Processes, Ok([]Process{{PID: 4242, UsedMemoryBytes: 2 << 30}})},
		{"fabric info not supported stays an answer", g.Fabric, Fail[Fabric](ErrNotSupported)},
		{"aggregate ECC is read separately from volatile", g.ECCAggregateUncorrected, Ok(uint64(2))},
		{"P2P status is asked for the pair", raw.P2P, []P2PPair{{A: 0, B: 1, Read: Ok(1), NVLink: Ok(1)}}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}

	devs := Devices(raw)
	d := devs[0]
	wantLink := &probe.PCIeLink{GenCurrent: probe.Ptr(5), GenMax: probe.Ptr(5), WidthCurrent: probe.Ptr(8), WidthMax: probe.Ptr(16)}
	if diff := cmp.Diff(wantLink, d.Link); diff != "" {
		t.Errorf("link (-want +got):\n%s", diff)
	}
	wantExtra := map[string]any{
		"brand": "nvidia", "minor_number": 0, "memory_used_mb": int64(524), "memory_reserved_mb": int64(500),
		"persistence_mode": "enabled", "mig_mode_current": "disabled", "mig_mode_pending": "enabled",
		"compute_mode": "default", "power_draw_w": 61.234, "power_limit_w": 250.0, "power_default_limit_w": 350.0,
		"temperature_c": int64(41), "clocks_event_reasons": []string{"gpu_idle", "sw_power_cap"},
		"ecc_mode": "enabled", "ecc_volatile_uncorrected": int64(0), "ecc_aggregate_uncorrected": int64(2),
		"retired_pages_pending": false, "remapped_rows_correctable": 0, "remapped_rows_uncorrectable": 1,
		"remapped_rows_pending": true, "remapped_rows_failure": false, "compute_processes": 1,
	}
	if diff := cmp.Diff(wantExtra, d.Extra); diff != "" {
		t.Errorf("extra (-want +got):\n%s", diff)
	}
}

func TestCollectUnsupportedFieldsAreAbsent(t *testing.T) {
	notSupported := &mock.Device{
		GetNameFunc:                  func() (string, nvml.Return) { return "Tesla T4", nvml.SUCCESS },
		GetUUIDFunc:                  func() (string, nvml.Return) { return "GPU-1", nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 7, 5, nvml.SUCCESS },
		GetMemoryInfo_v2Func:         func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 15360 << 20, Free: 15000 << 20}, nvml.SUCCESS
		},
		GetArchitectureFunc:                 func() (nvml.DeviceArchitecture, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
		GetPowerUsageFunc:                   func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
		GetTemperatureFunc:                  func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
		GetMigModeFunc:                      func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED },
		GetRemappedRowsFunc:                 func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED },
		GetCurrentClocksEventReasonsFunc:    func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
		GetCurrentClocksThrottleReasonsFunc: func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
	}
	res, raw, err := probeWith(t, server(nvml.SUCCESS, notSupported))
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	d := res.Devices[0]
	if d.TotalMemoryMB == nil || *d.TotalMemoryMB != 15360 {
		t.Errorf("memory from the v1 fallback = %v, want 15360", d.TotalMemoryMB)
	}
	if d.Architecture == nil || *d.Architecture != "Turing" {
		t.Errorf("architecture derived from CC 7.5 = %v, want Turing", d.Architecture)
	}
	for _, k := range []string{"power_draw_w", "temperature_c", "mig_mode_current", "remapped_rows_pending", "clocks_event_reasons"} {
		if _, ok := d.Extra[k]; ok {
			t.Errorf("unsupported %s is present in extra: %v", k, d.Extra[k])
		}
	}
	g := raw.GPUs[0]
	if g.PowerUsageMW.Ret != ErrNotSupported || g.MIGMode.Ret != ErrNotSupported {
		t.Errorf("answers lost their return code: power %+v mig %+v", g.PowerUsageMW, g.MIGMode)
	}
}

func TestCollectLostGPU(t *testing.T) {
	lost := &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST },
	}
	res, raw, err := probeWith(t, server(nvml.SUCCESS, fullDevice(0), lost))
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if len(res.Devices) != 2 {
		t.Fatalf("got %d devices, want both GPUs reported", len(res.Devices))
	}
	d := res.Devices[1]
	if d.Extra["lost"] != true || !strings.Contains(d.Extra["error"].(string), "ERROR_GPU_IS_LOST") {
		t.Errorf("lost GPU extra = %v", d.Extra)
	}
	if !strings.Contains(res.Detail, "cuda:1 lost (ERROR_GPU_IS_LOST)") {
		t.Errorf("detail %q does not name the lost GPU", res.Detail)
	}
	g := raw.GPUs[1]
	if !g.Lost || g.UUID != nil {
		t.Errorf("collection went on after the GPU was lost: %+v", g)
	}
	if len(raw.P2P) != 0 {
		t.Errorf("P2P was asked of a lost GPU: %+v", raw.P2P)
	}
}

func TestCollectInitFailures(t *testing.T) {
	tests := []struct {
		name       string
		ret        nvml.Return
		wantStatus string
		wantDetail string
	}{
		{"a missing library is absent with the reason", nvml.ERROR_LIBRARY_NOT_FOUND, "absent", "NVML library not found; nvidia-smi not on PATH"},
		{"an unloaded kernel driver is absent with the reason", nvml.ERROR_DRIVER_NOT_LOADED, "absent", "ERROR_DRIVER_NOT_LOADED"},
		{"a library and kernel module mismatch is an error", nvml.ERROR_LIB_RM_VERSION_MISMATCH, "error", "ERROR_LIB_RM_VERSION_MISMATCH (the NVML library and the kernel module are different versions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := server(tt.ret)
			lib.ErrorStringFunc = func(nvml.Return) string { panic("ErrorString must never be called") }
			h := &host.Host{OS: "linux", FS: host.DirFS(t.TempDir()), Runner: host.NoRunner{}, NVML: FromInterface(lib)}
			_, outs, err := probe.Run(context.Background(), h, []probe.Driver{New()}, probe.Options{Timeout: 2 * time.Second, FallbackEnabled: true})
			if err != nil {
				t.Fatal(err)
			}
			st := outs[0].Status
			if st.Status != tt.wantStatus || !strings.Contains(st.Detail, tt.wantDetail) {
				t.Errorf("status %s %q, want %s containing %q", st.Status, st.Detail, tt.wantStatus, tt.wantDetail)
			}
			raw, ok := Answers(h)
			if !ok || raw.InitRet == nil || *raw.InitRet != Return(tt.ret) {
				t.Errorf("Answers do not carry the init return: %+v", raw)
			}
		})
	}
}

// slowDriver stands for any other driver that finishes normally.
type slowDriver struct{}

func (slowDriver) Name() string { return "other" }
func (slowDriver) Probe(context.Context, *host.Host) (probe.Result, error) {
	return probe.Result{Detail: "fine"}, nil
}

func TestCollectHangingCallTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hang := fullDevice(0)
	hang.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		<-release
		return 0, nvml.SUCCESS
	}
	h := &host.Host{OS: "linux", FS: host.DirFS(t.TempDir()), Runner: host.NoRunner{}, NVML: FromInterface(server(nvml.SUCCESS, hang))}
	start := time.Now()
	_, outs, err := probe.Run(context.Background(), h, []probe.Driver{New(), slowDriver{}}, probe.Options{Timeout: 200 * time.Millisecond, FallbackEnabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("probe took %s with a hanging NVML call", el)
	}
	if outs[0].Status.Status != probe.StatusTimeout {
		t.Errorf("nvidia status = %s (%s), want timeout", outs[0].Status.Status, outs[0].Status.Detail)
	}
	if outs[1].Status.Status != probe.StatusOK {
		t.Errorf("other driver status = %s, want ok", outs[1].Status.Status)
	}
	if !errors.Is(outs[0].Err, context.DeadlineExceeded) {
		t.Errorf("err = %v", outs[0].Err)
	}
}

func TestCollectRecoversWhenInitPanics(t *testing.T) {
	raw := Collect(context.Background(), &mock.Interface{})
	if raw.InitRet == nil || *raw.InitRet != ErrUnknown || raw.Usable() {
		t.Errorf("raw = %+v, want init ERROR_UNKNOWN", raw)
	}
}

var updateRaw = flag.Bool("update-raw", false, "rewrite testdata/nvidia/raw/*.json from the go-nvml mocks")

// TestWriteRawFixtures regenerates the Raw JSON fixtures the pure
// interpretation tests read on every platform. They are synthetic: NVML
// answers produced by go-nvml's mocks and this file's builders.
func TestWriteRawFixtures(t *testing.T) {
	if !*updateRaw {
		t.Skip("run with -update-raw to regenerate")
	}
	lost := &mock.Device{GetNameFunc: func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }}
	t4 := &mock.Device{
		GetNameFunc:                  func() (string, nvml.Return) { return "Tesla T4", nvml.SUCCESS },
		GetUUIDFunc:                  func() (string, nvml.Return) { return "GPU-6c2d8d5a-2a4b-3f0e-8f1d-2b6a0e9f1c3d", nvml.SUCCESS },
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 7, 5, nvml.SUCCESS },
		GetMemoryInfo_v2Func:         func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 15360 << 20, Free: 14930 << 20, Used: 430 << 20}, nvml.SUCCESS
		},
		GetMigModeFunc: func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED },
	}
	fixtures := map[string]nvml.Interface{
		"dgxh100.json":                dgxh100.New(),
		"h100-pcie-x2-full.json":      server(nvml.SUCCESS, fullDevice(0), fullDevice(1)),
		"t4-unsupported-fields.json":  server(nvml.SUCCESS, t4),
		"h100-one-lost.json":          server(nvml.SUCCESS, fullDevice(0), lost),
		"init-library-not-found.json": server(nvml.ERROR_LIBRARY_NOT_FOUND),
		"init-lib-rm-mismatch.json":   server(nvml.ERROR_LIB_RM_VERSION_MISMATCH),
		"init-ok-no-gpus.json":        server(nvml.SUCCESS),
	}
	for name, lib := range fixtures {
		b, err := json.MarshalIndent(Collect(context.Background(), lib), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "..", "testdata", "nvidia", "raw", name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
