package probe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/host"
)

// fakeDriver answers with a fixed result, error, panic or hang.
type fakeDriver struct {
	name  string
	res   Result
	err   error
	panic bool
	hang  bool
}

func (d fakeDriver) Name() string { return d.name }

func (d fakeDriver) Probe(ctx context.Context, _ *host.Host) (Result, error) {
	if d.panic {
		var m map[string]int
		m["boom"]++ // a nil-map write: a real bug in a driver
	}
	if d.hang {
		time.Sleep(10 * time.Second) // ignores ctx, like a wedged NVML call
	}
	return d.res, d.err
}

func gpu(i int, mem int64) Device {
	return Device{ID: "cuda:" + string(rune('0'+i)), Index: i, Backend: "cuda", DeviceType: "gpu", Name: "A100", TotalMemoryMB: Ptr(mem), SupportsBF16: true, SupportsFP16: true}
}

func cpuDev() Device {
	return Device{ID: "cpu", Backend: "cpu", DeviceType: "cpu", Name: "Xeon"}
}

func TestRunReportsEveryDriverOutcome(t *testing.T) {
	drivers := []Driver{
		fakeDriver{name: "cpu", res: Result{Devices: []Device{cpuDev()}, Source: "procfs"}},
		fakeDriver{name: "rocm", err: Absent("no /sys/class/kfd")},
		fakeDriver{name: "xpu", err: errors.New("reading /sys/bus/pci: permission denied")},
		fakeDriver{name: "mps", panic: true},
		fakeDriver{name: "nvidia", hang: true},
	}
	start := time.Now()
	rep, _, err := Run(context.Background(), &host.Host{OS: "linux", Arch: "amd64"}, drivers, Options{Timeout: 100 * time.Millisecond, FallbackEnabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a hanging driver blocked the report for %s", took)
	}
	got := map[string]string{}
	for _, d := range rep.Drivers {
		got[d.Name] = d.Status + ": " + d.Detail
	}
	want := map[string]string{
		"cpu":    "ok: 1 device(s)",
		"rocm":   "absent: no /sys/class/kfd",
		"xpu":    "error: reading /sys/bus/pci: permission denied",
		"mps":    "error: driver panicked: assignment to entry in nil map",
		"nvidia": "timeout: no answer within 100ms",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("driver statuses (-want +got)\n%s", diff)
	}
	if len(rep.Devices) != 1 || rep.Summary.DefaultDevice != "cpu" {
		t.Errorf("devices %v, default %q", rep.Devices, rep.Summary.DefaultDevice)
	}
}

func TestRunMergesHostFactsAndPlatform(t *testing.T) {
	drivers := []Driver{
		fakeDriver{name: "memory", res: Result{Host: &HostInfo{MemoryTotalMB: Ptr(int64(64000))}}},
		fakeDriver{name: "system", res: Result{Host: &HostInfo{Kernel: Ptr("6.1.0"), Container: "docker"}}},
		fakeDriver{name: "nvidia", res: Result{
			Devices:  []Device{gpu(1, 40960), gpu(0, 40960)},
			Platform: &Platform{Backend: "cuda", DriverVersion: Ptr("550.90.07"), RuntimeVersion: Ptr("12.4")},
		}},
		fakeDriver{name: "cpu", res: Result{Devices: []Device{cpuDev()}}},
	}
	rep, _, err := Run(context.Background(), &host.Host{OS: "linux", Arch: "amd64"}, drivers, Options{MemoryStrategy: "balanced", MemoryFraction: 0.75})
	if err != nil {
		t.Fatal(err)
	}
	if *rep.Host.MemoryTotalMB != 64000 || *rep.Host.Kernel != "6.1.0" || rep.Host.Container != "docker" {
		t.Errorf("host facts not merged: %+v", rep.Host)
	}
	var ids []string
	for _, d := range rep.Devices {
		ids = append(ids, d.ID)
	}
	if diff := cmp.Diff([]string{"cuda:0", "cuda:1", "cpu"}, ids); diff != "" {
		t.Errorf("device order (-want +got)\n%s", diff)
	}
	s := rep.Summary
	want := Summary{
		Backend: "cuda", DeviceType: "gpu", DeviceCount: 2, GPUCount: 2, DefaultDevice: "cuda:0",
		TotalMemoryMB: Ptr(int64(40960)), MemoryGB: Ptr(40.0), DeviceMemoryMB: Ptr(int64(40960)), CombinedMemoryMB: Ptr(int64(81920)), CUDAVersion: Ptr("12.4"), DriverVersion: Ptr("550.90.07"),
		SupportsMixedPrecision: true, SupportsDistributed: true, SupportsFP16: true, SupportsBF16: true,
		MemoryStrategy: "balanced", MemoryFraction: 0.75,
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("summary (-want +got)\n%s", diff)
	}
}

func TestSelect(t *testing.T) {
	devs := []Device{gpu(0, 1), gpu(1, 1), cpuDev()}
	tests := []struct {
		name     string
		opts     Options
		chosen   string
		fellBack bool
		wantErr  bool
	}{
		{name: "auto takes the first backend of the priority list", opts: Options{Preferred: "auto"}, chosen: "cuda:0"},
		{name: "a device id picks that device", opts: Options{Preferred: "cuda:1"}, chosen: "cuda:1"},
		{name: "a custom priority puts the CPU first", opts: Options{PlatformPriority: []backend.Backend{"cpu", "cuda"}}, chosen: "cpu"},
		{name: "a missing device without fallback is an error", opts: Options{Preferred: "mps"}, wantErr: true},
		{name: "a missing device with fallback falls back by priority", opts: Options{Preferred: "tpu", FallbackEnabled: true}, chosen: "cuda:0", fellBack: true},
		{name: "a missing index is not silently another index", opts: Options{Preferred: "cuda:7"}, wantErr: true},
		{name: "a backend failing the history rule is passed over for the next in priority", opts: Options{PassOver: map[string]string{"cuda": "cuda: 1 of 5"}}, chosen: "cpu", fellBack: true},
		{name: "an explicit device wins over the history rule", opts: Options{Preferred: "cuda:1", PassOver: map[string]string{"cuda": "cuda: 1 of 5"}}, chosen: "cuda:1"},
		{name: "when every backend fails the history rule the first is used anyway", opts: Options{PassOver: map[string]string{"cuda": "x", "cpu": "y"}}, chosen: "cuda:0"},
		{name: "the history rule of an absent backend changes nothing", opts: Options{PassOver: map[string]string{"mps": "x"}}, chosen: "cuda:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Select(devs, tt.opts)
			if tt.wantErr {
				if !errors.Is(err, ErrDeviceUnavailable) {
					t.Fatalf("err = %v, want ErrDeviceUnavailable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.Chosen != tt.chosen || sel.FellBack != tt.fellBack {
				t.Errorf("chose %q (fell back %v), want %q (%v)", sel.Chosen, sel.FellBack, tt.chosen, tt.fellBack)
			}
		})
	}
}

func TestRunKeepsHostFactsOfAFailedDriver(t *testing.T) {
	drivers := []Driver{
		fakeDriver{name: "nvidia", err: errors.New("NVML init failed: driver/library version mismatch"),
			res: Result{Host: &HostInfo{NvidiaKernelMod: Ptr("580.173.02")}}},
	}
	rep, _, err := Run(context.Background(), &host.Host{OS: "linux"}, drivers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Host.NvidiaKernelMod == nil || *rep.Host.NvidiaKernelMod != "580.173.02" {
		t.Errorf("kernel module version lost: %+v", rep.Host)
	}
}

func TestRunIgnoresDevicesOfAFailedDriver(t *testing.T) {
	drivers := []Driver{
		// guard.Run hands back what the driver returned with its error; a
		// half-finished driver must not put devices or a platform in the report.
		fakeDriver{name: "nvidia", err: errors.New("nvmlDeviceGetMemoryInfo: GPU is lost"), res: Result{
			Devices:  []Device{gpu(0, 40960)},
			Platform: &Platform{Backend: "cuda", DriverVersion: Ptr("550.90.07")},
		}},
		fakeDriver{name: "cpu", res: Result{Devices: []Device{cpuDev()}}},
	}
	rep, _, err := Run(context.Background(), &host.Host{OS: "linux"}, drivers, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range rep.Devices {
		ids = append(ids, d.ID)
	}
	got := struct {
		IDs     []string
		Default string
		Driver  *string
	}{ids, rep.Summary.DefaultDevice, rep.Summary.DriverVersion}
	want := struct {
		IDs     []string
		Default string
		Driver  *string
	}{[]string{"cpu"}, "cpu", nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got)\n%s", diff)
	}
}

func TestSummarize(t *testing.T) {
	cudaPlat := &Platform{Backend: "cuda", DriverVersion: Ptr("550.90.07"), RuntimeVersion: Ptr("12.4")}
	rocmPlat := &Platform{Backend: "rocm", DriverVersion: Ptr("6.8.5"), RuntimeVersion: Ptr("6.2.0")}
	type part struct {
		DeviceCount   int
		Distributed   bool
		DriverVersion *string
		CUDAVersion   *string
	}
	tests := []struct {
		name      string
		devices   []Device
		chosen    string
		platforms []*Platform
		want      part
	}{
		{
			name:    "one GPU is not distributed",
			devices: []Device{gpu(0, 1), cpuDev()}, chosen: "cuda:0", platforms: []*Platform{cudaPlat},
			want: part{DeviceCount: 1, DriverVersion: Ptr("550.90.07"), CUDAVersion: Ptr("12.4")},
		},
		{
			name:    "two GPUs are distributed",
			devices: []Device{gpu(0, 1), gpu(1, 1), cpuDev()}, chosen: "cuda:0", platforms: []*Platform{cudaPlat},
			want: part{DeviceCount: 2, Distributed: true, DriverVersion: Ptr("550.90.07"), CUDAVersion: Ptr("12.4")},
		},
		{
			name:    "the driver version comes from the chosen backend's platform, not the last one seen",
			devices: []Device{gpu(0, 1), cpuDev()}, chosen: "cuda:0", platforms: []*Platform{cudaPlat, rocmPlat},
			want: part{DeviceCount: 1, DriverVersion: Ptr("550.90.07"), CUDAVersion: Ptr("12.4")},
		},
		{
			name:    "the CPU reports no accelerator driver or CUDA version",
			devices: []Device{gpu(0, 1), cpuDev()}, chosen: "cpu", platforms: []*Platform{cudaPlat},
			want: part{DeviceCount: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.devices, tt.chosen, tt.platforms, Options{})
			got := part{s.DeviceCount, s.SupportsDistributed, s.DriverVersion, s.CUDAVersion}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Summarize (-want +got)\n%s", diff)
			}
		})
	}
}

// total_memory_mb is one device's memory (a name kept for compatibility);
// device_memory_mb says so, and combined_memory_mb adds up the devices.
func TestSummarizeMemory(t *testing.T) {
	unknown := gpu(1, 0)
	unknown.TotalMemoryMB = nil
	unusable := gpu(2, 81920)
	unusable.State = StateUnqueried
	tests := []struct {
		name                    string
		devices                 []Device
		chosen                  string
		total, device, combined *int64
	}{
		{"two 80 GiB GPUs: one device's 81920 MiB, 163840 combined",
			[]Device{gpu(0, 81920), gpu(1, 81920), cpuDev()}, "cuda:0", Ptr(int64(81920)), Ptr(int64(81920)), Ptr(int64(163840))},
		{"one GPU whose memory is unknown makes the combined figure unknown",
			[]Device{gpu(0, 81920), unknown}, "cuda:0", Ptr(int64(81920)), Ptr(int64(81920)), nil},
		{"a GPU that cannot be used is not counted",
			[]Device{gpu(0, 81920), unusable}, "cuda:0", Ptr(int64(81920)), Ptr(int64(81920)), Ptr(int64(81920))},
		{"no default device: nothing is known",
			[]Device{gpu(0, 81920)}, "cpu", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.devices, tt.chosen, nil, Options{})
			got := []*int64{s.TotalMemoryMB, s.DeviceMemoryMB, s.CombinedMemoryMB}
			if diff := cmp.Diff([]*int64{tt.total, tt.device, tt.combined}, got); diff != "" {
				t.Errorf("total, device, combined (-want +got)\n%s", diff)
			}
		})
	}
}

// A machine whose drivers described nothing still defaults to the CPU, and
// the selection says why instead of blaming the platform priority.
func TestRunNoDeviceDescribedSaysWhy(t *testing.T) {
	drivers := []Driver{
		fakeDriver{name: "cpu", err: Absent("no /proc/cpuinfo")},
		fakeDriver{name: "nvidia", err: errors.New("NVML init failed: ERROR_LIB_RM_VERSION_MISMATCH")},
	}
	rep, _, err := Run(context.Background(), &host.Host{OS: "linux", Arch: "amd64"}, drivers, Options{FallbackEnabled: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "no usable device was described (cpu: no /proc/cpuinfo; nvidia error); frameworks fall back to the CPU"
	if rep.Selection.Chosen != "cpu" || rep.Selection.Reason != want {
		t.Errorf("selection %+v, want cpu with reason %q", rep.Selection, want)
	}
}
