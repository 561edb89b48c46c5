package history

// DeviceReport is one device's line of `devctl history`: its record and
// the rule's verdict.
type DeviceReport struct {
	DeviceSummary
	Rule Verdict `json:"rule"`
}

// Report is the whole output of `devctl history -o json`.
type Report struct {
	File    string         `json:"file"`
	Devices []DeviceReport `json:"devices"`
	Records Records        `json:"records,omitempty"`
}
