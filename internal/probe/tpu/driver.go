// Package xla is the Google TPU probe driver.
//
// TPUs are found the way JAX (hardware_utils.py), tpu-info (device.py) and
// torch_xla (_internal/tpu.py) find them: PCI vendor 0x1ae0 with a TPU
// device id, split by subsystem id for v2/v3. Google also ships non-TPU
// PCI functions (the gVNIC, 0x1ae0:0x0042), so the vendor alone is never
// enough. No network call is made: the GCE metadata server and libtpu's
// metrics port describe a running workload, not the host.
package tpu

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes Google TPUs.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "xla" }

// Chip describes one TPU generation.
type Chip struct {
	// Generation is the short name the capability rules use ("v5e").
	Generation string
	// Name is how Google names the chip ("TPU v5e", "TPU7x").
	Name string
	// HBMGiB is the memory per chip (tpu-info's table).
	HBMGiB int
	// TensorCores per chip (v4 and v5p join two into one "megacore").
	TensorCores int
	// DevicesPerChip is how many JAX/XLA devices one chip appears as.
	DevicesPerChip int
	// VFIO is true for chips the host exposes as /dev/vfio/N (v5e and
	// newer) rather than /dev/accelN.
	VFIO bool
}

// Sources: tpu-info tpu_info/device.py (ids, HBM, devices per chip, device
// path), Ray python/ray/_private/accelerators/tpu.py (TensorCores per chip).
var (
	chipV2  = Chip{"v2", "TPU v2", 8, 2, 2, false}
	chipV3  = Chip{"v3", "TPU v3", 16, 2, 2, false}
	chipV4  = Chip{"v4", "TPU v4", 32, 2, 1, false}
	chipV5e = Chip{"v5e", "TPU v5e", 16, 1, 1, true}
	chipV5p = Chip{"v5p", "TPU v5p", 95, 2, 1, true}
	chipV6e = Chip{"v6e", "TPU v6e", 32, 1, 1, true}
	chip7x  = Chip{"7x", "TPU7x", 192, 2, 2, true}
)

// Identify returns the TPU generation for a PCI function, or false when the
// function is not a TPU (including other Google functions such as the NIC).
func Identify(d pci.Device) (Chip, bool) {
	if d.Vendor != pci.VendorGoogle {
		return Chip{}, false
	}
	switch d.Device {
	case 0x0027:
		switch d.SubsystemDevice {
		case 0x004e:
			return chipV2, true
		case 0x004f:
			return chipV3, true
		}
		return Chip{}, false
	case 0x005e:
		return chipV4, true
	case 0x0063:
		return chipV5e, true
	case 0x0062:
		return chipV5p, true
	case 0x006f:
		return chipV6e, true
	case 0x0076:
		return chip7x, true
	}
	return Chip{}, false
}

// Env is the TPU VM / GKE environment the driver reports.
type Env struct {
	AcceleratorType string `json:"accelerator_type,omitempty"`
	Name            string `json:"tpu_name,omitempty"`
	WorkerID        string `json:"worker_id,omitempty"`
	VisibleChips    string `json:"visible_chips,omitempty"`
	PJRTDevice      string `json:"pjrt_device,omitempty"`
}

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	devs, err := pci.Scan(h)
	if err != nil {
		return probe.Result{Source: "sysfs"}, probe.Absent("%v", err)
	}
	type chip struct {
		pci  pci.Device
		chip Chip
	}
	var chips []chip
	other := 0
	for _, d := range devs {
		if c, ok := Identify(d); ok {
			chips = append(chips, chip{d, c})
		} else if d.Vendor == pci.VendorGoogle {
			other++
		}
	}
	if len(chips) == 0 {
		if other > 0 {
			return probe.Result{Source: "sysfs"}, probe.Absent("no TPU on the PCI bus (%d other Google function(s))", other)
		}
		return probe.Result{Source: "sysfs"}, probe.Absent("no TPU on the PCI bus")
	}

	env := Env{
		AcceleratorType: h.Getenv("TPU_ACCELERATOR_TYPE"),
		Name:            h.Getenv("TPU_NAME"),
		WorkerID:        h.Getenv("TPU_WORKER_ID"),
		VisibleChips:    h.Getenv("TPU_VISIBLE_CHIPS"),
		PJRTDevice:      h.Getenv("PJRT_DEVICE"),
	}
	visible, visibleSet := ParseVisibleChips(env.VisibleChips)

	nodes := make([]string, len(chips))
	for i, c := range chips {
		nodes[i] = deviceNode(h, c.pci, c.chip, i)
	}
	holders, partial := ScanHolders(ctx, h, nodes, DefaultScanLimits)

	out := make([]probe.Device, 0, len(chips))
	for i, c := range chips {
		sup := capability.Evaluate(capability.Facts{Backend: "xla", Generation: c.chip.Generation})
		extra := map[string]any{
			probe.ExtraGeneration:  c.chip.Generation,
			"tensorcores":          c.chip.TensorCores,
			"jax_devices_per_chip": c.chip.DevicesPerChip,
			"chips_on_host":        len(chips),
			"dev_node":             nodes[i],
			"dev_node_present":     h.Exists(nodes[i]),
			"pci_driver":           c.pci.Driver,
		}
		if pid, ok := holders[nodes[i]]; ok {
			extra["holder_pid"] = pid
		}
		if env.AcceleratorType != "" {
			extra[probe.ExtraAcceleratorType] = env.AcceleratorType
		}
		if visibleSet {
			extra["visible"] = visible[i]
		}
		if c.pci.NUMANode >= 0 {
			extra["numa_node"] = c.pci.NUMANode
		}
		arch := c.chip.Generation
		out = append(out, probe.Device{
			ID:               "xla:" + strconv.Itoa(i),
			Index:            i,
			Backend:          "xla",
			DeviceType:       "tpu",
			Vendor:           "Google",
			Name:             c.chip.Name,
			PCIBusID:         probe.Ptr(c.pci.Address),
			TotalMemoryMB:    probe.Ptr(int64(c.chip.HBMGiB) * 1024),
			Architecture:     &arch,
			SupportsFP16:     sup.FP16,
			SupportsBF16:     sup.BF16,
			Supports8Bit:     sup.Int8,
			SupportsFP8:      sup.FP8,
			PytorchDevice:    "xla:" + strconv.Itoa(i),
			JAXPlatform:      "tpu",
			VisibilityEnv:    "TPU_VISIBLE_CHIPS",
			InferenceContext: "torch.no_grad",
			Link:             c.pci.PCIeLink(),
			Extra:            extra,
		})
	}
	detail := fmt.Sprintf("%d %s chip(s)", len(chips), chips[0].chip.Name)
	if len(holders) > 0 {
		detail += fmt.Sprintf(", %d in use", len(holders))
	}
	if partial {
		detail += " (some processes could not be inspected: holders may be missing)"
	}
	return probe.Result{
		Devices: out,
		Source:  "sysfs",
		Detail:  detail,
	}, nil
}

// deviceNode finds the /dev node through which a chip is opened. VFIO chips
// are opened as /dev/vfio/<iommu group>: the group comes from the
// iommu_group link, with tpu-info's index rule as the fallback. Older chips
// are /dev/accelN: N comes from the device's accel class directory, again
// with the index as the fallback.
func deviceNode(h *host.Host, d pci.Device, c Chip, index int) string {
	if c.VFIO {
		if target, err := h.FS.Readlink(d.Dir() + "/iommu_group"); err == nil {
			if g := path.Base(target); isDigits(g) {
				return "/dev/vfio/" + g
			}
		}
		return "/dev/vfio/" + strconv.Itoa(index)
	}
	if entries, err := h.FS.ReadDir(d.Dir() + "/accel"); err == nil {
		for _, e := range entries {
			if n, ok := strings.CutPrefix(e.Name(), "accel"); ok && isDigits(n) {
				return "/dev/accel" + n
			}
		}
	}
	return "/dev/accel" + strconv.Itoa(index)
}

// ParseVisibleChips parses TPU_VISIBLE_CHIPS ("0,1,2,3"). It returns the set
// of visible chip indices and whether the variable named any; a malformed
// entry is skipped rather than failing the probe.
func ParseVisibleChips(s string) (map[int]bool, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	out := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 1<<16 {
			continue
		}
		out[n] = true
	}
	return out, true
}

// ScanLimits bounds the /proc walk so a host with many processes cannot make
// the probe slow.
type ScanLimits struct {
	Processes int // at most this many /proc/<pid> directories
	FDs       int // at most this many fd links read in total
}

// DefaultScanLimits suit a TPU VM: a handful of workload processes, a few
// hundred system ones.
var DefaultScanLimits = ScanLimits{Processes: 4096, FDs: 65536}

// ScanHolders finds which process holds each device node open, by reading
// /proc/<pid>/fd/* links as tpu-info does. It returns node -> pid and
// whether the answer may be incomplete.
func ScanHolders(ctx context.Context, h *host.Host, nodes []string, lim ScanLimits) (map[string]int, bool) {
	want := map[string]bool{}
	for _, n := range nodes {
		want[n] = true
	}
	holders := map[string]int{}
	procs, err := h.FS.ReadDir("/proc")
	if errors.Is(err, fs.ErrNotExist) {
		return holders, false // no process table (a --sysroot tree of device files): nothing holds them
	}
	if err != nil {
		return holders, true
	}
	var pids []int
	for _, p := range procs {
		if n, err := strconv.Atoi(p.Name()); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	sort.Ints(pids)
	partial := false
	if len(pids) > lim.Processes {
		pids, partial = pids[:lim.Processes], true
	}
	budget := lim.FDs
	for _, pid := range pids {
		if ctx.Err() != nil || budget <= 0 {
			return holders, true
		}
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		fds, err := h.FS.ReadDir(dir)
		if err != nil {
			partial = true // another user's process, or it exited
			continue
		}
		for _, fd := range fds {
			if budget <= 0 {
				return holders, true
			}
			budget--
			target, err := h.FS.Readlink(dir + "/" + fd.Name())
			if err != nil || !want[target] {
				continue
			}
			if _, seen := holders[target]; !seen {
				holders[target] = pid
			}
		}
		if len(holders) == len(want) {
			break
		}
	}
	return holders, partial
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
