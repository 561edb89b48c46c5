package rocm

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
)

// Collect reads what the driver needs from the host: the AMD functions on
// the PCI bus, the KFD GPU nodes joined to them, and the files their
// interpretation depends on. It returns a probe.Absent error when there is
// no AMD GPU to describe (with what was read so far); all judgement is left
// to Interpret.
func Collect(ctx context.Context, h *host.Host) (*Raw, error) {
	devs, scanErr := pci.Scan(h)
	amd := pci.Filter(devs, func(d pci.Device) bool { return d.Vendor == pci.VendorAMD && d.IsGPULike() })
	if scanErr == nil && len(amd) == 0 {
		return nil, probe.Absent("no AMD GPU on the PCI bus")
	}
	raw := &Raw{PCI: amd}
	entries, err := h.FS.ReadDir(NodesDir)
	if err != nil {
		raw.KFDMissing = true
		if scanErr != nil {
			return raw, probe.Absent("no PCI bus and no KFD topology")
		}
		return raw, probe.Absent("%d AMD GPU(s) on the PCI bus but no KFD topology (%s): amdgpu not loaded or no compute support", len(amd), NodesDir)
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
			return nil, ctx.Err()
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
		return raw, probe.Absent("KFD topology has no GPU node (simd_count > 0)")
	}
	raw.DevKFD = h.Exists("/dev/kfd")
	raw.GroupsOK = groupsOK(h.Identity)

	perGPU := partitions(raw.Nodes)
	partitionMode := map[string]string{}
	for i := range raw.Nodes {
		n := &raw.Nodes[i]
		p := n.Properties
		n.Bus = BusID(p["domain"], p["location_id"])
		fn, onBus := pci.ByAddress(devs, n.Bus)
		if !onBus {
			// A partition's location names a function that is not on the
			// bus; the physical GPU is function 0 of the same slot.
			fn, onBus = pci.ByAddress(devs, BusID(p["domain"], p["location_id"]&^7))
		}
		if onBus {
			n.Bus, n.Function = fn.Address, &fn
		}
		if _, known := Products[deviceID(*n)]; !known {
			n.ProductName, _ = h.ReadString(pci.DevicesDir + "/" + n.Bus + "/product_name")
		}
		render := renderNode(p)
		if render != "" {
			n.RenderNodePresent = h.Exists(render)
		}
		if key := physicalKey(p); perGPU[key] > 1 {
			if _, done := partitionMode[key]; !done {
				partitionMode[key], _ = h.ReadString(pci.DevicesDir + "/" + n.Bus + "/current_compute_partition")
			}
			n.ComputePartition = partitionMode[key]
		}
		if n.VRAMBytes == 0 {
			n.DRMVRAMBytes = drmVRAM(h, render)
		}
	}
	raw.DriverVersion, _ = h.ReadString("/sys/module/amdgpu/version")
	raw.RuntimeVersion, _ = h.ReadString("/opt/rocm/.info/version")
	return raw, nil
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
