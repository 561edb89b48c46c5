package tpu_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/tpu"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func TestIdentify(t *testing.T) {
	tests := []struct {
		name            string
		vendor, device  uint16
		subsystem       uint16
		wantGen         string
		wantHBM, wantTC int
		wantOK          bool
	}{
		{"0x0027 with subsystem 0x004e is a v2", 0x1ae0, 0x0027, 0x004e, "v2", 8, 2, true},
		{"0x0027 with subsystem 0x004f is a v3", 0x1ae0, 0x0027, 0x004f, "v3", 16, 2, true},
		{"0x0027 with another subsystem is not named", 0x1ae0, 0x0027, 0x0001, "", 0, 0, false},
		{"0x005e is a v4", 0x1ae0, 0x005e, 0, "v4", 32, 2, true},
		{"0x0063 is a v5e", 0x1ae0, 0x0063, 0, "v5e", 16, 1, true},
		{"0x0062 is a v5p", 0x1ae0, 0x0062, 0, "v5p", 95, 2, true},
		{"0x006f is a v6e", 0x1ae0, 0x006f, 0, "v6e", 32, 1, true},
		{"0x0076 is a TPU7x", 0x1ae0, 0x0076, 0, "7x", 192, 2, true},
		{"the Google NIC 0x0042 is not a TPU", 0x1ae0, 0x0042, 0, "", 0, 0, false},
		{"a TPU device id under another vendor is not a TPU", 0x10de, 0x005e, 0, "", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := tpu.Identify(pci.Device{Vendor: tt.vendor, Device: tt.device, SubsystemDevice: tt.subsystem})
			if ok != tt.wantOK || c.Generation != tt.wantGen || c.HBMGiB != tt.wantHBM || c.TensorCores != tt.wantTC {
				t.Errorf("Identify = %+v, %v", c, ok)
			}
		})
	}
}

func TestParseVisibleChips(t *testing.T) {
	tests := []struct {
		in   string
		want map[int]bool
		set  bool
	}{
		{"", nil, false},
		{"0,1,2,3", map[int]bool{0: true, 1: true, 2: true, 3: true}, true},
		{" 2 , x, -1 ,5", map[int]bool{2: true, 5: true}, true},
	}
	for _, tt := range tests {
		got, set := tpu.ParseVisibleChips(tt.in)
		if set != tt.set || !cmp.Equal(tt.want, got, cmp.AllowUnexported()) && !(len(tt.want) == 0 && len(got) == 0) {
			t.Errorf("ParseVisibleChips(%q) = %v, %v", tt.in, got, set)
		}
	}
}

func FuzzParseVisibleChips(f *testing.F) {
	f.Add("0,1,2,3")
	f.Add(",,,-")
	f.Fuzz(func(t *testing.T, s string) {
		m, _ := tpu.ParseVisibleChips(s)
		for k := range m {
			if k < 0 {
				t.Errorf("negative chip %d", k)
			}
		}
	})
}

func fixture(name string) string { return filepath.Join("..", "..", "..", "testdata", "accel", name) }

func TestProbeV6eHost(t *testing.T) {
	env := map[string]string{"TPU_ACCELERATOR_TYPE": "v6e-8", "TPU_VISIBLE_CHIPS": "0,1", "PJRT_DEVICE": "TPU", "TPU_WORKER_ID": "0"}
	h := fakehost.RootHost(t, fixture("tpu-v6e-8"), env)
	res, err := tpu.New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Devices) != 8 {
		t.Fatalf("%d devices, want 8 (the NIC must not count)", len(res.Devices))
	}
	d := res.Devices[3]
	want := map[string]any{
		"generation": "v6e", "tensorcores": 1, "jax_devices_per_chip": 1, "chips_on_host": 8,
		"dev_node": "/dev/vfio/3", "dev_node_present": true, "holder_pid": 4242, "pci_driver": "vfio-pci",
		"accelerator_type": "v6e-8", "visible": false, "numa_node": 0,
	}
	if diff := cmp.Diff(want, d.Extra); diff != "" {
		t.Errorf("xla:3 extra (-want +got):\n%s", diff)
	}
	if d.ID != "xla:3" || d.PytorchDevice != "xla:3" || d.JAXPlatform != "tpu" || d.DeviceType != "tpu" ||
		d.InferenceContext != "torch.no_grad" || d.VisibilityEnv != "TPU_VISIBLE_CHIPS" || *d.TotalMemoryMB != 32768 || !d.SupportsBF16 || d.SupportsFP16 {
		t.Errorf("xla:3 = %+v", d)
	}
	if res.Devices[0].Extra["visible"] != true {
		t.Error("chip 0 is in TPU_VISIBLE_CHIPS")
	}
	if res.Detail != "8 TPU v6e chip(s), 1 in use" {
		t.Errorf("detail %q", res.Detail)
	}
}

func TestProbeV4HostWithNIC(t *testing.T) {
	h := fakehost.RootHost(t, fixture("tpu-v4-nic"), nil)
	res, err := tpu.New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, d := range res.Devices {
		nodes = append(nodes, d.Extra["dev_node"].(string))
	}
	if diff := cmp.Diff([]string{"/dev/accel0", "/dev/accel1", "/dev/accel2", "/dev/accel3"}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}

func TestProbeOnlyTheNICIsAbsent(t *testing.T) {
	h := fakehost.Host(t, fakehost.PCIFunction("0000:00:04.0", 0x1ae0, 0x0042, 0x1ae0, 0x0058, 0x020000, "gve", "Unknown", 0), nil)
	_, err := tpu.New().Probe(context.Background(), h)
	if !errors.Is(err, probe.ErrAbsent) || err.Error() != "no TPU on the PCI bus (1 other Google function(s)): absent" {
		t.Errorf("err = %v", err)
	}
}

func TestScanHoldersIsBounded(t *testing.T) {
	files := fakehost.Files{}
	for _, pid := range []string{"10", "20", "30"} {
		files["/proc/"+pid+"/fd/1"] = fakehost.Link("/dev/null")
	}
	files["/proc/30/fd/9"] = fakehost.Link("/dev/accel0")
	h := fakehost.Host(t, files, nil)
	got, partial := tpu.ScanHolders(context.Background(), h, []string{"/dev/accel0"}, tpu.ScanLimits{Processes: 2, FDs: 100})
	if len(got) != 0 || !partial {
		t.Errorf("with a 2-process bound: %v, partial=%v; want nothing and partial", got, partial)
	}
	got, partial = tpu.ScanHolders(context.Background(), h, []string{"/dev/accel0"}, tpu.DefaultScanLimits)
	if got["/dev/accel0"] != 30 || partial {
		t.Errorf("unbounded: %v, partial=%v", got, partial)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, partial := tpu.ScanHolders(ctx, h, []string{"/dev/accel0"}, tpu.DefaultScanLimits); !partial {
		t.Error("a cancelled scan must say it is partial")
	}
}
