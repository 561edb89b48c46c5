package probe

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/report"
	"github.com/devctl/devctl/internal/units"

	"github.com/devctl/devctl/internal/probe"
)

// Table renders the capability report the way the device-manager
// designs' print_device_info did: a summary block, a devices table and any
// driver that did not answer "ok".
func Table(w io.Writer, r *probe.Report, st *report.Style) error {
	s := r.Summary
	fmt.Fprintln(w, st.Title("devctl probe"))
	kv := [][2]string{
		{"Backend:", string(s.Backend)},
		{"Device Type:", s.DeviceType},
	}
	kv = append(kv, backendLines(s)...)
	kv = append(kv,
		[2]string{"Memory Strategy:", s.MemoryStrategy},
		[2]string{"Memory Fraction:", strconv.FormatFloat(s.MemoryFraction, 'g', -1, 64)},
		[2]string{"Default Device:", defaultDevice(r)},
		[2]string{"Precisions:", summaryPrecisions(r)},
	)
	for _, p := range kv {
		fmt.Fprintf(w, "%s %s\n", st.Label(fmt.Sprintf("%-19s", p[0])), report.Clean(p[1]))
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "%s %s\n", st.Warn(fmt.Sprintf("%-19s", "Not usable:")), report.Clean(n))
	}
	if r.Selection != nil && (r.Selection.FellBack || len(r.Selection.PassedOver) > 0) {
		fmt.Fprintf(w, "%s %s\n", st.Warn("Fallback:          "), report.Clean(r.Selection.Reason))
	}
	h := r.Host
	fmt.Fprintf(w, "%s %s/%s, kernel %s, container %s, memory %s", st.Label(fmt.Sprintf("%-19s", "Host:")), report.Clean(h.OS), report.Clean(h.Arch), report.Clean(orNA(h.Kernel)), report.Clean(h.Container), mb(h.MemoryTotalMB))
	if h.MemoryLimitMB != nil {
		fmt.Fprintf(w, " (limit %s)", mb(h.MemoryLimitMB))
	}
	if h.CPUQuota != nil {
		fmt.Fprintf(w, ", cpu quota %g", *h.CPUQuota)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)

	rows := make([][]string, 0, len(r.Devices))
	for _, d := range r.Devices {
		prec := precisions(d.SupportsFP16, d.SupportsBF16, d.Supports8Bit, d.SupportsFP8)
		if !d.Usable() {
			prec = "not usable: " + d.State
			if d.KernelDriver != "" {
				prec += " (" + d.KernelDriver + ")"
			}
		}
		rows = append(rows, []string{
			report.Clean(d.ID), report.Clean(d.Name), memory(d), report.Clean(orNA(d.ComputeCapability)), report.Clean(orNA(d.Architecture)),
			report.Clean(prec), link(d.Link),
		})
	}
	if len(rows) == 0 {
		// An empty table with only its header says nothing; the drivers
		// below say why no device was described.
		fmt.Fprintf(w, "%s none described: see the drivers below\n", st.Warn(fmt.Sprintf("%-19s", "Devices:")))
	} else if err := report.RenderTable(w, []string{"ID", "NAME", "MEMORY", "CC", "ARCH", "PRECISIONS", "PCIE"}, rows); err != nil {
		return err
	}
	if r.Software != nil {
		softwareBlock(w, r.Software, st)
	}
	var bad []probe.DriverStatus
	heading := "Drivers degraded, failed or timed out:"
	for _, d := range r.Drivers {
		// Every machine has a CPU: a cpu driver that found none read a
		// tree without /proc/cpuinfo (a partial snapshot), worth saying
		// when it leaves the default device undescribed.
		missingCPU := d.Name == "cpu" && d.Status == probe.StatusAbsent && !described(r)
		if missingCPU {
			heading = "Drivers degraded, failed, timed out or missing:"
		}
		if d.Status != probe.StatusOK && (d.Status != probe.StatusAbsent || missingCPU) {
			bad = append(bad, d)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Warn(heading))
		for _, d := range bad {
			fmt.Fprintf(w, "  %-8s %-8s %s\n", d.Name, st.Fail(d.Status), report.Clean(d.Detail))
		}
		if !described(r) {
			fmt.Fprintln(w, st.Dim("See 'devctl doctor' for checks and fixes."))
		}
	}
	return nil
}

// summaryPrecisions lists what the default device runs, or N/A when no
// device in the report describes it.
func summaryPrecisions(r *probe.Report) string {
	s := r.Summary
	if !described(r) {
		return "N/A"
	}
	return precisions(s.SupportsFP16, s.SupportsBF16, s.Supports8Bit, s.SupportsFP8)
}

// defaultDevice is the default device's id, saying so when no device in
// the report has it: frameworks fall back to the CPU even when the cpu
// driver could not describe it.
func defaultDevice(r *probe.Report) string {
	if !described(r) {
		return r.Summary.DefaultDevice + " (not described: no usable device was found)"
	}
	return r.Summary.DefaultDevice
}

// described reports whether a usable device of the report is the default.
func described(r *probe.Report) bool {
	for _, d := range r.Devices {
		if d.ID == r.Summary.DefaultDevice && d.Usable() {
			return true
		}
	}
	return false
}

// backendLines are the summary lines that mean something for the default
// device's backend: CUDA and compute capability for NVIDIA, the TPU
// generation, chip count and HBM per chip for a TPU, and so on.
func backendLines(s probe.Summary) [][2]string {
	// The summary's memory is one device's; with several, the sum is said
	// beside it so that "GPU Memory" is never read as the machine's total.
	mem := func(label string) [2]string {
		v := mb(s.DeviceMemoryMB)
		if s.DeviceCount > 1 && s.DeviceMemoryMB != nil && s.CombinedMemoryMB != nil {
			each := " each"
			if strings.Contains(label, " per ") {
				each = ""
			}
			v += fmt.Sprintf("%s, %s in all", each, mb(s.CombinedMemoryMB))
		}
		return [2]string{label, v}
	}
	var kv [][2]string
	switch s.Backend {
	case backend.CUDA:
		kv = [][2]string{{"Device Count:", strconv.Itoa(s.DeviceCount)}, {"GPU Count:", strconv.Itoa(s.GPUCount)}, mem("GPU Memory:"),
			{"CUDA Version:", orNA(s.CUDAVersion)}, {"Compute Capability:", orNA(s.ComputeCapability)}}
	case backend.XLA:
		kv = [][2]string{{"TPU Generation:", orNA(s.Architecture)}, {"TPU Chips:", strconv.Itoa(s.DeviceCount)}, mem("HBM per Chip:")}
	case backend.Neuron:
		kv = [][2]string{{"Neuron Generation:", orNA(s.Architecture)}, {"Neuron Devices:", strconv.Itoa(s.DeviceCount)}, mem("Device Memory:")}
	case backend.ROCm, backend.XPU, backend.MPS:
		kv = [][2]string{{"Device Count:", strconv.Itoa(s.DeviceCount)}, {"GPU Count:", strconv.Itoa(s.GPUCount)}, mem("GPU Memory:"),
			{"Architecture:", orNA(s.Architecture)}}
	default:
		kv = [][2]string{{"Device Count:", strconv.Itoa(s.DeviceCount)}, {"GPU Count:", strconv.Itoa(s.GPUCount)}}
	}
	if s.DriverVersion != nil {
		kv = append(kv, [2]string{"Driver Version:", *s.DriverVersion})
	}
	return kv
}

func orNA(p *string) string {
	if p == nil || *p == "" {
		return "N/A"
	}
	return *p
}

func mb(p *int64) string {
	if p == nil {
		return "N/A"
	}
	return units.FromMiB(*p).Short()
}

func memory(d probe.Device) string {
	if d.TotalMemoryMB == nil {
		return "N/A"
	}
	s := units.FromMiB(*d.TotalMemoryMB).Short()
	if d.FreeMemoryMB != nil {
		s += " (" + units.FromMiB(*d.FreeMemoryMB).Short() + " free)"
	}
	return s
}

func precisions(fp16, bf16, int8, fp8 bool) string {
	out := []string{"fp32"}
	if fp16 {
		out = append(out, "fp16")
	}
	if bf16 {
		out = append(out, "bf16")
	}
	if int8 {
		out = append(out, "int8")
	}
	if fp8 {
		out = append(out, "fp8")
	}
	return strings.Join(out, " ")
}

func link(l *probe.PCIeLink) string {
	if l == nil {
		return ""
	}
	n := func(p *int) string {
		if p == nil {
			return "?"
		}
		return strconv.Itoa(*p)
	}
	return fmt.Sprintf("gen%s x%s (max gen%s x%s)", n(l.GenCurrent), n(l.WidthCurrent), n(l.GenMax), n(l.WidthMax))
}

// softwareBlock prints the Python environments and the CUDA toolkit: one
// line per environment with the ML packages that matter most first.
func softwareBlock(w io.Writer, sw *probe.Software, st *report.Style) {
	if len(sw.Environments) == 0 && sw.CUDAToolkit == nil {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, st.Label("Software:"))
	for _, e := range sw.Environments {
		head := e.Kind + " " + e.Prefix
		if e.PythonVersion != "" {
			head += " (python " + e.PythonVersion + ")"
		}
		if e.Active {
			head += " [active]"
		}
		fmt.Fprintf(w, "  %s\n", report.Clean(head))
		if t := e.Torch; t != nil {
			line := "torch " + t.Version + ": " + t.Accelerator
			if t.AcceleratorVersion != "" {
				line += " " + t.AcceleratorVersion
			}
			fmt.Fprintf(w, "    %s (from %s)\n", report.Clean(line), report.Clean(t.Source))
		}
		var pkgs []string
		for _, p := range e.Packages {
			if p.Name == "torch" || strings.HasPrefix(p.Name, "nvidia-") {
				continue
			}
			pkgs = append(pkgs, p.Name+" "+p.Version)
		}
		nv := 0
		for _, p := range e.Packages {
			if strings.HasPrefix(p.Name, "nvidia-") {
				nv++
			}
		}
		if nv > 0 {
			pkgs = append(pkgs, fmt.Sprintf("%d nvidia-* wheel(s)", nv))
		}
		if len(pkgs) > 0 {
			fmt.Fprintf(w, "    %s\n", report.Clean(strings.Join(pkgs, ", ")))
		}
	}
	if tk := sw.CUDAToolkit; tk != nil {
		fmt.Fprintf(w, "  CUDA toolkit %s (%s)\n", report.Clean(tk.Version), report.Clean(tk.Source))
	}
}
