package pci

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
)

// IDsPaths are where distributions install the PCI ID database (pciutils
// and hwdata), in the order lspci itself prefers them.
var IDsPaths = []string{
	"/usr/share/hwdata/pci.ids",
	"/usr/share/misc/pci.ids",
	"/usr/share/pci.ids",
	"/var/lib/pciutils/pci.ids",
	"/usr/share/hwdata/pci.ids.gz",
	"/usr/share/misc/pci.ids.gz",
}

// maxIDsFile bounds what is read from a pci.ids file (the real one is
// about 1.3 MB; a gzip file is bounded after decompression).
const maxIDsFile = 8 << 20

// Key names one PCI function model: vendor and device, and the subsystem
// pair that identifies the board (zero when unknown).
type Key struct {
	Vendor, Device                   uint16
	SubsystemVendor, SubsystemDevice uint16
}

// Names are what the ID database says about a Key. Empty strings mean the
// database does not list that level.
type Names struct {
	Vendor    string `json:"vendor,omitempty"`
	Device    string `json:"device,omitempty"`
	Subsystem string `json:"subsystem,omitempty"`
	// Source is the file the names came from, or "embedded".
	Source string `json:"source,omitempty"`
}

// Model is the most specific name: the board (subsystem) name when listed,
// else the device name.
func (n Names) Model() string {
	if n.Subsystem != "" {
		return n.Subsystem
	}
	return n.Device
}

// ParseIDs looks the keys up in the text of a pci.ids file:
//
//	10de  NVIDIA Corporation
//		15f8  GP100GL [Tesla P100 PCIe 16GB]
//			10de 118f  Tesla P100 PCIe 16GB
//
// It does not parse the whole file: for each wanted vendor it jumps to that
// vendor's line and reads only its block, so a lookup costs a few memchr
// passes over the 1.3 MB file. Keys whose vendor is not listed are absent
// from the result.
func ParseIDs(b []byte, keys []Key) map[Key]Names {
	out := map[Key]Names{}
	blocks := map[uint16][]byte{}
	for _, k := range keys {
		blk, seen := blocks[k.Vendor]
		if !seen {
			blk = vendorBlock(b, k.Vendor)
			blocks[k.Vendor] = blk
		}
		if blk == nil {
			continue
		}
		out[k] = lookupBlock(blk, k)
	}
	return out
}

// vendorBlock returns the vendor's line and its indented lines, nil when the
// vendor is not listed.
func vendorBlock(b []byte, vendor uint16) []byte {
	hex := []byte(hex4(vendor) + "  ")
	for off := 0; off < len(b); {
		i := bytes.Index(b[off:], hex)
		if i < 0 {
			return nil
		}
		i += off
		if i == 0 || b[i-1] == '\n' {
			end := i
			for {
				nl := bytes.IndexByte(b[end:], '\n')
				if nl < 0 {
					return b[i:]
				}
				end += nl + 1
				if end >= len(b) || (b[end] != '\t' && b[end] != '#') {
					return b[i:end]
				}
			}
		}
		off = i + 1
	}
	return nil
}

func lookupBlock(blk []byte, k Key) Names {
	var n Names
	first := blk
	if i := bytes.IndexByte(blk, '\n'); i >= 0 {
		first = blk[:i]
	}
	n.Vendor = field(strings.TrimRight(string(first), "\r"), 4)
	i := bytes.Index(blk, []byte("\n\t"+hex4(k.Device)+"  "))
	if i < 0 {
		return n
	}
	rest := blk[i+2:]
	line, rest := cutLine(rest)
	n.Device = field(strings.TrimRight(string(line), "\r"), 4)
	if k.SubsystemVendor == 0 && k.SubsystemDevice == 0 {
		return n
	}
	sub := []byte(hex4(k.SubsystemVendor) + " " + hex4(k.SubsystemDevice) + " ")
	for len(rest) > 0 {
		line, rest = cutLine(rest)
		switch {
		case bytes.HasPrefix(line, []byte("\t\t")):
			if bytes.HasPrefix(line[2:], sub) {
				n.Subsystem = field(strings.TrimRight(string(line[2:]), "\r"), len(sub)-1)
				return n
			}
		case bytes.HasPrefix(line, []byte("#")):
		default:
			return n
		}
	}
	return n
}

func cutLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// field returns the name after an id of width w and its two-space
// separator, "" when the line is not shaped that way.
func field(s string, w int) string {
	if len(s) < w+2 || s[w] != ' ' {
		return ""
	}
	return strings.TrimSpace(s[w:])
}

func hex4(v uint16) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", 4-len(s)) + s
}

// LookupNames names the keys: first from devctl's embedded table of
// data-centre accelerator ids (itself lines of pci.ids), then, only for
// devices the table does not know, from the host's pci.ids (the first
// readable file of IDsPaths). Reading the 1.3 MB file costs milliseconds,
// so the common case never opens it.
func LookupNames(h *host.Host, keys []Key) map[Key]Names {
	out := map[Key]Names{}
	var rest []Key
	for _, k := range keys {
		if n, ok := embeddedNames(k); ok {
			out[k] = n
		} else {
			rest = append(rest, k)
		}
	}
	if len(rest) == 0 {
		return out
	}
	if b, src, err := readIDs(h); err == nil {
		for k, n := range ParseIDs(b, rest) {
			if n.Device != "" {
				n.Source = src
				out[k] = n
			}
		}
	}
	return out
}

func readIDs(h *host.Host) ([]byte, string, error) {
	if h == nil || h.FS == nil {
		return nil, "", errors.New("no file system")
	}
	for _, p := range IDsPaths {
		b, err := h.FS.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.HasSuffix(p, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				continue
			}
			b, err = io.ReadAll(io.LimitReader(zr, maxIDsFile))
			if err != nil {
				continue
			}
		}
		if len(b) > maxIDsFile {
			b = b[:maxIDsFile]
		}
		return b, p, nil
	}
	return nil, "", errors.New("no pci.ids")
}
