package rocm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/probe"
)

// Interpret turns collected facts into the report's devices, detail and
// platform. It reads nothing: every host fact is in raw.
func Interpret(raw Raw) probe.Result {
	// Partitions (CPX, QPX, TPX ...) appear as several KFD nodes of one
	// physical GPU: they share unique_id, and their location_id differs
	// only in the PCI function number (k8s-device-plugin's MI308X CPX
	// capture). Count them so each device can say which part it is.
	perGPU := partitions(raw.Nodes)
	seen := map[string]int{}
	out := make([]probe.Device, 0, len(raw.Nodes))
	var gfxList []string
	for i, n := range raw.Nodes {
		key := physicalKey(n.Properties)
		d := device(i, n, raw)
		if k := perGPU[key]; k > 1 {
			d.Extra["partition_index"] = seen[key]
			d.Extra["partitions"] = k
			if n.ComputePartition != "" {
				d.Extra[probe.ExtraComputePartition] = n.ComputePartition
			}
		}
		seen[key]++
		if d.Architecture != nil && !slices.Contains(gfxList, *d.Architecture) {
			gfxList = append(gfxList, *d.Architecture)
		}
		out = append(out, d)
	}
	res := probe.Result{Devices: out, Source: "sysfs", Platform: platform(raw)}
	res.Detail = fmt.Sprintf("%d GPU(s)", len(out))
	if len(gfxList) > 0 {
		res.Detail += " (" + strings.Join(gfxList, ", ") + ")"
	}
	if !raw.DevKFD {
		res.Detail += "; /dev/kfd missing"
	} else if !raw.GroupsOK {
		res.Detail += "; not in the render/video group"
	}
	return res
}

// device describes KFD GPU node n, the i-th GPU.
func device(i int, n Node, raw Raw) probe.Device {
	p := n.Properties
	prod, known := Products[deviceID(n)]

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
		switch {
		case n.ProductName != "":
			name = n.ProductName
		case gfx != "":
			name = "AMD GPU (" + gfx + ")"
		default:
			name = fmt.Sprintf("AMD GPU %04x", deviceID(n))
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
	if render := renderNode(p); render != "" {
		extra["render_node"] = render
		extra["render_node_present"] = n.RenderNodePresent
	}
	if fn := n.Function; fn != nil {
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
	case n.DRMVRAMBytes > 0:
		mem = probe.Ptr(int64(n.DRMVRAMBytes >> 20))
		extra["memory_source"] = "drm mem_info_vram_total"
	}
	var uuid *string
	if u := p["unique_id"]; u != 0 {
		uuid = probe.Ptr(fmt.Sprintf("GPU-%016x", u))
	}
	var arch *string
	if gfx != "" {
		arch = probe.Ptr(gfx)
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
		PCIBusID:         probe.Ptr(n.Bus),
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
	if n.Function != nil {
		d.Link = n.Function.PCIeLink()
	}
	return d
}

func platform(raw Raw) *probe.Platform {
	pl := &probe.Platform{Backend: "rocm"}
	if v := raw.DriverVersion; v != "" {
		pl.DriverVersion = &v
	}
	if v := raw.RuntimeVersion; v != "" {
		pl.RuntimeVersion = &v
	}
	return pl
}

// deviceID is the node's PCI device id: the bus's when the node is on it,
// else the one KFD reports.
func deviceID(n Node) uint16 {
	if n.Function != nil {
		return n.Function.Device
	}
	return uint16(n.Properties["device_id"])
}

// renderNode is the node's DRM render node, "" when KFD names none.
func renderNode(p Properties) string {
	if minor, ok := p.Get("drm_render_minor"); ok && minor > 0 {
		return "/dev/dri/renderD" + strconv.FormatUint(minor, 10)
	}
	return ""
}

// partitions counts the KFD nodes of each physical GPU.
func partitions(nodes []Node) map[string]int {
	per := map[string]int{}
	for _, n := range nodes {
		per[physicalKey(n.Properties)]++
	}
	return per
}
