package probe

import (
	"context"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw"
)

// ErrAbsent marks a driver outcome where the hardware or its software is
// simply not there. Wrap it with the reason: fmt.Errorf("no /proc/driver/nvidia: %w", ErrAbsent).
// It is hw.ErrAbsent, so the shared readers' "absent" passes through.
var ErrAbsent = hw.ErrAbsent

// Absent returns an ErrAbsent error carrying a reason.
func Absent(format string, args ...any) error { return hw.Absent(format, args...) }

// Driver discovers one family of devices (or host facts) on a Host.
type Driver interface {
	// Name is the short name used by --only and in drivers[] ("cpu", "nvidia").
	Name() string
	// Probe looks at the host. It returns ErrAbsent (wrapped with a reason)
	// when the family is not present; any other error is a driver failure.
	// It must honour ctx: the runner abandons a driver at the deadline.
	Probe(ctx context.Context, h *host.Host) (Result, error)
}

// Result is what one driver found.
type Result struct {
	Devices []Device
	// Host carries host-wide facts; non-nil fields are merged into the report.
	Host *HostInfo
	// Platform is the software stack behind these devices (driver and
	// runtime versions), when the driver knows it.
	Platform *Platform
	// Software is the ML software stack (the software driver sets it).
	Software *Software
	// Source says where the answer came from ("nvml", "nvidia-smi", "sysfs").
	Source string
	// Detail is a short note for drivers[] (e.g. "2 GPUs").
	Detail string
}

// Platform is the vendor software stack for one backend.
type Platform struct {
	Backend backend.Backend `json:"backend" yaml:"backend"`
	// DriverVersion is the kernel/user driver ("550.90.07").
	DriverVersion *string `json:"driver_version" yaml:"driver_version"`
	// RuntimeVersion is the newest runtime the driver supports, e.g. the
	// CUDA version from SystemGetCudaDriverVersion_v2 ("12.4").
	RuntimeVersion *string `json:"runtime_version" yaml:"runtime_version"`
	// LibraryVersion is the management library (NVML "12.550.90.07").
	LibraryVersion *string `json:"library_version,omitempty" yaml:"library_version,omitempty"`
	// KernelModuleVersion comes from the kernel (/proc/driver/nvidia/version).
	KernelModuleVersion *string `json:"kernel_module_version,omitempty" yaml:"kernel_module_version,omitempty"`
}
