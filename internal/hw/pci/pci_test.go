package pci_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func TestParseHexID(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint32
		ok   bool
	}{
		{"a vendor file with 0x and newline parses", "0x1ae0\n", 0x1ae0, true},
		{"a class file keeps all 24 bits", "0x120000\n", 0x120000, true},
		{"upper-case hex without prefix parses", "10DE", 0x10de, true},
		{"an empty file is an error", "", 0, false},
		{"a bare prefix is an error", "0x", 0, false},
		{"text is an error", "nvidia", 0, false},
		{"more than 24 bits is an error", "0x1234567", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pci.ParseHexID([]byte(tt.in))
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseHexID(%q) = %#x, %v; want %#x, ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestParseLinkSpeed(t *testing.T) {
	tests := []struct {
		name string
		in   string
		gts  float64
		gen  int
		ok   bool
	}{
		{"gen1 as old kernels print it", "2.5 GT/s\n", 2.5, 1, true},
		{"gen2", "5.0 GT/s PCIe\n", 5, 2, true},
		{"gen3 without a decimal", "8 GT/s\n", 8, 3, true},
		{"gen4 as new kernels print it", "16.0 GT/s PCIe\n", 16, 4, true},
		{"gen5", "32.0 GT/s PCIe", 32, 5, true},
		{"gen6", "64.0 GT/s PCIe", 64, 6, true},
		{"gen7", "128.0 GT/s PCIe", 128, 7, true},
		{"a rate in another unit is not a link speed", "8.0 MT/s", 0, 0, false},
		{"a rate that is not a PCIe generation keeps gen 0", "10.0 GT/s PCIe", 10, 0, true},
		{"an unknown link", "Unknown\n", 0, 0, false},
		{"an unknown speed with a unit word", "Unknown speed", 0, 0, false},
		{"an empty file", "", 0, 0, false},
		{"a negative rate", "-8 GT/s", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gts, gen, ok := pci.ParseLinkSpeed([]byte(tt.in))
			if gts != tt.gts || gen != tt.gen || ok != tt.ok {
				t.Errorf("ParseLinkSpeed(%q) = %v, %d, %v; want %v, %d, %v", tt.in, gts, gen, ok, tt.gts, tt.gen, tt.ok)
			}
		})
	}
}

func TestParseLinkWidth(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"16\n", 16, true}, {"x8", 8, true}, {"32\n", 32, true}, {"0\n", 0, false}, {"255", 0, false}, {"", 0, false}, {"wide", 0, false},
	}
	for _, tt := range tests {
		got, ok := pci.ParseLinkWidth([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseLinkWidth(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseUevent(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want pci.Uevent
	}{
		{
			name: "a bound AMD Instinct function gives ids, class and driver",
			in:   "DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_ID=1002:740F\nPCI_SUBSYS_ID=1002:0C34\nPCI_SLOT_NAME=0000:63:00.0\nMODALIAS=pci:v00001002d0000740Fsv00001002sd00000C34bc03sc80i00\n",
			want: pci.Uevent{HasID: true, Vendor: 0x1002, Device: 0x740f, SubsystemVendor: 0x1002, SubsystemDevice: 0x0c34, Class: 0x038000, Driver: "amdgpu", SlotName: "0000:63:00.0"},
		},
		{
			name: "an unbound function has no driver",
			in:   "PCI_CLASS=C0330\nPCI_ID=8086:A0ED\nPCI_SUBSYS_ID=17AA:22D8\nPCI_SLOT_NAME=0000:00:14.0\n",
			want: pci.Uevent{HasID: true, Vendor: 0x8086, Device: 0xa0ed, SubsystemVendor: 0x17aa, SubsystemDevice: 0x22d8, Class: 0x0c0330, SlotName: "0000:00:14.0"},
		},
		{
			name: "a malformed PCI_ID leaves HasID false",
			in:   "PCI_ID=zzzz:0001\nPCI_CLASS=30000\n",
			want: pci.Uevent{Class: 0x030000},
		},
		{
			name: "garbage gives nothing",
			in:   "\x00\xff===\n",
			want: pci.Uevent{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, pci.ParseUevent([]byte(tt.in))); diff != "" {
				t.Errorf("ParseUevent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScan(t *testing.T) {
	files := fakehost.Merge(
		fakehost.PCIFunction("0000:00:04.0", 0x1ae0, 0x005e, 0x1ae0, 0x0000, 0x120000, "", "8.0 GT/s PCIe", 16),
		// The Google NIC: same vendor, not a TPU; detailed because Google is a candidate vendor.
		fakehost.PCIFunction("0000:00:05.0", 0x1ae0, 0x0042, 0x1ae0, 0x0001, 0x020000, "gve", "Unknown", 0),
		// An Intel chipset function is read for ids only.
		fakehost.PCIFunction("0000:00:1f.0", 0x8086, 0x7a06, 0x8086, 0x7a06, 0x060100, "", "Unknown", 0),
		fakehost.Files{
			// A function without uevent: the separate files and the driver link are read.
			"/sys/bus/pci/devices/0000:03:00.0/vendor":             "0x10de\n",
			"/sys/bus/pci/devices/0000:03:00.0/device":             "0x20b0\n",
			"/sys/bus/pci/devices/0000:03:00.0/subsystem_vendor":   "0x10de\n",
			"/sys/bus/pci/devices/0000:03:00.0/subsystem_device":   "0x134f\n",
			"/sys/bus/pci/devices/0000:03:00.0/class":              "0x030200\n",
			"/sys/bus/pci/devices/0000:03:00.0/numa_node":          "1\n",
			"/sys/bus/pci/devices/0000:03:00.0/current_link_speed": "8.0 GT/s PCIe\n",
			"/sys/bus/pci/devices/0000:03:00.0/max_link_speed":     "16.0 GT/s PCIe\n",
			"/sys/bus/pci/devices/0000:03:00.0/current_link_width": "16\n",
			"/sys/bus/pci/devices/0000:03:00.0/max_link_width":     "16\n",
			"/sys/bus/pci/devices/0000:03:00.0/driver":             fakehost.Link("../../../bus/pci/drivers/nvidia"),
			// Names that are not bus addresses are ignored.
			"/sys/bus/pci/devices/not-an-address/vendor": "0x10de\n",
		},
	)
	h := fakehost.Host(t, files, nil)
	got, err := pci.Scan(h)
	if err != nil {
		t.Fatal(err)
	}
	want := []pci.Device{
		{Address: "0000:00:04.0", Vendor: 0x1ae0, Device: 0x005e, SubsystemVendor: 0x1ae0, Class: 0x120000, Detailed: true,
			Current: pci.Link{Speed: "8.0 GT/s PCIe", GTs: 8, Gen: 3, Width: 16}, Max: pci.Link{Speed: "8.0 GT/s PCIe", GTs: 8, Gen: 3, Width: 16}, NUMANode: -1},
		{Address: "0000:00:05.0", Vendor: 0x1ae0, Device: 0x0042, SubsystemVendor: 0x1ae0, SubsystemDevice: 1, Class: 0x020000, Driver: "gve", Detailed: true,
			Current: pci.Link{Speed: "Unknown"}, Max: pci.Link{Speed: "Unknown"}, NUMANode: -1},
		{Address: "0000:00:1f.0", Vendor: 0x8086, Device: 0x7a06, SubsystemVendor: 0x8086, SubsystemDevice: 0x7a06, Class: 0x060100, NUMANode: -1},
		{Address: "0000:03:00.0", Vendor: 0x10de, Device: 0x20b0, SubsystemVendor: 0x10de, SubsystemDevice: 0x134f, Class: 0x030200, Driver: "nvidia", Detailed: true,
			Current: pci.Link{Speed: "8.0 GT/s PCIe", GTs: 8, Gen: 3, Width: 16}, Max: pci.Link{Speed: "16.0 GT/s PCIe", GTs: 16, Gen: 4, Width: 16}, NUMANode: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan (-want +got):\n%s", diff)
	}
	if l := got[3].PCIeLink(); l == nil || *l.GenCurrent != 3 || *l.GenMax != 4 || *l.WidthMax != 16 {
		t.Errorf("PCIeLink() = %+v", l)
	}
	if l := got[1].PCIeLink(); l != nil {
		t.Errorf("a function without a link gave %+v, want nil", l)
	}
	if !got[3].IsDisplay() || got[0].IsDisplay() || !got[0].IsProcessingAccelerator() || !got[0].IsGPULike() {
		t.Error("class predicates disagree with the class codes")
	}
	if !pci.HasVendor(got, pci.VendorGoogle) || pci.HasVendor(got, pci.VendorAMD) {
		t.Error("HasVendor disagrees with the tree")
	}
	if d, ok := pci.ByAddress(got, "0000:03:00.0"); !ok || d.ID() != "10de:20b0" {
		t.Errorf("ByAddress = %+v, %v", d, ok)
	}
}

func TestScanWithoutBus(t *testing.T) {
	h := fakehost.Host(t, fakehost.Files{"/proc/": ""}, nil)
	if _, err := pci.Scan(h); err == nil {
		t.Fatal("Scan on a tree without /sys/bus/pci gave no error")
	}
}

// countingFS counts reads so the test can prove one walk serves everyone.
type countingFS struct {
	host.FS
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingFS) ReadFile(name string) ([]byte, error) {
	c.mu.Lock()
	c.reads[name]++
	c.mu.Unlock()
	return c.FS.ReadFile(name)
}

func TestScanIsSharedAcrossConcurrentCallers(t *testing.T) {
	h := fakehost.Host(t, fakehost.PCIFunction("0000:00:04.0", 0x1ae0, 0x005e, 0x1ae0, 0, 0x120000, "", "8.0 GT/s PCIe", 16), nil)
	cfs := &countingFS{FS: h.FS, reads: map[string]int{}}
	h.FS = cfs
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			devs, err := pci.Scan(h)
			if err != nil || len(devs) != 1 {
				t.Errorf("Scan = %v, %v", devs, err)
			}
			devs[0].Vendor = 0 // callers own their copy
		}()
	}
	wg.Wait()
	cfs.mu.Lock()
	defer cfs.mu.Unlock()
	if n := cfs.reads["/sys/bus/pci/devices/0000:00:04.0/uevent"]; n != 1 {
		t.Errorf("uevent read %d times by 8 concurrent scans, want 1", n)
	}
	devs, _ := pci.Scan(h)
	if devs[0].Vendor != 0x1ae0 {
		t.Error("a caller's change leaked into the shared walk")
	}
}

func TestPCIeLink(t *testing.T) {
	tests := []struct {
		name string
		dev  pci.Device
		want *probe.PCIeLink
	}{
		{
			name: "a link trained below its maximum reports current and max apart",
			dev:  pci.Device{Current: pci.Link{Gen: 3, Width: 8}, Max: pci.Link{Gen: 4, Width: 16}},
			want: &probe.PCIeLink{GenCurrent: probe.Ptr(3), GenMax: probe.Ptr(4), WidthCurrent: probe.Ptr(8), WidthMax: probe.Ptr(16)},
		},
		{
			name: "widths without a known speed are still a link",
			dev:  pci.Device{Current: pci.Link{Speed: "Unknown", Width: 4}, Max: pci.Link{Speed: "Unknown", Width: 16}},
			want: &probe.PCIeLink{WidthCurrent: probe.Ptr(4), WidthMax: probe.Ptr(16)},
		},
		{
			name: "nothing known is no link",
			dev:  pci.Device{Current: pci.Link{Speed: "Unknown"}, Max: pci.Link{Speed: "Unknown"}},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.dev.PCIeLink()); diff != "" {
				t.Errorf("PCIeLink (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPCIeLinkOfUndetailedDevice(t *testing.T) {
	var d pci.Device
	if d.PCIeLink() != (*probe.PCIeLink)(nil) {
		t.Error("want nil")
	}
}

func FuzzParseUevent(f *testing.F) {
	f.Add([]byte("DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_ID=1002:740F\nPCI_SUBSYS_ID=1002:0C34\n"))
	f.Add([]byte("PCI_ID=:\n=\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _ = pci.ParseUevent(b) })
}

func FuzzParseLinkSpeed(f *testing.F) {
	f.Add([]byte("16.0 GT/s PCIe\n"))
	f.Add([]byte("Unknown"))
	f.Add([]byte("NaN GT/s"))
	f.Fuzz(func(t *testing.T, b []byte) {
		gts, gen, ok := pci.ParseLinkSpeed(b)
		if !ok && (gts != 0 || gen != 0) {
			t.Errorf("not ok but gave %v, %d", gts, gen)
		}
		if gen < 0 || gen > 7 {
			t.Errorf("gen %d out of range", gen)
		}
	})
}

func FuzzParseHexID(f *testing.F) {
	f.Add([]byte("0x10de\n"))
	f.Add([]byte("0x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := pci.ParseHexID(b); err == nil && v > 0xffffff {
			t.Errorf("value %#x wider than 24 bits", v)
		}
	})
}

func FuzzParseLinkWidth(f *testing.F) {
	f.Add([]byte("16\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, ok := pci.ParseLinkWidth(b); ok && (n <= 0 || n > 32) {
			t.Errorf("width %d accepted", n)
		}
	})
}

// BenchmarkScanServer walks a 300-function bus with two GPUs, the size of a
// busy dual-socket server, on a fresh Host each time (no memo).
func BenchmarkScanServer(b *testing.B) {
	files := fakehost.Files{}
	for i := 0; i < 298; i++ {
		addr := fmt.Sprintf("0000:%02x:%02x.%d", i/32, (i%32)/8, i%8)
		for k, v := range fakehost.PCIFunction(addr, 0x8086, 0x2020, 0x8086, 0, 0x088000, "", "Unknown", 0) {
			files[k] = v
		}
	}
	for _, a := range []string{"0000:63:00.0", "0000:43:00.0"} {
		for k, v := range fakehost.PCIFunction(a, 0x1002, 0x740f, 0x1002, 0x0c34, 0x038000, "amdgpu", "16.0 GT/s PCIe", 16) {
			files[k] = v
		}
	}
	root := b.TempDir()
	fakehost.WriteT(b, root, files)
	b.ResetTimer()
	for b.Loop() {
		h := fakehost.RootHost(b, root, nil)
		if devs, err := pci.Scan(h); err != nil || len(devs) != 300 {
			b.Fatalf("%d devices, %v", len(devs), err)
		}
	}
}
