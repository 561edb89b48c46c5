package pci

// HasVendor reports whether any function has the vendor id.
func HasVendor(devs []Device, vendor uint16) bool {
	for _, d := range devs {
		if d.Vendor == vendor {
			return true
		}
	}
	return false
}
