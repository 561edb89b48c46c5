package pci

// nvidiaCC is the CUDA compute capability of the NVIDIA data-centre boards
// the embedded name table knows, by PCI device id, for GPUs the vendor
// library cannot be asked about (no NVML here). The ids and names are
// those of the embedded table (pci.ids), and for Turing and later boards
// also of the "Compatible GPUs" list in NVIDIA/open-gpu-kernel-modules
// README.md (df1c9a3d: "Tesla T4 | 1EB8 10DE 12A2", "NVIDIA A100-SXM4-80GB
// | 20B2 ...", "NVIDIA H100 PCIe | 2331 ..."); the compute capability is
// that of the board's entry in configs/devices.yaml (a test in
// internal/recommend holds the two equal). The P100 SXM2 (15f9) has no
// catalogue entry: it is the GP100 chip of the PCIe boards (pci.ids
// "GP100GL"), compute capability 6.0 like them.
var nvidiaCC = map[uint16]string{
	0x15f7: "6.0", 0x15f8: "6.0", 0x15f9: "6.0", // Tesla P100 PCIe 12GB, PCIe 16GB, SXM2 16GB
	0x1b38: "6.1", 0x1bb3: "6.1", // Tesla P40, P4
	0x1db1: "7.0", 0x1db4: "7.0", 0x1db5: "7.0", 0x1db6: "7.0", 0x1df6: "7.0", // V100 SXM2/PCIe 16/32GB, V100S
	0x1eb8: "7.5",                                                                            // T4
	0x20b0: "8.0", 0x20b2: "8.0", 0x20b5: "8.0", 0x20b7: "8.0", 0x20f1: "8.0", 0x20f3: "8.0", // A100, A30, A800
	0x2235: "8.6", 0x2236: "8.6", 0x2237: "8.6", // A40, A10, A10G
	0x2324: "9.0", 0x2330: "9.0", 0x2331: "9.0", // H800, H100 SXM5, H100 PCIe
	0x26b5: "8.9", 0x27b8: "8.9", // L40, L4
}

// NVIDIAComputeCapability is the compute capability of an NVIDIA board by
// its PCI device id, "" when devctl's table does not know it.
func NVIDIAComputeCapability(device uint16) string { return nvidiaCC[device] }

// NVIDIAComputeCapabilities lists the table, for the test that holds it
// equal to the device catalogue.
func NVIDIAComputeCapabilities() map[uint16]string {
	out := make(map[uint16]string, len(nvidiaCC))
	for k, v := range nvidiaCC {
		out[k] = v
	}
	return out
}

// EmbeddedName is the embedded table's pci.ids name of a device, "" when
// it has none.
func EmbeddedName(vendor, device uint16) string { return embeddedDevices[[2]uint16{vendor, device}] }
