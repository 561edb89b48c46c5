package pci

import (
	"regexp"
	"strconv"
	"sync"
)

// vendorNames are the pci.ids vendor names of the accelerator vendors.
var vendorNames = map[uint16]string{
	VendorNVIDIA: "NVIDIA Corporation",
	VendorAMD:    "Advanced Micro Devices, Inc. [AMD/ATI]",
	VendorIntel:  "Intel Corporation",
	VendorGoogle: "Google, Inc.",
	VendorAmazon: "Amazon.com, Inc.",
}

// embeddedDevices names data-centre accelerators when the host has no
// pci.ids (minimal containers, distroless images). The NVIDIA, AMD and
// Amazon names are the lines of pci.ids 2023.04.10 (Debian package
// pci.ids 0.0~2023.04.11-1) verbatim; the TPU names follow the chip table
// of tpu-info (AI-Hypercomputer/cloud-accelerator-diagnostics device.py),
// which pci.ids does not list. The table is a fallback, not a catalogue:
// an unlisted device is still reported, by its ids.
var embeddedDevices = map[[2]uint16]string{
	{VendorNVIDIA, 0x15f7}: "GP100GL [Tesla P100 PCIe 12GB]",
	{VendorNVIDIA, 0x15f8}: "GP100GL [Tesla P100 PCIe 16GB]",
	{VendorNVIDIA, 0x15f9}: "GP100GL [Tesla P100 SXM2 16GB]",
	{VendorNVIDIA, 0x1b38}: "GP102GL [Tesla P40]",
	{VendorNVIDIA, 0x1bb3}: "GP104GL [Tesla P4]",
	{VendorNVIDIA, 0x1db1}: "GV100GL [Tesla V100 SXM2 16GB]",
	{VendorNVIDIA, 0x1db4}: "GV100GL [Tesla V100 PCIe 16GB]",
	{VendorNVIDIA, 0x1db5}: "GV100GL [Tesla V100 SXM2 32GB]",
	{VendorNVIDIA, 0x1db6}: "GV100GL [Tesla V100 PCIe 32GB]",
	{VendorNVIDIA, 0x1df6}: "GV100GL [Tesla V100S PCIe 32GB]",
	{VendorNVIDIA, 0x1eb8}: "TU104GL [Tesla T4]",
	{VendorNVIDIA, 0x20b0}: "GA100 [A100 SXM4 40GB]",
	{VendorNVIDIA, 0x20b2}: "GA100 [A100 SXM4 80GB]",
	{VendorNVIDIA, 0x20b5}: "GA100 [A100 PCIe 80GB]",
	{VendorNVIDIA, 0x20b7}: "GA100GL [A30 PCIe]",
	{VendorNVIDIA, 0x20f1}: "GA100 [A100 PCIe 40GB]",
	{VendorNVIDIA, 0x20f3}: "GA100 [A800-SXM4-80GB]",
	{VendorNVIDIA, 0x2235}: "GA102GL [A40]",
	{VendorNVIDIA, 0x2236}: "GA102GL [A10]",
	{VendorNVIDIA, 0x2237}: "GA102GL [A10G]",
	{VendorNVIDIA, 0x2324}: "GH100 [H800]",
	{VendorNVIDIA, 0x2330}: "GH100[H100 SXM5 80GB]",
	{VendorNVIDIA, 0x2331}: "GH100 [H100 PCIe]",
	{VendorNVIDIA, 0x26b5}: "AD102GL [L40]",
	{VendorNVIDIA, 0x27b8}: "AD104GL [L4]",
	{VendorAMD, 0x66a1}:    "Vega 20 [Radeon Pro VII/Radeon Instinct MI50 32GB]",
	{VendorAMD, 0x738c}:    "Arcturus GL-XL [Instinct MI100]",
	{VendorAMD, 0x7408}:    "Aldebaran/MI200 [Instinct MI250X]",
	{VendorAMD, 0x740c}:    "Aldebaran/MI200 [Instinct MI250X/MI250]",
	{VendorAMD, 0x740f}:    "Aldebaran/MI200 [Instinct MI210]",
	{VendorAmazon, 0x7064}: "NeuronDevice (Inferentia)",
	{VendorAmazon, 0x7164}: "NeuronDevice (Trainium)",
	{VendorAmazon, 0x7264}: "NeuronDevice (Inferentia2)",
	{VendorGoogle, 0x005e}: "TPU v4",
	{VendorGoogle, 0x0062}: "TPU v5p",
	{VendorGoogle, 0x0063}: "TPU v5e",
	{VendorGoogle, 0x006f}: "TPU v6e",
}

func embeddedNames(k Key) (Names, bool) {
	d, ok := embeddedDevices[[2]uint16{k.Vendor, k.Device}]
	if !ok {
		return Names{}, false
	}
	return Names{Vendor: vendorNames[k.Vendor], Device: d, Source: "embedded"}, true
}

// VendorName is the vendor's pci.ids name for the five accelerator
// vendors, "" for any other.
func VendorName(v uint16) string { return vendorNames[v] }

var boardMemory = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s\[\-/])(\d{1,4})\s?GB\b`) })

// BoardMemoryMiB reads a board's memory from its ID-database name, where
// the name states it ("Tesla P100 PCIe 16GB", "A800-SXM4-80GB"): 0 when
// the name does not. Names listing several boards ("MI250X/MI250") state
// no size and give 0.
func BoardMemoryMiB(name string) int64 {
	m := boardMemory().FindAllStringSubmatch(name, -1)
	if len(m) != 1 {
		return 0
	}
	n, err := strconv.Atoi(m[0][1])
	if err != nil || n <= 0 {
		return 0
	}
	return int64(n) * 1024
}
