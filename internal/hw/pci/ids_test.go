package pci_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

// idsText is a cut of the real pci.ids 2023.04.10 (Debian pci.ids
// 0.0~2023.04.11-1): header comment, two NVIDIA devices with subsystems,
// the vendor after NVIDIA, and the class section.
const idsText = `#	List of PCI ID's
#
# Syntax:
# vendor  vendor_name
#	device  device_name				<-- single tab
#		subvendor subdevice  subsystem_name	<-- two tabs

10de  NVIDIA Corporation
	13c2  GM204 [GeForce GTX 970]
	15f8  GP100GL [Tesla P100 PCIe 16GB]
		10de 118f  Tesla P100 PCIe 16GB
	1eb8  TU104GL [Tesla T4]
		10de 12a2  Tesla T4
	20b2  GA100 [A100 SXM4 80GB]
		10de 1463  A100-SXM4-80GB
10df  Emulex Corporation
	1ae5  LP6000 Fibre Channel Host Adapter
C 03  Display controller
	00  VGA compatible controller
`

func TestParseIDs(t *testing.T) {
	tests := []struct {
		name string
		key  pci.Key
		want pci.Names
		ok   bool
	}{
		{"a device with its board's subsystem line gives all three names",
			pci.Key{Vendor: 0x10de, Device: 0x1eb8, SubsystemVendor: 0x10de, SubsystemDevice: 0x12a2},
			pci.Names{Vendor: "NVIDIA Corporation", Device: "TU104GL [Tesla T4]", Subsystem: "Tesla T4"}, true},
		{"an unlisted subsystem leaves only the device name",
			pci.Key{Vendor: 0x10de, Device: 0x15f8, SubsystemVendor: 0x1028, SubsystemDevice: 0x0001},
			pci.Names{Vendor: "NVIDIA Corporation", Device: "GP100GL [Tesla P100 PCIe 16GB]"}, true},
		{"a subsystem line of another device is not taken",
			pci.Key{Vendor: 0x10de, Device: 0x15f8, SubsystemVendor: 0x10de, SubsystemDevice: 0x12a2},
			pci.Names{Vendor: "NVIDIA Corporation", Device: "GP100GL [Tesla P100 PCIe 16GB]"}, true},
		{"an unlisted device of a listed vendor gives the vendor name only",
			pci.Key{Vendor: 0x10de, Device: 0x2330},
			pci.Names{Vendor: "NVIDIA Corporation"}, true},
		{"the vendor 10df is not confused with 10de's block",
			pci.Key{Vendor: 0x10df, Device: 0x1ae5},
			pci.Names{Vendor: "Emulex Corporation", Device: "LP6000 Fibre Channel Host Adapter"}, true},
		{"a vendor id that only appears as a device id is not a vendor",
			pci.Key{Vendor: 0x1ae5, Device: 0x0001}, pci.Names{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pci.ParseIDs([]byte(idsText), []pci.Key{tt.key})[tt.key]
			if ok != tt.ok {
				t.Fatalf("found = %v, want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func FuzzParseIDs(f *testing.F) {
	f.Add([]byte(idsText), uint16(0x10de), uint16(0x1eb8), uint16(0x10de), uint16(0x12a2))
	f.Add([]byte("10de  X\n\t15f8"), uint16(0x10de), uint16(0x15f8), uint16(0), uint16(0))
	f.Add([]byte("10de  \n\t\t10de 118f"), uint16(0x10de), uint16(0x118f), uint16(0x10de), uint16(0x118f))
	f.Fuzz(func(t *testing.T, b []byte, v, d, sv, sd uint16) {
		k := pci.Key{Vendor: v, Device: d, SubsystemVendor: sv, SubsystemDevice: sd}
		pci.ParseIDs(b, []pci.Key{k, {Vendor: v}})
	})
}

func TestLookupNamesFallsBackToTheEmbeddedTable(t *testing.T) {
	k := pci.Key{Vendor: 0x10de, Device: 0x15f8}
	t.Run("no pci.ids on the host names the board from the embedded table", func(t *testing.T) {
		h := fakehost.Host(t, fakehost.Files{"/etc/hostname": "x\n"}, nil)
		got := pci.LookupNames(h, []pci.Key{k})[k]
		want := pci.Names{Vendor: "NVIDIA Corporation", Device: "GP100GL [Tesla P100 PCIe 16GB]", Source: "embedded"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got)\n%s", diff)
		}
	})
	t.Run("a board the table knows is named without reading the host's pci.ids", func(t *testing.T) {
		h := fakehost.Host(t, fakehost.Files{"/usr/share/hwdata/pci.ids": idsText}, nil)
		k2 := pci.Key{Vendor: 0x10de, Device: 0x1eb8, SubsystemVendor: 0x10de, SubsystemDevice: 0x12a2}
		got := pci.LookupNames(h, []pci.Key{k2})[k2]
		if got.Source != "embedded" || got.Model() != "TU104GL [Tesla T4]" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("a device the table does not know is named from the host's pci.ids, which says so", func(t *testing.T) {
		h := fakehost.Host(t, fakehost.Files{"/usr/share/hwdata/pci.ids": idsText}, nil)
		k2 := pci.Key{Vendor: 0x10de, Device: 0x13c2}
		got := pci.LookupNames(h, []pci.Key{k2})[k2]
		if got.Source != "/usr/share/hwdata/pci.ids" || got.Model() != "GM204 [GeForce GTX 970]" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("a device neither pci.ids nor the table lists has no names", func(t *testing.T) {
		h := fakehost.Host(t, fakehost.Files{"/usr/share/misc/pci.ids": idsText}, nil)
		k3 := pci.Key{Vendor: 0x10de, Device: 0xffff}
		if got, ok := pci.LookupNames(h, []pci.Key{k3})[k3]; ok {
			t.Errorf("got %+v, want nothing", got)
		}
	})
}

func TestBoardMemoryMiB(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{"a size in brackets", "GP100GL [Tesla P100 PCIe 16GB]", 16384},
		{"a size after a dash", "GA100 [A800-SXM4-80GB]", 81920},
		{"no size", "TU104GL [Tesla T4]", 0},
		{"a consumer board with its size", "GeForce GTX 1060 6GB", 6144},
		{"two sizes name two boards, so none", "Tesla P100 12GB / 16GB", 0},
		{"GB inside a word is not a size", "GBX 16GBIT", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pci.BoardMemoryMiB(tt.in); got != tt.want {
				t.Errorf("BoardMemoryMiB(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeAddress(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:3B:00.0": "0000:3b:00.0",
		"0000:06:00.0":     "0000:06:00.0",
		"1:02:00.0":        "0001:02:00.0",
		"garbage":          "garbage",
	} {
		if got := pci.NormalizeAddress(in); got != want {
			t.Errorf("NormalizeAddress(%q) = %q, want %q", in, got, want)
		}
	}
}
