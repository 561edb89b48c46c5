package rocm

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Properties is one KFD topology "properties" file: "key value" lines with
// unsigned decimal values (hive_id and unique_id use all 64 bits).
type Properties map[string]uint64

// ParseProperties parses a KFD node or memory-bank properties file. Lines
// that are not "key <unsigned decimal>" are skipped: the kernel has added
// keys over the years and a probe must not fail on one it does not know.
func ParseProperties(b []byte) Properties {
	p := Properties{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1024), 64<<10)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		p[f[0]] = v
	}
	return p
}

// Get returns a key and whether it was present.
func (p Properties) Get(key string) (uint64, bool) {
	v, ok := p[key]
	return v, ok
}

// GFXName decodes gfx_target_version into the LLVM target name. The kernel
// encodes major*10000 + minor*100 + stepping in decimal, and LLVM spells
// the stepping as one hex digit: 90010 -> gfx90a, 90402 -> gfx942,
// 90006 -> gfx906, 110000 -> gfx1100, 120001 -> gfx1201. It returns ""
// for 0 (CPU nodes) and for values that cannot be a target.
func GFXName(v uint64) string {
	if v < 10000 || v > 999999 {
		return ""
	}
	major := v / 10000
	minor := (v / 100) % 100
	step := v % 100
	if minor > 15 || step > 15 {
		return ""
	}
	return fmt.Sprintf("gfx%d%x%x", major, minor, step)
}

// BusID turns KFD's domain and location_id into a PCI bus address.
// location_id packs bus<<8 | device<<3 | function, as the kernel's
// pci_dev_id() does.
func BusID(domain, location uint64) string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", domain&0xffff, (location>>8)&0xff, (location>>3)&0x1f, location&0x7)
}
