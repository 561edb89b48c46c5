// Package probe discovers a machine's compute devices.
//
// Drivers (one per device family) each look at a Host and return devices;
// Run executes them concurrently under a deadline and assembles the
// capability report. The report types here are devctl's public JSON schema:
// field names are stable and documented in docs/report.md.
package probe

import "github.com/devctl/devctl/internal/backend"

// report_json.go is the report's JSON encoder, generated from these types
// and held to encoding/json's bytes by TestReportEncoderUpToDate and the
// encoder tests. It is kept because encoding/json's reflection costs about
// 0.2 ms the first time it meets the report's types, some 5% of a whole
// `devctl probe -o json` (docs/performance.md); regenerate after changing a
// type here:
//
//go:generate go test . -run TestReportEncoderUpToDate -update

// SchemaVersion is the version of the capability report's JSON schema.
const SchemaVersion = 1

// Report is what `devctl probe` prints.
type Report struct {
	SchemaVersion int            `json:"schema_version" yaml:"schema_version"`
	DevctlVersion string         `json:"devctl_version" yaml:"devctl_version"`
	Host          HostInfo       `json:"host" yaml:"host"`
	Summary       Summary        `json:"summary" yaml:"summary"`
	Devices       []Device       `json:"devices" yaml:"devices"`
	Drivers       []DriverStatus `json:"drivers" yaml:"drivers"`
	// Software is the ML software stack found without starting Python:
	// Python environments and their frameworks, the CUDA toolkit.
	Software *Software `json:"software,omitempty" yaml:"software,omitempty"`
	// Selection explains how the default device was chosen (fallbacks too).
	Selection *Selection `json:"selection,omitempty" yaml:"selection,omitempty"`
}

// HostInfo describes the machine as a whole.
type HostInfo struct {
	OS            string   `json:"os" yaml:"os"`
	Arch          string   `json:"arch" yaml:"arch"`
	Kernel        *string  `json:"kernel" yaml:"kernel"`
	Container     string   `json:"container" yaml:"container"`
	MemoryTotalMB *int64   `json:"memory_total_mb" yaml:"memory_total_mb"`
	MemoryLimitMB *int64   `json:"memory_limit_mb" yaml:"memory_limit_mb"`
	CPUQuota      *float64 `json:"cpu_quota" yaml:"cpu_quota"`
	// Extra host facts drivers found (swap, /dev/shm, ...), for doctor.
	SwapTotalMB     *int64  `json:"swap_total_mb,omitempty" yaml:"swap_total_mb,omitempty"`
	MemoryAvailMB   *int64  `json:"memory_available_mb,omitempty" yaml:"memory_available_mb,omitempty"`
	ShmTotalMB      *int64  `json:"shm_total_mb,omitempty" yaml:"shm_total_mb,omitempty"`
	NvidiaKernelMod *string `json:"nvidia_kernel_module,omitempty" yaml:"nvidia_kernel_module,omitempty"`
}

// Summary describes the default device, in the field names of the
// device-manager designs devctl grew from. Unknown values are null.
type Summary struct {
	Backend       backend.Backend `json:"backend" yaml:"backend"`
	DeviceType    string          `json:"device_type" yaml:"device_type"`
	DeviceCount   int             `json:"device_count" yaml:"device_count"`
	GPUCount      int             `json:"gpu_count" yaml:"gpu_count"`
	DefaultDevice string          `json:"default_device" yaml:"default_device"`
	// TotalMemoryMB is the default device's own memory, not a sum over
	// devices: the name comes from the device-manager designs devctl grew
	// from and is kept for compatibility (docs/report.md). MemoryGB is the
	// same figure in GiB. DeviceMemoryMB says it under a true name, and
	// CombinedMemoryMB is the sum over the DeviceCount devices.
	TotalMemoryMB *int64   `json:"total_memory_mb" yaml:"total_memory_mb"`
	MemoryGB      *float64 `json:"memory_gb" yaml:"memory_gb"`
	// DeviceMemoryMB is the default device's memory in MiB.
	DeviceMemoryMB *int64 `json:"device_memory_mb" yaml:"device_memory_mb"`
	// CombinedMemoryMB is the memory of every usable device of the default
	// device's backend added up (the DeviceCount devices), in MiB; null
	// when one of them does not say.
	CombinedMemoryMB       *int64  `json:"combined_memory_mb" yaml:"combined_memory_mb"`
	ComputeCapability      *string `json:"compute_capability" yaml:"compute_capability"`
	CUDAVersion            *string `json:"cuda_version" yaml:"cuda_version"`
	DriverVersion          *string `json:"driver_version" yaml:"driver_version"`
	SupportsMixedPrecision bool    `json:"supports_mixed_precision" yaml:"supports_mixed_precision"`
	SupportsDistributed    bool    `json:"supports_distributed" yaml:"supports_distributed"`
	SupportsFP16           bool    `json:"supports_fp16" yaml:"supports_fp16"`
	SupportsBF16           bool    `json:"supports_bf16" yaml:"supports_bf16"`
	Supports8Bit           bool    `json:"supports_8bit" yaml:"supports_8bit"`
	// SupportsFP8 and Architecture are the default device's, so a summary
	// can print the precisions and generation its device rows show.
	SupportsFP8    bool    `json:"supports_fp8" yaml:"supports_fp8"`
	Architecture   *string `json:"architecture" yaml:"architecture"`
	MemoryStrategy string  `json:"memory_strategy" yaml:"memory_strategy"`
	MemoryFraction float64 `json:"memory_fraction" yaml:"memory_fraction"`
	// UnusableDevices counts accelerators on the bus that cannot be used
	// from here; Notes says so in words, one line per backend.
	UnusableDevices int      `json:"unusable_device_count" yaml:"unusable_device_count"`
	Notes           []string `json:"notes,omitempty" yaml:"notes,omitempty"`
}

// Device is one compute device. Pointer fields are null when unknown.
type Device struct {
	ID                string          `json:"id" yaml:"id"`
	Index             int             `json:"index" yaml:"index"`
	Backend           backend.Backend `json:"backend" yaml:"backend"`
	DeviceType        string          `json:"device_type" yaml:"device_type"`
	Vendor            string          `json:"vendor" yaml:"vendor"`
	Name              string          `json:"name" yaml:"name"`
	UUID              *string         `json:"uuid" yaml:"uuid"`
	PCIBusID          *string         `json:"pci_bus_id" yaml:"pci_bus_id"`
	TotalMemoryMB     *int64          `json:"total_memory_mb" yaml:"total_memory_mb"`
	FreeMemoryMB      *int64          `json:"free_memory_mb" yaml:"free_memory_mb"`
	ComputeCapability *string         `json:"compute_capability" yaml:"compute_capability"`
	Architecture      *string         `json:"architecture" yaml:"architecture"`
	SupportsFP16      bool            `json:"supports_fp16" yaml:"supports_fp16"`
	SupportsBF16      bool            `json:"supports_bf16" yaml:"supports_bf16"`
	Supports8Bit      bool            `json:"supports_8bit" yaml:"supports_8bit"`
	SupportsFP8       bool            `json:"supports_fp8" yaml:"supports_fp8"`
	// Framework hints (accelerators): how PyTorch and JAX name the device
	// and which variable selects it.
	PytorchDevice    string `json:"pytorch_device,omitempty" yaml:"pytorch_device,omitempty"`
	JAXPlatform      string `json:"jax_platform,omitempty" yaml:"jax_platform,omitempty"`
	VisibilityEnv    string `json:"visibility_env,omitempty" yaml:"visibility_env,omitempty"`
	InferenceContext string `json:"inference_context,omitempty" yaml:"inference_context,omitempty"`

	// CPU fields.
	LogicalCPUs *int     `json:"logical_cpus,omitempty" yaml:"logical_cpus,omitempty"`
	Cores       *int     `json:"cores,omitempty" yaml:"cores,omitempty"`
	Sockets     *int     `json:"sockets,omitempty" yaml:"sockets,omitempty"`
	MaxFreqMHz  *float64 `json:"max_frequency_mhz,omitempty" yaml:"max_frequency_mhz,omitempty"`
	Features    []string `json:"features,omitempty" yaml:"features,omitempty"`

	// State is empty for a usable device. A device the kernel shows on the
	// PCI bus but no vendor library answered for says why it cannot be used
	// from here: StateUnqueried, StateNoDriver or StateWrongDriver, with
	// StateReason in words and the bound KernelDriver.
	State        string `json:"state,omitempty" yaml:"state,omitempty"`
	StateReason  string `json:"state_reason,omitempty" yaml:"state_reason,omitempty"`
	KernelDriver string `json:"kernel_driver,omitempty" yaml:"kernel_driver,omitempty"`

	// Accelerator detail that differs by family; nil when not known.
	Link  *PCIeLink      `json:"pcie_link,omitempty" yaml:"pcie_link,omitempty"`
	Extra map[string]any `json:"extra,omitempty" yaml:"extra,omitempty"`
	// CPU holds the CPU device's extra facts typed, for the commands that
	// read them (doctor, bench); Extra shows the same facts in the report.
	CPU *CPUExtra `json:"-" yaml:"-"`
}

// Device states of functions on the bus that cannot be used from here.
const (
	// StateUnqueried: the expected kernel driver is bound, but the vendor
	// library (NVML, KFD, ...) did not answer: a static build, a container
	// started without the vendor runtime, a missing user-space library.
	StateUnqueried = "unqueried"
	// StateNoDriver: no kernel driver is bound to the function.
	StateNoDriver = "no_driver"
	// StateWrongDriver: a driver is bound that the framework cannot use
	// (nouveau, vfio-pci on the host side of a passthrough, pci-stub).
	StateWrongDriver = "wrong_driver"
	// StateTranslated: the process runs as x86_64 under Rosetta 2 on Apple
	// silicon, where MPS is not available to it.
	StateTranslated = "translated"
	// StateKernelOnly: the vendor kernel driver is bound and the device
	// nodes can be reached, but the vendor library (NVML) could not be
	// loaded here; the framework loads the driver's library itself, so the
	// device is usable for planning, its capabilities read from its PCI id.
	StateKernelOnly = "kernel_only"
	// StateDisplayOnly: a display adapter with no compute driver (an old
	// AMD card): listed, never chosen, and not counted against its
	// family's driver.
	StateDisplayOnly = "display_only"
)

// Usable reports whether a framework can use the device from here: a
// device without a state, or one known from its kernel driver alone.
func (d Device) Usable() bool { return d.State == "" || d.State == StateKernelOnly }

// Counted reports whether an unusable device counts against its driver
// (degraded, unusable_device_count, a note): every unusable device but a
// display-only adapter.
func (d Device) Counted() bool { return !d.Usable() && d.State != StateDisplayOnly }

// PCIeLink is a device's PCI Express link, current against maximum.
type PCIeLink struct {
	GenCurrent   *int `json:"gen_current" yaml:"gen_current"`
	GenMax       *int `json:"gen_max" yaml:"gen_max"`
	WidthCurrent *int `json:"width_current" yaml:"width_current"`
	WidthMax     *int `json:"width_max" yaml:"width_max"`
}

// Driver status values.
const (
	StatusOK      = "ok"
	StatusAbsent  = "absent"
	StatusError   = "error"
	StatusTimeout = "timeout"
	// StatusDegraded: the driver's hardware is on the bus but some or all of
	// it could not be queried; the unusable devices are listed with a state.
	StatusDegraded = "degraded"
)

// DriverStatus records how one driver went.
type DriverStatus struct {
	Name       string `json:"name" yaml:"name"`
	Status     string `json:"status" yaml:"status"`
	Detail     string `json:"detail" yaml:"detail"`
	Source     string `json:"source" yaml:"source"`
	DurationMS int64  `json:"duration_ms" yaml:"duration_ms"`
}

// Selection explains the choice of default device.
type Selection struct {
	Requested string `json:"requested" yaml:"requested"`
	Chosen    string `json:"chosen" yaml:"chosen"`
	FellBack  bool   `json:"fell_back" yaml:"fell_back"`
	Reason    string `json:"reason" yaml:"reason"`
	// PassedOver gives the history rule's reason for each backend it
	// passed over (see internal/history: Judge).
	PassedOver []string `json:"passed_over,omitempty" yaml:"passed_over,omitempty"`
}

// Ptr returns a pointer to v; report fields use pointers for "unknown".
func Ptr[T any](v T) *T { return &v }

// Extra keys other packages read (nfd's labels). Drivers write them under
// these names; readers go through ExtraString and ExtraInt, so the type a
// driver stored is interpreted in one place.
const (
	ExtraGeneration       = "generation"        // TPU, Neuron: the chip generation
	ExtraAcceleratorType  = "accelerator_type"  // TPU: TPU_ACCELERATOR_TYPE (v6e-8)
	ExtraComputePartition = "compute_partition" // ROCm: SPX, CPX, ...
	ExtraNeuronCores      = "neuron_cores"      // Neuron: cores per device
	ExtraMIGModeCurrent   = "mig_mode_current"  // NVIDIA: enabled, disabled, not_supported
)

// ExtraString is a text fact from Extra ("" when absent or not text).
func (d Device) ExtraString(key string) string {
	s, _ := d.Extra[key].(string)
	return s
}

// ExtraInt is a whole-number fact from Extra, whether the driver stored an
// int or a decoded JSON report holds a float64.
func (d Device) ExtraInt(key string) (int64, bool) {
	switch v := d.Extra[key].(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		return int64(v), v == float64(int64(v))
	}
	return 0, false
}

// MB converts a byte count to the report's whole MiB, keeping nil as
// unknown.
func MB(b *int64) *int64 {
	if b == nil {
		return nil
	}
	return Ptr(*b >> 20)
}

// CPUExtra are the CPU device's facts beyond the common fields. Zero
// values are unknown and left out of the report.
type CPUExtra struct {
	// OnlineCPUs is the online CPU count, set only when it differs from
	// the logical CPUs this process may use (a cpuset narrows those).
	OnlineCPUs int
	// CPUSet is the cgroup cpuset ("0-3,8").
	CPUSet string
	// MaxFrequencySource says where max_frequency_mhz came from
	// ("cpufreq cpuinfo_max_freq", "/proc/cpuinfo current clock", ...).
	MaxFrequencySource string
	// PerformanceCores and EfficiencyCores split a hybrid CPU's cores.
	PerformanceCores, EfficiencyCores int
}

// Map is the report's "extra" object for these facts; nil when none is known.
func (c CPUExtra) Map() map[string]any {
	m := map[string]any{}
	if c.OnlineCPUs > 0 {
		m["online_cpus"] = c.OnlineCPUs
	}
	if c.CPUSet != "" {
		m["cpuset"] = c.CPUSet
	}
	if c.MaxFrequencySource != "" {
		m["max_frequency_source"] = c.MaxFrequencySource
	}
	if c.PerformanceCores > 0 {
		m["performance_cores"] = c.PerformanceCores
	}
	if c.EfficiencyCores > 0 {
		m["efficiency_cores"] = c.EfficiencyCores
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// Software is the ML software stack, as `python -m torch.utils.collect_env`
// and `accelerate env` report it, read from package metadata on disk.
type Software struct {
	Environments []PythonEnv `json:"python_environments" yaml:"python_environments"`
	// CUDAToolkit is the system CUDA toolkit (nvcc, libcudart), nil when none.
	CUDAToolkit *CUDAToolkit `json:"cuda_toolkit" yaml:"cuda_toolkit"`
}

// PythonEnv is one Python installation or environment.
type PythonEnv struct {
	// Kind is venv, conda or system.
	Kind   string `json:"kind" yaml:"kind"`
	Prefix string `json:"prefix" yaml:"prefix"`
	// Active is true for the environment VIRTUAL_ENV or CONDA_PREFIX names;
	// the others were found on PATH.
	Active bool `json:"active" yaml:"active"`
	// Interpreter is the Python executable of the environment: a shim on
	// PATH (pyenv, asdf) resolved to the version its manager selects.
	Interpreter string `json:"interpreter,omitempty" yaml:"interpreter,omitempty"`
	// Via says how the PATH entry was resolved ("pyenv shim: 3.11.7 (from
	// /root/.pyenv/version)", "uv-managed Python: ..."); empty for a plain
	// directory.
	Via           string   `json:"via,omitempty" yaml:"via,omitempty"`
	PythonVersion string   `json:"python_version,omitempty" yaml:"python_version,omitempty"`
	SitePackages  []string `json:"site_packages" yaml:"site_packages"`
	// Packages are the ML packages installed (not every package).
	Packages []Package `json:"packages" yaml:"packages"`
	// Torch says which accelerator the installed torch was built for.
	Torch *FrameworkBuild `json:"torch,omitempty" yaml:"torch,omitempty"`
	// CUDARuntimes are the CUDA runtimes packages of this environment ship
	// or were built against, newest first.
	CUDARuntimes []CUDARuntime `json:"cuda_runtimes,omitempty" yaml:"cuda_runtimes,omitempty"`
}

// Package is an installed distribution.
type Package struct {
	Name    string `json:"name" yaml:"name"`
	Version string `json:"version" yaml:"version"`
	// Installer is who installed it, as the metadata says: the INSTALLER
	// file of its .dist-info (pip, uv, conda, rpm, ...), "conda" for
	// conda-meta entries, "debian" for Debian's dist-packages, else
	// "unknown".
	Installer string `json:"installer" yaml:"installer"`
	// Build is conda's build string ("py3.11_cuda12.1_cudnn8.9.2_0").
	Build string `json:"build,omitempty" yaml:"build,omitempty"`
}

// FrameworkBuild is the accelerator a framework wheel was built for.
type FrameworkBuild struct {
	Version string `json:"version" yaml:"version"`
	// Accelerator is cuda, rocm, xpu, cpu or unknown.
	Accelerator string `json:"accelerator" yaml:"accelerator"`
	// AcceleratorVersion is the CUDA or ROCm version ("12.1"), "" when none.
	AcceleratorVersion string `json:"accelerator_version,omitempty" yaml:"accelerator_version,omitempty"`
	// Source says how it was decided (torch/version.py, the version tag, ...).
	Source string `json:"source" yaml:"source"`
}

// CUDARuntime is a CUDA runtime a package ships or was built against.
type CUDARuntime struct {
	Package string `json:"package" yaml:"package"`
	// CUDA is "12.1", or a bare major ("12") for plugins that name only it.
	CUDA   string `json:"cuda" yaml:"cuda"`
	Source string `json:"source" yaml:"source"`
}

// CUDAToolkit is an installed CUDA toolkit.
type CUDAToolkit struct {
	Version string `json:"version" yaml:"version"`
	Path    string `json:"path" yaml:"path"`
	Source  string `json:"source" yaml:"source"`
}
