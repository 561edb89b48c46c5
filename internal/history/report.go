package history

// ReportVersion is the version of `devctl history -o json`. 2: attempts,
// device and operation faults, operations, measured runs, this machine.
const ReportVersion = 2

// DeviceReport is one device's line of `devctl history`: its record and
// the rule's verdict for jobs that name no operation.
type DeviceReport struct {
	DeviceSummary
	Rule Verdict `json:"rule"`
}

// Report is the whole output of `devctl history -o json`.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	// Machine is this machine's hashed id ("" when none is readable);
	// OtherMachines counts the records of other machines sharing the
	// file (a home directory on NFS), which are left out.
	Machine       string         `json:"machine,omitempty"`
	OtherMachines int            `json:"other_machines,omitempty"`
	Devices       []DeviceReport `json:"devices"`
	// Operations are the rule's verdicts per recorded (device, operation).
	Operations []Verdict `json:"operations,omitempty"`
	// Measured are the newest attempts with a memory measurement.
	Measured Records `json:"measured,omitempty"`
	Records  Records `json:"records,omitempty"`
}
