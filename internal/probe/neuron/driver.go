// Package neuron is the AWS Inferentia/Trainium probe driver.
//
// Neuron devices are PCI functions of vendor 0x1d0f (Amazon/Annapurna) with
// the device ids the aws-neuron-driver binds (neuron_device.h). Amazon uses
// the same vendor id for the ENA and EFA network functions and NVMe
// controllers of every EC2 instance, so the device id decides. The runtime
// tools (neuron-ls) are not needed: the bus, /dev/neuronN and the kernel
// module say what is there.
package neuron

import (
	"context"
	"fmt"
	"strconv"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes AWS Neuron devices.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "neuron" }

// Chip describes one Neuron device generation.
type Chip struct {
	Generation string // inf1, inf2, trn1, trn2
	Name       string
	// Cores is the physical NeuronCores per device (neuron_device.h: 4 on
	// v1, 2 on v2; 8 on Trainium2 per the v3 address map).
	Cores int
	// LogicalCores is how many NeuronCores the runtime shows per device by
	// default (Trainium2 pairs physical cores: LNC=2 gives 4).
	LogicalCores int
	// MemoryGiB is device memory from AWS's published specifications
	// (not read from the device).
	MemoryGiB int
}

var (
	chipInf1 = Chip{"inf1", "AWS Inferentia", 4, 4, 8}
	chipInf2 = Chip{"inf2", "AWS Inferentia2", 2, 2, 32}
	chipTrn1 = Chip{"trn1", "AWS Trainium", 2, 2, 32}
	chipTrn2 = Chip{"trn2", "AWS Trainium2", 8, 4, 96}
)

// Identify returns the Neuron generation of a PCI function, or false.
func Identify(d pci.Device) (Chip, bool) {
	if d.Vendor != pci.VendorAmazon {
		return Chip{}, false
	}
	switch d.Device {
	case 0x7064, 0x7065, 0x7066, 0x7067:
		return chipInf1, true
	case 0x7264:
		return chipInf2, true
	case 0x7164:
		return chipTrn1, true
	case 0x7364:
		return chipTrn2, true
	}
	return Chip{}, false
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	devs, err := pci.Scan(h)
	if err != nil {
		return probe.Result{Source: "sysfs"}, probe.Absent("%v", err)
	}
	type found struct {
		pci  pci.Device
		chip Chip
	}
	var chips []found
	for _, d := range devs {
		if c, ok := Identify(d); ok {
			chips = append(chips, found{d, c})
		}
	}
	if len(chips) == 0 {
		return probe.Result{Source: "sysfs"}, probe.Absent("no Neuron device on the PCI bus")
	}
	out := make([]probe.Device, 0, len(chips))
	firstCore := 0
	for i, c := range chips {
		node := "/dev/neuron" + strconv.Itoa(i)
		cores := c.chip.LogicalCores
		sup := capability.Evaluate(capability.Facts{Backend: "neuron", Generation: c.chip.Generation})
		extra := map[string]any{
			probe.ExtraGeneration:  c.chip.Generation,
			probe.ExtraNeuronCores: c.chip.Cores,
			"logical_neuron_cores": cores,
			"visible_cores":        coreRange(firstCore, cores),
			"dev_node":             node,
			"dev_node_present":     h.Exists(node),
			"pci_driver":           c.pci.Driver,
			"memory_source":        "published specification",
		}
		if c.pci.NUMANode >= 0 {
			extra["numa_node"] = c.pci.NUMANode
		}
		firstCore += cores
		arch := c.chip.Generation
		out = append(out, probe.Device{
			ID:               "neuron:" + strconv.Itoa(i),
			Index:            i,
			Backend:          "neuron",
			DeviceType:       "npu",
			Vendor:           "AWS",
			Name:             c.chip.Name,
			PCIBusID:         probe.Ptr(c.pci.Address),
			TotalMemoryMB:    probe.Ptr(int64(c.chip.MemoryGiB) * 1024),
			Architecture:     &arch,
			SupportsFP16:     sup.FP16,
			SupportsBF16:     sup.BF16,
			Supports8Bit:     sup.Int8,
			SupportsFP8:      sup.FP8,
			PytorchDevice:    "xla",
			VisibilityEnv:    "NEURON_RT_VISIBLE_CORES",
			InferenceContext: "torch.no_grad",
			Link:             c.pci.PCIeLink(),
			Extra:            extra,
		})
	}
	res := probe.Result{
		Devices: out,
		Source:  "sysfs",
		Detail:  fmt.Sprintf("%d %s device(s), %d NeuronCores", len(chips), chips[0].chip.Name, firstCore),
	}
	pl := &probe.Platform{Backend: "neuron"}
	if v, err := h.ReadString("/sys/module/neuron/version"); err == nil && v != "" {
		pl.DriverVersion = &v
	}
	res.Platform = pl
	return res, nil
}

// coreRange is the NEURON_RT_VISIBLE_CORES value selecting one device's
// cores ("0-1", or "4" for a single core).
func coreRange(first, n int) string {
	if n <= 1 {
		return strconv.Itoa(first)
	}
	return fmt.Sprintf("%d-%d", first, first+n-1)
}
