package drivers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/neuron"
	"github.com/devctl/devctl/internal/probe/nvidia"
	"github.com/devctl/devctl/internal/probe/rocm"
	"github.com/devctl/devctl/internal/probe/system"
	"github.com/devctl/devctl/internal/probe/tpu"
	"github.com/devctl/devctl/internal/probe/xpu"
)

// family is how one vendor's accelerators look on the PCI bus and which
// probe driver answers for them.
type family struct {
	driver     string
	backend    backend.Backend
	deviceType string
	vendor     string
	// is reports an accelerator function of this family, by the same rule
	// the family's driver uses.
	is func(pci.Device) bool
	// kernelDrivers are the kernel drivers a framework can use the device
	// through; any other bound driver is the wrong one.
	kernelDrivers []string
	// need names the kernel driver in a wrong_driver reason.
	need string
	// asked is what the family's driver queries, for an unqueried reason.
	asked string
}

var families = []family{
	{driver: "nvidia", backend: backend.CUDA, deviceType: "gpu", vendor: "NVIDIA",
		is:            func(d pci.Device) bool { return d.Vendor == pci.VendorNVIDIA && d.IsDisplay() },
		kernelDrivers: []string{"nvidia"}, need: "CUDA needs the nvidia kernel driver", asked: "NVML and nvidia-smi"},
	{driver: "rocm", backend: backend.ROCm, deviceType: "gpu", vendor: "AMD",
		is:            func(d pci.Device) bool { return d.Vendor == pci.VendorAMD && d.IsGPULike() },
		kernelDrivers: []string{"amdgpu"}, need: "ROCm needs the amdgpu kernel driver", asked: "the KFD topology"},
	{driver: "xpu", backend: backend.XPU, deviceType: "gpu", vendor: "Intel",
		is: func(d pci.Device) bool {
			return d.Vendor == pci.VendorIntel && d.IsDisplay() && xpu.Family(d.Device) != ""
		},
		kernelDrivers: []string{"i915", "xe"}, need: "oneAPI needs the i915 or xe kernel driver", asked: "sysfs"},
	{driver: "xla", backend: backend.XLA, deviceType: "tpu", vendor: "Google",
		is: func(d pci.Device) bool { _, ok := tpu.Identify(d); return ok },
		// TPU v5e and later are driven from user space through vfio-pci;
		// older chips through the accel (gasket) driver. Any bound driver counts.
		kernelDrivers: nil, need: "", asked: "sysfs"},
	{driver: "neuron", backend: backend.Neuron, deviceType: "npu", vendor: "AWS",
		is:            func(d pci.Device) bool { _, ok := neuron.Identify(d); return ok },
		kernelDrivers: []string{"neuron"}, need: "the Neuron runtime needs the neuron kernel driver", asked: "sysfs"},
}

// wrongDriverWhy explains the drivers users meet most.
var wrongDriverWhy = map[string]string{
	"nouveau":  "bound to nouveau, the open-source display driver",
	"vfio-pci": "bound to vfio-pci: reserved for passthrough to a virtual machine",
	"pci-stub": "bound to pci-stub: held back from every driver",
	"radeon":   "bound to radeon, the legacy display driver",
	"nvidiafb": "bound to nvidiafb, a framebuffer driver",
}

// Unanswered is the probe's Sweep: every accelerator function on the PCI bus
// that its family's driver ran for but did not return as a device. The
// device entry says what the kernel knows (address, ids, names from the
// PCI ID database, the board's memory when its name states it, the bound
// driver) and why it cannot be used from here.
func Unanswered(ctx context.Context, h *host.Host, answered []probe.Device, statuses []probe.DriverStatus) []probe.Unanswered {
	devs, err := pci.Scan(h)
	if err != nil || ctx.Err() != nil {
		return nil
	}
	ran := map[string]probe.DriverStatus{}
	for _, s := range statuses {
		ran[s.Name] = s
	}
	seen := map[string]bool{}
	for _, d := range answered {
		if d.PCIBusID != nil {
			seen[pci.NormalizeAddress(*d.PCIBusID)] = true
		}
	}
	type hit struct {
		fam family
		dev pci.Device
	}
	var hits []hit
	var keys []pci.Key
	for _, d := range devs {
		for _, f := range families {
			if !f.is(d) {
				continue
			}
			if _, ok := ran[f.driver]; ok && !seen[d.Address] {
				hits = append(hits, hit{f, d})
				keys = append(keys, key(d))
			}
			break
		}
	}
	if len(hits) == 0 {
		return nil
	}
	names := pci.LookupNames(h, keys)
	out := make([]probe.Unanswered, 0, len(hits))
	for _, x := range hits {
		d := entry(h, x.fam, x.dev, names[key(x.dev)], ran[x.fam.driver])
		if d.TotalMemoryMB == nil {
			if mib, src := sysfsMemory(h, x.dev); mib > 0 {
				d.TotalMemoryMB = probe.Ptr(mib)
				d.Extra["memory_source"] = src
			}
		}
		out = append(out, probe.Unanswered{Driver: x.fam.driver, Device: d})
	}
	return out
}

func key(d pci.Device) pci.Key {
	return pci.Key{Vendor: d.Vendor, Device: d.Device, SubsystemVendor: d.SubsystemVendor, SubsystemDevice: d.SubsystemDevice}
}

func entry(h *host.Host, f family, d pci.Device, n pci.Names, st probe.DriverStatus) probe.Device {
	state, why := classify(h, f, d, st)
	extra := map[string]any{"pci_id": d.ID(), "pci_class": fmt.Sprintf("0x%06x", d.Class)}
	if d.SubsystemVendor != 0 || d.SubsystemDevice != 0 {
		extra["pci_subsystem_id"] = fmt.Sprintf("%04x:%04x", d.SubsystemVendor, d.SubsystemDevice)
	}
	if n.Source != "" {
		extra["names_source"] = n.Source
		extra["pci_ids_name"] = n.Model()
	}
	if d.NUMANode >= 0 {
		extra["numa_node"] = d.NUMANode
	}
	out := probe.Device{
		ID:           "pci:" + d.Address,
		Backend:      f.backend,
		DeviceType:   f.deviceType,
		Vendor:       f.vendor,
		Name:         displayName(f, d, n),
		PCIBusID:     probe.Ptr(d.Address),
		State:        state,
		StateReason:  why,
		KernelDriver: d.Driver,
		Link:         d.PCIeLink(),
		Extra:        extra,
	}
	if mib := pci.BoardMemoryMiB(n.Model()); mib > 0 {
		out.TotalMemoryMB = probe.Ptr(mib)
		extra["memory_source"] = "board name"
	}
	if state == probe.StateKernelOnly {
		kernelOnly(&out, d)
	}
	return out
}

// kernelOnly fills what planning needs for a GPU known from its kernel
// driver alone: how frameworks name it, and its compute capability and
// precisions from its PCI id (pci.NVIDIAComputeCapability, through the
// same rules the NVML path uses). An id devctl's table does not know keeps
// them unknown.
func kernelOnly(out *probe.Device, d pci.Device) {
	out.PytorchDevice, out.JAXPlatform = "cuda", "cuda"
	out.VisibilityEnv, out.InferenceContext = "CUDA_VISIBLE_DEVICES", "torch.inference_mode"
	cc := pci.NVIDIAComputeCapability(d.Device)
	if cc == "" {
		out.Extra["compute_capability_source"] = "unknown: PCI id " + d.ID() + " is not in devctl's table"
		return
	}
	out.ComputeCapability = probe.Ptr(cc)
	out.Extra["compute_capability_source"] = "PCI id " + d.ID() + " (devctl's table of data-centre boards)"
	if major, minor, ok := capability.ParseVersion(cc); ok {
		if a := nvidia.ArchitectureFromCC(major, minor); a != "" {
			out.Architecture = probe.Ptr(a)
		}
	}
	s := capability.Evaluate(capability.Facts{Backend: backend.CUDA, ComputeCapability: cc})
	out.SupportsFP16, out.SupportsBF16, out.Supports8Bit, out.SupportsFP8 = s.FP16, s.BF16, s.Int8, s.FP8
}

// classify says why the function cannot be used: which kernel driver is
// bound, and when it is the right one, why the family's driver could not
// query it (that driver's own words). Two cases are not failures: an
// NVIDIA GPU bound to the nvidia kernel driver where NVML cannot be
// loaded is usable by the frameworks, which load the driver's library
// themselves (kernel_only), unless it sits in a container that was given
// no device nodes; and an AMD display adapter ROCm never drives is
// display-only.
func classify(h *host.Host, f family, d pci.Device, st probe.DriverStatus) (string, string) {
	if f.driver == "rocm" && displayOnly(d) {
		bound := "no kernel driver is bound"
		if d.Driver != "" {
			bound = "bound to " + d.Driver
		}
		return probe.StateDisplayOnly, "a display adapter (" + bound + ") that is not a GPU ROCm runs on: it is listed, not counted against ROCm"
	}
	if d.Driver == "" {
		return probe.StateNoDriver, "no kernel driver is bound to it"
	}
	ok := len(f.kernelDrivers) == 0
	for _, k := range f.kernelDrivers {
		ok = ok || d.Driver == k
	}
	if !ok {
		why, known := wrongDriverWhy[d.Driver]
		if !known {
			why = "bound to " + d.Driver
		}
		return probe.StateWrongDriver, why + "; " + f.need
	}
	detail := ""
	if st.Detail != "" {
		detail = ": " + st.Detail
	}
	if f.driver == "nvidia" && nvidiaReachable(h) {
		return probe.StateKernelOnly, "the nvidia kernel driver is bound; " + f.asked + " gave no answer here" + detail +
			", but a framework loads the driver's library itself: usable for planning, capabilities from the PCI id"
	}
	return probe.StateUnqueried, "the " + d.Driver + " kernel driver is bound but " + f.asked + " gave no answer" + detail
}

// nvidiaReachable reports whether a process here can open the GPU: the
// device nodes exist, or this is not a container (on a host, CUDA creates
// missing nodes through nvidia-modprobe; a container started without the
// NVIDIA runtime has none and cannot make them).
func nvidiaReachable(h *host.Host) bool {
	if h.Exists("/dev/nvidiactl") {
		return true
	}
	kind, _ := system.DetectContainer(system.Gather(h, ""))
	return kind == system.ContainerNone
}

// displayOnly reports an AMD VGA function that ROCm does not run on: not
// bound to amdgpu (an old card left without a driver, or on the legacy
// radeon driver) and not one of the compute parts devctl knows by id
// (rocm.Products). A modern Radeon left without a driver is also called
// display-only: nothing on the bus tells the two apart without a driver.
func displayOnly(d pci.Device) bool {
	if d.Vendor != pci.VendorAMD || d.Class>>8 != 0x0300 || d.Driver == "amdgpu" {
		return false
	}
	_, compute := rocm.Products[d.Device]
	return !compute
}

// displayName is the board name: the bracketed marketing name of the ID
// database ("GP100GL [Tesla P100 PCIe 16GB]" gives "Tesla P100 PCIe 16GB"),
// else the whole entry, else the ids.
func displayName(f family, d pci.Device, n pci.Names) string {
	m := n.Model()
	if i := strings.IndexByte(m, '['); i >= 0 {
		if j := strings.LastIndexByte(m, ']'); j > i+1 {
			m = m[i+1 : j]
		}
	}
	if m == "" {
		return fmt.Sprintf("%s device %s", f.vendor, d.ID())
	}
	if !strings.HasPrefix(strings.ToLower(m), strings.ToLower(f.vendor)) {
		m = f.vendor + " " + m
	}
	return m
}

// sysfsMemory reads device memory the bound kernel driver publishes even
// when the vendor library does not answer: amdgpu's mem_info_vram_total.
func sysfsMemory(h *host.Host, d pci.Device) (int64, string) {
	if d.Driver != "amdgpu" {
		return 0, ""
	}
	s, err := h.ReadString(d.Dir() + "/mem_info_vram_total")
	if err != nil {
		return 0, ""
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, ""
	}
	return v >> 20, "amdgpu mem_info_vram_total"
}
