package probe

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/host"
)

func t4(id string, state string) Device {
	return Device{ID: id, Backend: backend.CUDA, DeviceType: "gpu", Vendor: "NVIDIA", Name: "T4", PCIBusID: Ptr("0000:3b:00.0"), State: state, StateReason: "reason " + state}
}

func TestUnansweredDevices(t *testing.T) {
	cpu := fakeDriver{name: "cpu", res: Result{Devices: []Device{{ID: "cpu", Backend: backend.CPU, DeviceType: "cpu"}}}}
	tests := []struct {
		name        string
		nvidia      fakeDriver
		sweep       []Unanswered
		wantChosen  string
		wantStatus  string
		wantDetail  string
		wantNote    string
		wantGPUs    int
		wantUnusabl int
	}{
		{"an absent driver with a GPU on the bus turns degraded; the CPU stays the default and the summary says why",
			fakeDriver{name: "nvidia", err: Absent("NVML not available")},
			[]Unanswered{{Driver: "nvidia", Device: t4("pci:0000:3b:00.0", StateUnqueried)}},
			"cpu", StatusDegraded, "1 GPU on the PCI bus cannot be used from here (1 unqueried): NVML not available",
			"1 NVIDIA GPU on the PCI bus but CUDA cannot be used from here (unqueried: reason unqueried); the default device is cpu", 0, 1},
		{"a usable GPU beside a vfio-pci one: the usable one is the default, the note says 'more'",
			fakeDriver{name: "nvidia", res: Result{Devices: []Device{t4("cuda:0", "")}, Detail: "1 GPU"}},
			[]Unanswered{{Driver: "nvidia", Device: t4("pci:0000:af:00.0", StateWrongDriver)}},
			"cuda:0", StatusDegraded, "1 GPU on the PCI bus cannot be used from here (1 wrong_driver); 1 GPU",
			"1 more NVIDIA GPU on the PCI bus cannot be used from here (wrong_driver: reason wrong_driver)", 1, 1},
		{"a driver that failed keeps its status; the devices are still listed",
			fakeDriver{name: "nvidia", err: errors.New("NVML init failed")},
			[]Unanswered{{Driver: "nvidia", Device: t4("pci:0000:3b:00.0", StateNoDriver)}},
			"cpu", StatusError, "NVML init failed; 1 GPU on the PCI bus cannot be used from here (1 no_driver)",
			"1 NVIDIA GPU on the PCI bus but CUDA cannot be used from here (no_driver: reason no_driver); the default device is cpu", 0, 1},
		{"nothing unanswered changes nothing",
			fakeDriver{name: "nvidia", err: Absent("no NVIDIA device")}, nil,
			"cpu", StatusAbsent, "no NVIDIA device", "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sweep := func(context.Context, *host.Host, []Device, []DriverStatus) []Unanswered { return tt.sweep }
			rep, _, err := Run(context.Background(), &host.Host{}, []Driver{cpu, tt.nvidia}, Options{Sweep: sweep, FallbackEnabled: true})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Selection.Chosen != tt.wantChosen {
				t.Errorf("chosen = %q, want %q", rep.Selection.Chosen, tt.wantChosen)
			}
			st := rep.Drivers[1]
			if diff := cmp.Diff([2]string{tt.wantStatus, tt.wantDetail}, [2]string{st.Status, st.Detail}); diff != "" {
				t.Errorf("nvidia status (-want +got)\n%s", diff)
			}
			var want []string
			if tt.wantNote != "" {
				want = []string{tt.wantNote}
			}
			if diff := cmp.Diff(want, rep.Summary.Notes); diff != "" {
				t.Errorf("notes (-want +got)\n%s", diff)
			}
			if rep.Summary.GPUCount != tt.wantGPUs || rep.Summary.UnusableDevices != tt.wantUnusabl {
				t.Errorf("gpu_count %d unusable %d, want %d %d", rep.Summary.GPUCount, rep.Summary.UnusableDevices, tt.wantGPUs, tt.wantUnusabl)
			}
		})
	}
}

func TestAnUnusableDeviceIsNeverRequested(t *testing.T) {
	devs := []Device{t4("pci:0000:3b:00.0", StateWrongDriver), {ID: "cpu", Backend: backend.CPU, DeviceType: "cpu"}}
	if _, err := Select(devs, Options{Preferred: "cuda"}); !errors.Is(err, ErrDeviceUnavailable) {
		t.Errorf("err = %v, want ErrDeviceUnavailable", err)
	}
}
