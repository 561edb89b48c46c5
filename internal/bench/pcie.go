package bench

// PCIe link arithmetic. Per-lane signalling rates and line encodings are
// from the PCI-SIG base specifications: 8b/10b for generations 1 and 2,
// 128b/130b for 3 to 5, and FLIT mode from generation 6, whose 256-byte
// flits carry 236 bytes of payload besides CRC and FEC (counted as
// 242/256 here, the flit's payload plus DLLP share).

// PCIeLaneGTs returns the per-lane rate in GT/s for a generation, 0 when
// unknown.
func PCIeLaneGTs(gen int) float64 {
	switch gen {
	case 1:
		return 2.5
	case 2:
		return 5
	case 3:
		return 8
	case 4:
		return 16
	case 5:
		return 32
	case 6:
		return 64
	case 7:
		return 128
	}
	return 0
}

// PCIeEncoding returns the fraction of the line rate that carries data.
func PCIeEncoding(gen int) float64 {
	switch {
	case gen == 1 || gen == 2:
		return 8.0 / 10
	case gen >= 3 && gen <= 5:
		return 128.0 / 130
	case gen >= 6 && gen <= 7:
		return 242.0 / 256
	}
	return 0
}

// PCIeBandwidthGBs is the theoretical one-direction host↔device bandwidth
// of a link in decimal GB/s: GT/s × encoding × width / 8. Protocol
// overheads (TLP headers, flow control) take a further 10-20% in practice.
func PCIeBandwidthGBs(gen, width int) float64 {
	if width <= 0 {
		return 0
	}
	return PCIeLaneGTs(gen) * PCIeEncoding(gen) * float64(width) / 8
}
