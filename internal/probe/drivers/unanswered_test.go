package drivers

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func accel(name string) string { return filepath.Join("..", "..", "..", "testdata", "accel", name) }

// row is what the tests compare of an unanswered device.
type row struct {
	Driver, ID, Name, State, KernelDriver string
	MemoryMB                              int64
}

func rows(us []probe.Unanswered) []row {
	var out []row
	for _, u := range us {
		r := row{Driver: u.Driver, ID: u.Device.ID, Name: u.Device.Name, State: u.Device.State, KernelDriver: u.Device.KernelDriver}
		if u.Device.TotalMemoryMB != nil {
			r.MemoryMB = *u.Device.TotalMemoryMB
		}
		out = append(out, r)
	}
	return out
}

func TestUnansweredOnRealTrees(t *testing.T) {
	nvidiaAbsent := []probe.DriverStatus{{Name: "nvidia", Status: probe.StatusAbsent, Detail: "NVML not available; nvidia-smi not on PATH"}}
	tests := []struct {
		name     string
		tree     string
		statuses []probe.DriverStatus
		answered []probe.Device
		want     []row
	}{
		{"a Tesla P100 on the nvidia driver without NVML, on a host, is kernel_only: named and sized from the embedded table",
			"nvidia-p100-no-nvml", nvidiaAbsent, nil,
			[]row{{"nvidia", "pci:0000:06:00.0", "NVIDIA Tesla P100 PCIe 16GB", probe.StateKernelOnly, "nvidia", 16384}}},
		{"the same GPU in a container started without the NVIDIA runtime stays unqueried",
			"nvidia-p100-container-no-runtime", nvidiaAbsent, nil,
			[]row{{"nvidia", "pci:0000:06:00.0", "NVIDIA Tesla P100 PCIe 16GB", probe.StateUnqueried, "nvidia", 16384}}},
		{"an old AMD display card without a driver is display-only",
			"amd-hd3450-display-only", []probe.DriverStatus{{Name: "rocm", Status: probe.StatusAbsent}}, nil,
			[]row{{"rocm", "pci:0000:01:00.0", "AMD Mobility Radeon HD 3450/3470", probe.StateDisplayOnly, "", 0}}},
		{"a GTX 970 on nouveau is the wrong driver, named from the host's pci.ids; its audio function is not listed",
			"nvidia-gtx970-nouveau", nvidiaAbsent, nil,
			[]row{{"nvidia", "pci:0000:01:00.0", "NVIDIA GeForce GTX 970", probe.StateWrongDriver, "nouveau", 0}}},
		{"an RTX 3060 bound to vfio-pci is the wrong driver",
			"nvidia-rtx3060-vfio", nvidiaAbsent, nil,
			[]row{{"nvidia", "pci:0000:07:00.0", "NVIDIA GeForce RTX 3060 Lite Hash Rate", probe.StateWrongDriver, "vfio-pci", 0}}},
		{"a GPU that NVML answered for (under its 8-digit bus id) is not listed again",
			"nvidia-p100-no-nvml", []probe.DriverStatus{{Name: "nvidia", Status: probe.StatusOK}},
			[]probe.Device{{ID: "cuda:0", PCIBusID: probe.Ptr("00000000:06:00.0")}}, nil},
		{"a vendor whose driver did not run (--only) is not swept",
			"nvidia-p100-no-nvml", []probe.DriverStatus{{Name: "cpu", Status: probe.StatusOK}}, nil, nil},
		{"a CPU-only board has nothing to sweep", "cpu-only", nvidiaAbsent, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.RootHost(t, accel(tt.tree), nil)
			got := rows(Unanswered(context.Background(), h, tt.answered, tt.statuses))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestUnansweredReasons(t *testing.T) {
	h := fakehost.RootHost(t, accel("nvidia-p100-container-no-runtime"), nil)
	st := []probe.DriverStatus{{Name: "nvidia", Status: probe.StatusAbsent, Detail: "NVIDIA kernel module 565.57.01 is loaded but /dev/nvidiactl is missing here (a container without GPU access?)"}}
	got := Unanswered(context.Background(), h, nil, st)
	if len(got) != 1 {
		t.Fatalf("got %d devices, want 1", len(got))
	}
	want := "the nvidia kernel driver is bound but NVML and nvidia-smi gave no answer: " + st[0].Detail
	if got[0].Device.StateReason != want {
		t.Errorf("reason = %q, want %q", got[0].Device.StateReason, want)
	}
}

func TestUnansweredNoDriverAndOtherVendors(t *testing.T) {
	files := fakehost.Merge(
		// Synthetic: a T4 with no driver bound, an MI210 without amdgpu, an
		// Intel iGPU (never listed) and an Inferentia2 without its driver.
		fakehost.PCIFunction("0000:07:00.0", 0x10de, 0x1eb8, 0x10de, 0x12a2, 0x030200, "", "8.0 GT/s PCIe", 16),
		fakehost.PCIFunction("0000:63:00.0", 0x1002, 0x740f, 0x1002, 0x0c34, 0x038000, "", "16.0 GT/s PCIe", 16),
		fakehost.PCIFunction("0000:00:02.0", 0x8086, 0x4680, 0x8086, 0x0000, 0x030000, "i915", "Unknown", 0),
		fakehost.PCIFunction("0000:00:1e.0", 0x1d0f, 0x7264, 0x1d0f, 0x0000, 0x088000, "", "16.0 GT/s PCIe", 8),
	)
	files = fakehost.Merge(files,
		// Synthetic: an RX 470 on amdgpu without KFD publishes its VRAM.
		fakehost.PCIFunction("0000:01:00.0", 0x1002, 0x67df, 0x1002, 0x0b37, 0x030000, "amdgpu", "8.0 GT/s PCIe", 16),
		fakehost.Files{"/sys/bus/pci/devices/0000:01:00.0/mem_info_vram_total": "4294967296\n"})
	h := fakehost.Host(t, files, nil)
	st := []probe.DriverStatus{{Name: "nvidia"}, {Name: "rocm"}, {Name: "xpu"}, {Name: "neuron"}}
	want := []row{
		{"neuron", "pci:0000:00:1e.0", "AWS NeuronDevice (Inferentia2)", probe.StateNoDriver, "", 0},
		{"rocm", "pci:0000:01:00.0", "AMD device 1002:67df", probe.StateUnqueried, "amdgpu", 4096},
		{"nvidia", "pci:0000:07:00.0", "NVIDIA Tesla T4", probe.StateNoDriver, "", 0},
		{"rocm", "pci:0000:63:00.0", "AMD Instinct MI210", probe.StateNoDriver, "", 0},
	}
	if diff := cmp.Diff(want, rows(Unanswered(context.Background(), h, nil, st))); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestKernelOnlyCapabilities checks what planning gets from the PCI id of a
// GPU NVML could not be asked about.
func TestKernelOnlyCapabilities(t *testing.T) {
	h := fakehost.RootHost(t, accel("nvidia-p100-no-nvml"), nil)
	got := Unanswered(context.Background(), h, nil, []probe.DriverStatus{{Name: "nvidia", Status: probe.StatusAbsent}})
	if len(got) != 1 {
		t.Fatalf("got %d devices", len(got))
	}
	d := got[0].Device
	if !d.Usable() || d.ComputeCapability == nil || *d.ComputeCapability != "6.0" || d.Architecture == nil || *d.Architecture != "Pascal" || d.PytorchDevice != "cuda" {
		t.Errorf("kernel_only P100: usable %v, cc %v, arch %v, pytorch %q", d.Usable(), d.ComputeCapability, d.Architecture, d.PytorchDevice)
	}
}
