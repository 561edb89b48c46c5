// Package xpu is the Intel GPU (PyTorch "xpu") probe driver.
//
// Intel GPUs are display-class PCI functions of vendor 0x8086 bound to the
// i915 or xe kernel driver. Every Intel desktop and laptop also has an
// integrated GPU on the same vendor and class, so the family comes from
// the device id (the kernel's include/drm/intel/pciids.h): Data Center GPU
// Max (Ponte Vecchio), Arc A-series (DG2/Alchemist), Flex (ATS-M) and
// Arc B-series (Battlemage). Integrated GPUs are not listed as devices:
// they would win the default-device choice over the CPU on every Intel
// laptop, which is rarely what a user wants; the driver detail counts them.
package xpu

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes Intel discrete GPUs.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "xpu" }

// Family names, as the capability rules use them.
const (
	FamilyMax        = "max"
	FamilyArc        = "arc"
	FamilyFlex       = "flex"
	FamilyBattlemage = "battlemage"
)

var familyNames = map[string]string{
	FamilyMax:        "Intel Data Center GPU Max",
	FamilyArc:        "Intel Arc A-series",
	FamilyFlex:       "Intel Data Center GPU Flex",
	FamilyBattlemage: "Intel Arc B-series",
}

// Family returns the product family of an Intel GPU device id, "" for
// integrated and unknown parts. Ids: include/drm/intel/pciids.h (PVC, DG2,
// ATS-M, BMG); 0x0bd0 and 0xe215 from PyTorch's common_xpu.py copy of IGC.
func Family(device uint16) string {
	switch {
	case device == 0x0bd0 || device == 0x0b69 || device == 0x0b6e ||
		(device >= 0x0bd4 && device <= 0x0bdb) || device == 0x0be0 || device == 0x0be1 || device == 0x0be5:
		return FamilyMax
	case device >= 0x56c0 && device <= 0x56c2:
		return FamilyFlex
	case (device >= 0x5690 && device <= 0x5697) || (device >= 0x56a0 && device <= 0x56a6) ||
		(device >= 0x56b0 && device <= 0x56b3) || (device >= 0x56ba && device <= 0x56bf):
		return FamilyArc
	case device == 0xe202 || device == 0xe209 || (device >= 0xe20b && device <= 0xe20d) ||
		(device >= 0xe210 && device <= 0xe212) || device == 0xe215 || device == 0xe216 ||
		(device >= 0xe220 && device <= 0xe223):
		return FamilyBattlemage
	}
	return ""
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	devs, err := pci.Scan(h)
	if err != nil {
		return probe.Result{Source: "sysfs"}, probe.Absent("%v", err)
	}
	var skipped []pci.Device // integrated GPUs and functions without i915/xe bound: not listed
	type found struct {
		pci    pci.Device
		family string
	}
	var gpus []found
	unbound := 0
	for _, d := range devs {
		if d.Vendor != pci.VendorIntel || !d.IsDisplay() {
			continue
		}
		fam := Family(d.Device)
		if fam == "" {
			skipped = append(skipped, d)
			continue
		}
		if d.Driver != "i915" && d.Driver != "xe" {
			skipped = append(skipped, d)
			unbound++
			continue
		}
		gpus = append(gpus, found{d, fam})
	}
	if len(gpus) == 0 {
		switch {
		case unbound > 0:
			return probe.Result{Source: "sysfs"}, probe.Absent("%d Intel discrete GPU(s) without the i915 or xe driver bound", unbound)
		case len(skipped) > 0:
			return probe.Result{Source: "sysfs"}, probe.Absent("no Intel discrete GPU (%d integrated GPU(s) not listed)", len(skipped))
		}
		return probe.Result{Source: "sysfs"}, probe.Absent("no Intel GPU on the PCI bus")
	}
	out := make([]probe.Device, 0, len(gpus))
	for i, g := range gpus {
		sup := capability.Evaluate(capability.Facts{Backend: "xpu", Generation: g.family})
		extra := map[string]any{"family": g.family, "pci_driver": g.pci.Driver, "device_id": fmt.Sprintf("0x%04x", g.pci.Device)}
		if g.pci.NUMANode >= 0 {
			extra["numa_node"] = g.pci.NUMANode
		}
		mem, src := memory(h, g.pci)
		var total *int64
		if mem > 0 {
			total = probe.Ptr(int64(mem >> 20))
			extra["memory_source"] = src
		}
		fam := g.family
		out = append(out, probe.Device{
			ID:               "xpu:" + strconv.Itoa(i),
			Index:            i,
			Backend:          "xpu",
			DeviceType:       "gpu",
			Vendor:           "Intel",
			Name:             familyNames[g.family],
			PCIBusID:         probe.Ptr(g.pci.Address),
			TotalMemoryMB:    total,
			Architecture:     &fam,
			SupportsFP16:     sup.FP16,
			SupportsBF16:     sup.BF16,
			Supports8Bit:     sup.Int8,
			SupportsFP8:      sup.FP8,
			PytorchDevice:    "xpu:" + strconv.Itoa(i),
			VisibilityEnv:    "ONEAPI_DEVICE_SELECTOR",
			InferenceContext: "torch.inference_mode",
			Link:             g.pci.PCIeLink(),
			Extra:            extra,
		})
	}
	detail := fmt.Sprintf("%d GPU(s)", len(out))
	if len(skipped) > 0 {
		detail += fmt.Sprintf(", %d integrated or unbound not listed", len(skipped))
	}
	return probe.Result{Devices: out, Source: "sysfs", Detail: detail, Platform: &probe.Platform{Backend: "xpu"}}, nil
}

// memory reads device memory where the kernel publishes it: xe has
// tile<N>/physical_vram_size_bytes per tile (summed); Intel's out-of-tree
// i915 has lmem_total_bytes on the DRM card. Mainline i915 publishes none.
func memory(h *host.Host, d pci.Device) (uint64, string) {
	dir := d.Dir()
	if d.Driver == "xe" {
		entries, err := h.FS.ReadDir(dir)
		if err == nil {
			var total uint64
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "tile") {
					continue
				}
				if s, err := h.ReadString(dir + "/" + e.Name() + "/physical_vram_size_bytes"); err == nil {
					v, _ := strconv.ParseUint(s, 10, 64)
					total += v
				}
			}
			if total > 0 {
				return total, "xe physical_vram_size_bytes"
			}
		}
	}
	if cards, err := h.FS.ReadDir(dir + "/drm"); err == nil {
		for _, c := range cards {
			if !strings.HasPrefix(c.Name(), "card") {
				continue
			}
			if s, err := h.ReadString(dir + "/drm/" + c.Name() + "/lmem_total_bytes"); err == nil {
				if v, err := strconv.ParseUint(s, 10, 64); err == nil && v > 0 {
					return v, "i915 lmem_total_bytes"
				}
			}
		}
	}
	return 0, ""
}
