// Package rocm is the AMD GPU (ROCm) probe driver.
//
// It reads the kernel's view only: the KFD topology under
// /sys/class/kfd/kfd/topology/nodes (one node per CPU socket and one per
// GPU or GPU partition; a node is a GPU when simd_count > 0, the rule JAX
// uses), joined to the PCI walk through domain/location_id and to DRM
// through drm_render_minor. No ROCm library is loaded, so it works in
// containers and on hosts where the ROCm user space is broken.
package rocm

import (
	"context"
	"strconv"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
)

// NodesDir is the KFD topology.
const NodesDir = "/sys/class/kfd/kfd/topology/nodes"

// Driver probes AMD GPUs.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "rocm" }

// Product is what devctl knows about one AMD device id.
type Product struct {
	Name string
	// GFX is the LLVM target, used when the kernel is too old to report
	// gfx_target_version.
	GFX string
}

// Products maps PCI device ids to names. The Instinct ids are Ray's table
// (python/ray/_private/accelerators/amd_gpu.py); 0x67df is the Polaris
// card of ROCm/ROCm#474. Anything else is named from the sysfs
// product_name file or the gfx target.
var Products = map[uint16]Product{
	0x66a1: {"AMD Instinct MI50", "gfx906"},
	0x738c: {"AMD Instinct MI100", "gfx908"},
	0x7408: {"AMD Instinct MI250X", "gfx90a"},
	0x740c: {"AMD Instinct MI250X/MI250", "gfx90a"},
	0x740f: {"AMD Instinct MI210", "gfx90a"},
	0x74a0: {"AMD Instinct MI300A", "gfx942"},
	0x74a1: {"AMD Instinct MI300X", "gfx942"},
	0x74a2: {"AMD Instinct MI308X", "gfx942"},
	0x74a5: {"AMD Instinct MI325X", "gfx942"},
	0x74a9: {"AMD Instinct MI300X-HF", "gfx942"},
	0x75a0: {"AMD Instinct MI350X", "gfx950"},
	0x75a3: {"AMD Instinct MI355X", "gfx950"},
	0x67df: {"AMD Radeon RX 470/480/570/580 (Ellesmere)", "gfx803"},
}

// Node is one KFD GPU node as the driver read it, joined to the PCI bus
// and the files its interpretation needs.
type Node struct {
	ID         int        `json:"node"`
	Properties Properties `json:"properties"`
	// VRAMBytes is the sum of the node's frame-buffer memory banks.
	VRAMBytes uint64 `json:"vram_bytes"`
	// Bus is the node's PCI address: its function on the bus (function 0
	// of the slot for a partition), else the address KFD reports.
	Bus string `json:"bus"`
	// Function is the PCI function behind the node; nil when not on the bus.
	Function *pci.Device `json:"function,omitempty"`
	// ProductName is sysfs product_name, read for ids not in Products.
	ProductName string `json:"product_name,omitempty"`
	// RenderNodePresent says whether /dev/dri/renderD<drm_render_minor> exists.
	RenderNodePresent bool `json:"render_node_present"`
	// DRMVRAMBytes is DRM's mem_info_vram_total, read when KFD reports no
	// frame buffer.
	DRMVRAMBytes uint64 `json:"drm_vram_bytes,omitempty"`
	// ComputePartition is the GPU's current_compute_partition (CPX, ...),
	// read when KFD shows it split into several nodes.
	ComputePartition string `json:"compute_partition,omitempty"`
}

// Raw is everything the driver read: the input of Interpret, and what
// doctor can inspect after a probe.
type Raw struct {
	Nodes []Node `json:"nodes"`
	// PCI lists the AMD GPU functions on the bus, also when KFD is missing.
	PCI            []pci.Device `json:"pci"`
	DevKFD         bool         `json:"dev_kfd"`
	GroupsOK       bool         `json:"groups_ok"`
	KFDMissing     bool         `json:"kfd_missing"`
	DriverVersion  string       `json:"driver_version,omitempty"`  // /sys/module/amdgpu/version
	RuntimeVersion string       `json:"runtime_version,omitempty"` // /opt/rocm/.info/version
}

// Probe implements probe.Driver: collect the facts, then interpret them.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	raw, err := Collect(ctx, h)
	if err != nil {
		return probe.Result{Source: "sysfs"}, err
	}
	return Interpret(*raw), nil
}

// physicalKey names the physical GPU behind a KFD node: its unique_id when
// the kernel reports one, else its PCI slot (function bits cleared).
func physicalKey(p Properties) string {
	if u := p["unique_id"]; u != 0 {
		return "uid:" + strconv.FormatUint(u, 10)
	}
	return "bus:" + BusID(p["domain"], p["location_id"]&^7)
}
