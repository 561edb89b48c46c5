package neuron_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/neuron"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func TestIdentify(t *testing.T) {
	tests := []struct {
		name   string
		device uint16
		gen    string
		cores  int
		ok     bool
	}{
		{"0x7064 is Inferentia1 with 4 cores", 0x7064, "inf1", 4, true},
		{"0x7067 is Inferentia1 too", 0x7067, "inf1", 4, true},
		{"0x7264 is Inferentia2 with 2 cores", 0x7264, "inf2", 2, true},
		{"0x7164 is Trainium with 2 cores", 0x7164, "trn1", 2, true},
		{"0x7364 is Trainium2 with 8 physical cores", 0x7364, "trn2", 8, true},
		{"the ENA NIC is not a Neuron device", 0xec20, "", 0, false},
		{"the EFA adapter is not a Neuron device", 0xefa0, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := neuron.Identify(pci.Device{Vendor: pci.VendorAmazon, Device: tt.device})
			if ok != tt.ok || c.Generation != tt.gen || c.Cores != tt.cores {
				t.Errorf("Identify = %+v, %v", c, ok)
			}
		})
	}
}

func TestProbeInf2WithENA(t *testing.T) {
	h := fakehost.RootHost(t, filepath.Join("..", "..", "..", "testdata", "accel", "neuron-inf2-ena"), nil)
	res, err := neuron.New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Devices) != 1 {
		t.Fatalf("%d devices, want 1 (ENA and NVMe share the vendor id)", len(res.Devices))
	}
	d := res.Devices[0]
	if d.ID != "neuron:0" || d.PytorchDevice != "xla" || d.VisibilityEnv != "NEURON_RT_VISIBLE_CORES" || d.DeviceType != "npu" ||
		d.Extra["visible_cores"] != "0-1" || d.Extra["dev_node_present"] != true || !d.Supports8Bit || d.SupportsFP8 {
		t.Errorf("device = %+v", d)
	}
	if res.Platform == nil || *res.Platform.DriverVersion != "2.19.64.0" {
		t.Errorf("platform = %+v", res.Platform)
	}
}

func TestProbeTrn2CoreRanges(t *testing.T) {
	files := fakehost.Merge(
		fakehost.PCIFunction("0000:10:1c.0", 0x1d0f, 0x7364, 0x1d0f, 0, 0x088000, "neuron", "32.0 GT/s PCIe", 16),
		fakehost.PCIFunction("0000:10:1d.0", 0x1d0f, 0x7364, 0x1d0f, 0, 0x088000, "neuron", "32.0 GT/s PCIe", 16),
	)
	res, err := neuron.New().Probe(context.Background(), fakehost.Host(t, files, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Devices[1].Extra["visible_cores"] != "4-7" || !res.Devices[1].SupportsFP8 {
		t.Errorf("second Trainium2: %v", res.Devices[1].Extra)
	}
}

func TestProbeENAOnlyIsAbsent(t *testing.T) {
	h := fakehost.Host(t, fakehost.PCIFunction("0000:00:05.0", 0x1d0f, 0xec20, 0x1d0f, 0xec20, 0x020000, "ena", "Unknown", 0), nil)
	if _, err := neuron.New().Probe(context.Background(), h); !errors.Is(err, probe.ErrAbsent) {
		t.Errorf("err = %v, want absent", err)
	}
}
