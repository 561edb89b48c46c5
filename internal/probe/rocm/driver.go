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
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/pci"
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

// Node is one KFD GPU node as the driver read it.
type Node struct {
	ID         int        `json:"node"`
	Properties Properties `json:"properties"`
	// VRAMBytes is the sum of the node's frame-buffer memory banks.
	VRAMBytes uint64 `json:"vram_bytes"`
}

// Raw is what doctor can inspect after a probe.
type Raw struct {
	Nodes []Node `json:"nodes"`
	// PCI lists the AMD GPU functions on the bus, also when KFD is missing.
	PCI        []pci.Device `json:"pci"`
	DevKFD     bool         `json:"dev_kfd"`
	GroupsOK   bool         `json:"groups_ok"`
	KFDMissing bool         `json:"kfd_missing"`
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	devs, scanErr := pci.Scan(h)
	amd := pci.Filter(devs, func(d pci.Device) bool { return d.Vendor == pci.VendorAMD && d.IsGPULike() })
	if scanErr == nil && len(amd) == 0 {
		return probe.Result{Source: "sysfs"}, probe.Absent("no AMD GPU on the PCI bus")
	}
	raw := Raw{PCI: amd}
	entries, err := h.FS.ReadDir(NodesDir)
	if err != nil {
		raw.KFDMissing = true
		if scanErr != nil {
			return probe.Result{Source: "sysfs", Raw: raw}, probe.Absent("no PCI bus and no KFD topology")
		}
		return probe.Result{Source: "sysfs", Raw: raw}, probe.Absent("%d AMD GPU(s) on the PCI bus but no KFD topology (%s): amdgpu not loaded or no compute support", len(amd), NodesDir)
	}
	var ids []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= 0 {
			ids = append(ids, n)
		}
	}
	sort.Ints(ids)
	for _, id := range ids {
		if ctx.Err() != nil {
			return probe.Result{Source: "sysfs"}, ctx.Err()
		}
		dir := NodesDir + "/" + strconv.Itoa(id)
		b, err := h.FS.ReadFile(dir + "/properties")
		if err != nil {
			continue
		}
		p := ParseProperties(b)
		if p["simd_count"] == 0 {
			continue
		}
		raw.Nodes = append(raw.Nodes, Node{ID: id, Properties: p, VRAMBytes: frameBuffer(h, dir)})
	}
	if len(raw.Nodes) == 0 {
		return probe.Result{Source: "sysfs", Raw: raw}, probe.Absent("KFD topology has no GPU node (simd_count > 0)")
	}

	raw.DevKFD = h.Exists("/dev/kfd")
	raw.GroupsOK = groupsOK(h.Identity)

	// Partitions (CPX, QPX, TPX ...) appear as several KFD nodes of one
	// physical GPU: they share unique_id, and their location_id differs
	// only in the PCI function number (k8s-device-plugin's MI308X CPX
	// capture). Count them so each device can say which part it is.
	perGPU := map[string]int{}
	for _, n := range raw.Nodes {
		perGPU[physicalKey(n.Properties)]++
	}
	seen := map[string]int{}
	partitionMode := map[string]string{}

	out := make([]probe.Device, 0, len(raw.Nodes))
	gfxSeen := map[string]bool{}
	var gfxList []string
	for i, n := range raw.Nodes {
		p := n.Properties
		bus := BusID(p["domain"], p["location_id"])
		fn, onBus := pci.ByAddress(devs, bus)
		if !onBus {
			// A partition's location names a function that is not on the
			// bus; the physical GPU is function 0 of the same slot.
			fn, onBus = pci.ByAddress(devs, BusID(p["domain"], p["location_id"]&^7))
		}
		if onBus {
			bus = fn.Address
		}
		key := physicalKey(p)
		devID := uint16(p["device_id"])
		if onBus {
			devID = fn.Device
		}
		prod, known := Products[devID]

		gfx := GFXName(p["gfx_target_version"])
		gfxSource := "gfx_target_version"
		if gfx == "" && known {
			gfx, gfxSource = prod.GFX, "device id table"
		}
		if gfx == "" {
			gfxSource = ""
		}

		name := prod.Name
		if !known {
			if s, err := h.ReadString(pci.DevicesDir + "/" + bus + "/product_name"); err == nil && s != "" {
				name = s
			} else if gfx != "" {
				name = "AMD GPU (" + gfx + ")"
			} else {
				name = fmt.Sprintf("AMD GPU %04x", devID)
			}
		}

		extra := map[string]any{"kfd_node": n.ID, "dev_kfd": raw.DevKFD, "groups_ok": raw.GroupsOK}
		if gfxSource != "" {
			extra["gfx_source"] = gfxSource
		}
		if spc := p["simd_per_cu"]; spc > 0 {
			extra["compute_units"] = p["simd_count"] / spc
		}
		if x, ok := p.Get("num_xcc"); ok {
			extra["num_xcc"] = x
		}
		if w, ok := p.Get("wave_front_size"); ok && w > 0 {
			extra["wavefront_size"] = w
		}
		if mhz := p["max_engine_clk_fcompute"]; mhz > 0 {
			extra["max_clock_mhz"] = mhz
		}
		var render string
		if minor, ok := p.Get("drm_render_minor"); ok && minor > 0 {
			render = "/dev/dri/renderD" + strconv.FormatUint(minor, 10)
			extra["render_node"] = render
			extra["render_node_present"] = h.Exists(render)
		}
		if k := perGPU[key]; k > 1 {
			extra["partition_index"] = seen[key]
			extra["partitions"] = k
			if _, done := partitionMode[key]; !done {
				partitionMode[key], _ = h.ReadString(pci.DevicesDir + "/" + bus + "/current_compute_partition")
			}
			if m := partitionMode[key]; m != "" {
				extra["compute_partition"] = m
			}
		}
		seen[key]++
		if onBus {
			extra["pci_driver"] = fn.Driver
			if fn.NUMANode >= 0 {
				extra["numa_node"] = fn.NUMANode
			}
		}

		var mem *int64
		switch {
		case n.VRAMBytes > 0:
			mem = probe.Ptr(int64(n.VRAMBytes >> 20))
			extra["memory_source"] = "kfd mem_banks"
		default:
			if v := drmVRAM(h, render); v > 0 {
				mem = probe.Ptr(int64(v >> 20))
				extra["memory_source"] = "drm mem_info_vram_total"
			}
		}

		var uuid *string
		if u := p["unique_id"]; u != 0 {
			uuid = probe.Ptr(fmt.Sprintf("GPU-%016x", u))
		}
		var arch *string
		if gfx != "" {
			arch = probe.Ptr(gfx)
			if !gfxSeen[gfx] {
				gfxSeen[gfx] = true
				gfxList = append(gfxList, gfx)
			}
		}
		sup := capability.Evaluate(capability.Facts{Backend: "rocm", Generation: gfx})
		d := probe.Device{
			ID:               "rocm:" + strconv.Itoa(i),
			Index:            i,
			Backend:          "rocm",
			DeviceType:       "gpu",
			Vendor:           "AMD",
			Name:             name,
			UUID:             uuid,
			PCIBusID:         probe.Ptr(bus),
			TotalMemoryMB:    mem,
			Architecture:     arch,
			SupportsFP16:     sup.FP16,
			SupportsBF16:     sup.BF16,
			Supports8Bit:     sup.Int8,
			SupportsFP8:      sup.FP8,
			PytorchDevice:    "cuda:" + strconv.Itoa(i),
			JAXPlatform:      "rocm",
			VisibilityEnv:    "HIP_VISIBLE_DEVICES",
			InferenceContext: "torch.inference_mode",
			Extra:            extra,
		}
		if onBus {
			d.Link = fn.PCIeLink()
		}
		out = append(out, d)
	}

	res := probe.Result{Devices: out, Source: "sysfs", Raw: raw}
	res.Detail = fmt.Sprintf("%d GPU(s)", len(out))
	if len(gfxList) > 0 {
		res.Detail += " (" + strings.Join(gfxList, ", ") + ")"
	}
	if !raw.DevKFD {
		res.Detail += "; /dev/kfd missing"
	} else if !raw.GroupsOK {
		res.Detail += "; not in the render/video group"
	}
	pl := &probe.Platform{Backend: "rocm"}
	if v, err := h.ReadString("/sys/module/amdgpu/version"); err == nil && v != "" {
		pl.DriverVersion = &v
	}
	if v, err := h.ReadString("/opt/rocm/.info/version"); err == nil && v != "" {
		pl.RuntimeVersion = &v
	}
	res.Platform = pl
	return res, nil
}

// physicalKey names the physical GPU behind a KFD node: its unique_id when
// the kernel reports one, else its PCI slot (function bits cleared).
func physicalKey(p Properties) string {
	if u := p["unique_id"]; u != 0 {
		return "uid:" + strconv.FormatUint(u, 10)
	}
	return "bus:" + BusID(p["domain"], p["location_id"]&^7)
}

// frameBuffer sums the node's frame-buffer banks (heap_type 1 = public,
// 2 = private). A bank without heap_type counts as frame buffer: old
// kernels omit it on dGPUs. In partition modes each node reports its own
// share of VRAM (ROCm/ROCm#4750).
func frameBuffer(h *host.Host, nodeDir string) uint64 {
	banks, err := h.FS.ReadDir(nodeDir + "/mem_banks")
	if err != nil {
		return 0
	}
	var total uint64
	for _, b := range banks {
		data, err := h.FS.ReadFile(nodeDir + "/mem_banks/" + b.Name() + "/properties")
		if err != nil {
			continue
		}
		p := ParseProperties(data)
		ht, hasType := p.Get("heap_type")
		if hasType && ht != 1 && ht != 2 {
			continue
		}
		total += p["size_in_bytes"]
	}
	return total
}

// drmVRAM reads mem_info_vram_total of the DRM device behind a render node.
func drmVRAM(h *host.Host, render string) uint64 {
	if render == "" {
		return 0
	}
	node := strings.TrimPrefix(render, "/dev/dri/")
	s, err := h.ReadString("/sys/class/drm/" + node + "/device/mem_info_vram_total")
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

// groupsOK reports whether the user can open /dev/kfd and render nodes on
// a stock install: root, or a member of render or video (ROCm's udev rules
// use render on current distributions, video on older ones).
func groupsOK(id host.Identity) bool {
	if id.UID == 0 {
		return true
	}
	for _, g := range id.Groups {
		if g == "render" || g == "video" {
			return true
		}
	}
	return false
}
