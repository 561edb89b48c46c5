package pci

import (
	"bufio"
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// ErrSyntax marks sysfs text that is not what the kernel writes.
var ErrSyntax = errors.New("unexpected sysfs text")

// ParseHexID parses a sysfs id file ("0x1ae0\n", "0x030200\n"). The 0x is
// optional; the value must fit 24 bits (class codes are the widest).
func ParseHexID(b []byte) (uint32, error) {
	s := strings.TrimSpace(string(b))
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" || len(s) > 6 {
		return 0, ErrSyntax
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, ErrSyntax
	}
	return uint32(v), nil
}

// Uevent is what a PCI function's uevent file says.
type Uevent struct {
	// HasID is true when PCI_ID was present and valid.
	HasID           bool
	Vendor, Device  uint16
	SubsystemVendor uint16
	SubsystemDevice uint16
	Class           uint32
	Driver          string
	SlotName        string
}

// ParseUevent parses the "KEY=value" lines of
// /sys/bus/pci/devices/<addr>/uevent:
//
//	DRIVER=amdgpu
//	PCI_CLASS=38000
//	PCI_ID=1002:740F
//	PCI_SUBSYS_ID=1002:0C34
//	PCI_SLOT_NAME=0000:63:00.0
//
// Unknown keys are ignored; a malformed PCI_ID leaves HasID false so the
// caller falls back to the separate id files.
func ParseUevent(b []byte) Uevent {
	var u Uevent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		switch k {
		case "DRIVER":
			u.Driver = v
		case "PCI_CLASS":
			if c, err := strconv.ParseUint(v, 16, 32); err == nil && c <= 0xffffff {
				u.Class = uint32(c)
			}
		case "PCI_ID":
			if a, b, ok := parsePair(v); ok {
				u.Vendor, u.Device, u.HasID = a, b, true
			}
		case "PCI_SUBSYS_ID":
			if a, b, ok := parsePair(v); ok {
				u.SubsystemVendor, u.SubsystemDevice = a, b
			}
		case "PCI_SLOT_NAME":
			u.SlotName = strings.ToLower(v)
		}
	}
	return u
}

func parsePair(s string) (uint16, uint16, bool) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 16)
	y, err2 := strconv.ParseUint(b, 16, 16)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint16(x), uint16(y), true
}

// genByRate maps a PCIe transfer rate (GT/s) to its generation.
var genByRate = []struct {
	gts float64
	gen int
}{{2.5, 1}, {5, 2}, {8, 3}, {16, 4}, {32, 5}, {64, 6}, {128, 7}}

// LinkGen returns the PCIe generation for a transfer rate in GT/s, 0 when
// the rate is not a PCIe rate.
func LinkGen(gts float64) int {
	for _, r := range genByRate {
		if gts > r.gts-0.05 && gts < r.gts+0.05 {
			return r.gen
		}
	}
	return 0
}

// ParseLinkSpeed parses current_link_speed / max_link_speed text:
// "16.0 GT/s PCIe" (kernels since 4.19), "8 GT/s" or "2.5 GT/s" (older),
// "Unknown" or "Unknown speed" (no link). It returns the rate, the
// generation and whether the text named a rate.
func ParseLinkSpeed(b []byte) (gts float64, gen int, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 2 || f[1] != "GT/s" {
		return 0, 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v <= 0 || v > 1024 {
		return 0, 0, false
	}
	return v, LinkGen(v), true
}

// ParseLinkWidth parses current_link_width / max_link_width ("16", "x16").
// 0 and values the kernel never writes (above 32 lanes) are not widths.
func ParseLinkWidth(b []byte) (int, bool) {
	s := strings.TrimPrefix(strings.TrimSpace(string(b)), "x")
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 32 {
		return 0, false
	}
	return n, true
}
