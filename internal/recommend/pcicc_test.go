package recommend

import (
	"strings"
	"testing"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/hw/pci"
)

// TestPCIComputeCapabilityAgreesWithCatalogue holds the probe's PCI-id
// table of compute capabilities (for GPUs NVML cannot be asked about) equal
// to the device catalogue's entry for the same board.
func TestPCIComputeCapabilityAgreesWithCatalogue(t *testing.T) {
	devices, err := LoadDevices(configs.DevicesYAML)
	if err != nil {
		t.Fatal(err)
	}
	// Boards whose pci.ids name is not a catalogue name or alias.
	catalogueName := map[uint16]string{
		0x15f7: "tesla-p100-12gb", 0x15f8: "tesla-p100-16gb", 0x1bb3: "tesla-p4", 0x1db1: "v100-16gb", 0x1db4: "v100-pcie-16gb",
		0x1db5: "v100-32gb", 0x1db6: "v100-pcie-32gb", 0x1df6: "v100s-pcie-32gb", 0x20b0: "a100-40gb", 0x20b2: "a100-80gb",
		0x20b5: "a100-pcie-80gb", 0x20b7: "a30", 0x20f1: "a100-pcie-40gb", 0x20f3: "a800-80gb", 0x2330: "h100-80gb", 0x2331: "h100-pcie",
	}
	checked := 0
	for id, cc := range pci.NVIDIAComputeCapabilities() {
		name := pci.EmbeddedName(pci.VendorNVIDIA, id)
		if name == "" {
			t.Errorf("10de:%04x has a compute capability but no name in the embedded table", id)
			continue
		}
		if id == 0x15f9 {
			continue // P100 SXM2: no catalogue entry (same GP100 chip as 15f7/15f8)
		}
		query := catalogueName[id]
		if query == "" {
			query = name
			if i := strings.IndexByte(name, '['); i >= 0 {
				query = strings.Trim(name[i:], "[]")
			}
		}
		d, ok := FindDevice(devices, query)
		if !ok {
			t.Errorf("10de:%04x %q: no catalogue entry for %q", id, name, query)
			continue
		}
		if d.ComputeCapability != cc {
			t.Errorf("10de:%04x %q: table says %s, catalogue %s says %s", id, name, cc, d.Name, d.ComputeCapability)
		}
		checked++
	}
	if checked < 20 {
		t.Errorf("only %d boards checked", checked)
	}
}
