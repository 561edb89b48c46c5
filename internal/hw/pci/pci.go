// Package pci is devctl's one reader of /sys/bus/pci/devices.
//
// Five accelerator families (NVIDIA, AMD, Intel, Google TPU, AWS Neuron) are
// all visible on the PCI bus without any vendor library, and every Linux
// driver wants the same facts: ids, class, bound kernel driver, link state
// and NUMA node. Reading the bus once per probe and sharing the answer keeps
// a CPU-only host cheap (one directory listing plus one small file per
// function) and keeps drivers that run concurrently from walking the same
// tree five times.
//
// Accelerators are identified by vendor AND device id or class, never by the
// vendor alone: Google (0x1ae0) also makes network functions, Amazon
// (0x1d0f) makes the ENA/EFA NICs and NVMe controllers.
package pci

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// DevicesDir is where the kernel lists PCI functions.
const DevicesDir = "/sys/bus/pci/devices"

// Vendor ids of the accelerator families devctl knows.
const (
	VendorNVIDIA = 0x10de
	VendorAMD    = 0x1002
	VendorIntel  = 0x8086
	VendorGoogle = 0x1ae0
	VendorAmazon = 0x1d0f
)

// ErrNoBus means the host shows no PCI bus at all (no /sys/bus/pci/devices):
// a container without /sys, a non-Linux host, a fixture tree without it.
// Drivers may then look for their own evidence (KFD topology, /dev nodes).
var ErrNoBus = errors.New("no PCI bus visible")

// Link is one end of a PCIe link state: current or maximum.
type Link struct {
	// Speed is the raw sysfs text ("16.0 GT/s PCIe").
	Speed string `json:"speed,omitempty"`
	// GTs is the transfer rate in GT/s, 0 when unknown.
	GTs float64 `json:"gts,omitempty"`
	// Gen is the PCIe generation derived from the rate, 0 when unknown.
	Gen int `json:"gen,omitempty"`
	// Width is the lane count, 0 when unknown.
	Width int `json:"width,omitempty"`
}

// Device is one PCI function.
type Device struct {
	// Address is the bus address, "0000:3b:00.0".
	Address         string `json:"address"`
	Vendor          uint16 `json:"vendor"`
	Device          uint16 `json:"device"`
	SubsystemVendor uint16 `json:"subsystem_vendor"`
	SubsystemDevice uint16 `json:"subsystem_device"`
	// Class is the 24-bit class code (0x030200 = 3D controller).
	Class uint32 `json:"class"`
	// Driver is the bound kernel driver ("amdgpu", "vfio-pci"), "" when none.
	Driver string `json:"driver"`
	// Detailed reports whether link and NUMA facts were read: they are read
	// only for accelerator candidates, to keep the walk cheap.
	Detailed bool `json:"detailed"`
	Current  Link `json:"current_link"`
	Max      Link `json:"max_link"`
	// NUMANode is -1 when the kernel does not know or did not say.
	NUMANode int `json:"numa_node"`
}

// IsDisplay reports a display controller (class 0x03xxxx: VGA, 3D, other).
func (d Device) IsDisplay() bool { return d.Class>>16 == 0x03 }

// IsProcessingAccelerator reports class 0x12xxxx ("processing accelerators"),
// which some compute-only parts (AMD Instinct, Habana, ...) use.
func (d Device) IsProcessingAccelerator() bool { return d.Class>>16 == 0x12 }

// IsGPULike reports a display or processing-accelerator function: what a
// GPU driver should consider, excluding the HD-audio and bridge functions
// GPU vendors also put on the bus.
func (d Device) IsGPULike() bool { return d.IsDisplay() || d.IsProcessingAccelerator() }

// ID is "vvvv:dddd" in lower-case hex, as lspci -n prints it.
func (d Device) ID() string { return fmt.Sprintf("%04x:%04x", d.Vendor, d.Device) }

// PCIeLink converts the link facts to the report's shape; nil when nothing
// is known (a non-PCIe function, or a device that was not detailed).
func (d Device) PCIeLink() *probe.PCIeLink {
	if d.Current.Gen == 0 && d.Max.Gen == 0 && d.Current.Width == 0 && d.Max.Width == 0 {
		return nil
	}
	l := &probe.PCIeLink{}
	if d.Current.Gen > 0 {
		l.GenCurrent = probe.Ptr(d.Current.Gen)
	}
	if d.Max.Gen > 0 {
		l.GenMax = probe.Ptr(d.Max.Gen)
	}
	if d.Current.Width > 0 {
		l.WidthCurrent = probe.Ptr(d.Current.Width)
	}
	if d.Max.Width > 0 {
		l.WidthMax = probe.Ptr(d.Max.Width)
	}
	return l
}

// Dir is the device's sysfs directory.
func (d Device) Dir() string { return DevicesDir + "/" + d.Address }

// IsAcceleratorCandidate is the rule for which functions get link and NUMA
// detail: the vendors above, with Intel limited to display controllers
// (Intel has dozens of chipset functions on every board).
func IsAcceleratorCandidate(vendor uint16, class uint32) bool {
	switch vendor {
	case VendorNVIDIA, VendorAMD, VendorGoogle, VendorAmazon:
		return true
	case VendorIntel:
		return class>>16 == 0x03
	}
	return false
}

// Filter returns the functions for which keep returns true, in bus order.
func Filter(devs []Device, keep func(Device) bool) []Device {
	var out []Device
	for _, d := range devs {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

// ByAddress finds a function by bus address ("0000:03:00.0"), case-insensitively.
func ByAddress(devs []Device, addr string) (Device, bool) {
	addr = strings.ToLower(addr)
	for _, d := range devs {
		if d.Address == addr {
			return d, true
		}
	}
	return Device{}, false
}

// Scan returns the host's PCI functions in bus-address order. The first
// call per Host walks the bus; concurrent and later calls share that walk
// (host.Once). The returned slice is the caller's own copy.
func Scan(h *host.Host) ([]Device, error) {
	if h == nil || h.FS == nil {
		return nil, ErrNoBus
	}
	devs, err := host.Once(h, "pci.walk", func() ([]Device, error) { return walk(h) })
	if err != nil {
		return nil, err
	}
	out := make([]Device, len(devs))
	copy(out, devs)
	return out, nil
}

// maxFunctions bounds the walk on a hostile or broken tree; real hosts have
// a few hundred functions at most.
const maxFunctions = 4096

func walk(h *host.Host) ([]Device, error) {
	entries, err := h.FS.ReadDir(DevicesDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", DevicesDir, ErrNoBus)
		}
		return nil, fmt.Errorf("reading %s: %w", DevicesDir, err)
	}
	devs := make([]Device, 0, len(entries))
	for i, e := range entries {
		if i >= maxFunctions {
			break
		}
		addr := strings.ToLower(e.Name())
		if !looksLikeAddress(addr) {
			continue
		}
		d, ok := readDevice(h, addr)
		if !ok {
			continue
		}
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Address < devs[j].Address })
	return devs, nil
}

// readDevice reads one function: uevent first (one read gives ids, class
// and driver), the separate files when uevent is missing or incomplete.
func readDevice(h *host.Host, addr string) (Device, bool) {
	dir := DevicesDir + "/" + addr
	d := Device{Address: addr, NUMANode: -1}
	if b, err := h.FS.ReadFile(dir + "/uevent"); err == nil {
		u := ParseUevent(b)
		if u.HasID {
			d.Vendor, d.Device = u.Vendor, u.Device
			d.SubsystemVendor, d.SubsystemDevice = u.SubsystemVendor, u.SubsystemDevice
			d.Class = u.Class
			d.Driver = u.Driver
			if IsAcceleratorCandidate(d.Vendor, d.Class) {
				readDetail(h, dir, &d)
			}
			return d, true
		}
	}
	v, err := readHex(h, dir+"/vendor")
	if err != nil {
		return d, false
	}
	d.Vendor = uint16(v)
	if x, err := readHex(h, dir+"/device"); err == nil {
		d.Device = uint16(x)
	}
	if x, err := readHex(h, dir+"/class"); err == nil {
		d.Class = x & 0xffffff
	}
	if !IsAcceleratorCandidate(d.Vendor, d.Class) {
		return d, true
	}
	if x, err := readHex(h, dir+"/subsystem_vendor"); err == nil {
		d.SubsystemVendor = uint16(x)
	}
	if x, err := readHex(h, dir+"/subsystem_device"); err == nil {
		d.SubsystemDevice = uint16(x)
	}
	if target, err := h.FS.Readlink(dir + "/driver"); err == nil {
		d.Driver = path.Base(target)
	}
	readDetail(h, dir, &d)
	return d, true
}

func readDetail(h *host.Host, dir string, d *Device) {
	d.Detailed = true
	if b, err := h.FS.ReadFile(dir + "/current_link_speed"); err == nil {
		d.Current.Speed = strings.TrimSpace(string(b))
		d.Current.GTs, d.Current.Gen, _ = ParseLinkSpeed(b)
	}
	if b, err := h.FS.ReadFile(dir + "/max_link_speed"); err == nil {
		d.Max.Speed = strings.TrimSpace(string(b))
		d.Max.GTs, d.Max.Gen, _ = ParseLinkSpeed(b)
	}
	if b, err := h.FS.ReadFile(dir + "/current_link_width"); err == nil {
		d.Current.Width, _ = ParseLinkWidth(b)
	}
	if b, err := h.FS.ReadFile(dir + "/max_link_width"); err == nil {
		d.Max.Width, _ = ParseLinkWidth(b)
	}
	if b, err := h.FS.ReadFile(dir + "/numa_node"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 {
			d.NUMANode = n
		}
	}
}

func readHex(h *host.Host, name string) (uint32, error) {
	b, err := h.FS.ReadFile(name)
	if err != nil {
		return 0, err
	}
	return ParseHexID(b)
}

// looksLikeAddress accepts "dddd:bb:dd.f" (hex digits), the only names the
// kernel puts in DevicesDir; anything else in a fixture or hostile tree is
// ignored rather than read.
func looksLikeAddress(s string) bool {
	if len(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 7 || i == 10 {
			continue
		}
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// NormalizeAddress turns the bus ids vendor libraries print into the kernel's
// form: NVML writes "00000000:3B:00.0" (8-digit domain, upper case), sysfs
// "0000:3b:00.0".
func NormalizeAddress(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || !strings.Contains(rest, ":") {
		return s
	}
	if len(dom) > 4 {
		dom = dom[len(dom)-4:]
	}
	for len(dom) < 4 {
		dom = "0" + dom
	}
	return dom + ":" + rest
}
