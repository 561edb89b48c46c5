package nvidia

import (
	"fmt"
	"strings"
)

// Return is an NVML return code (nvmlReturn_t), devctl's own copy so that
// code on any platform (doctor on macOS replaying a snapshot) can branch on
// it without importing go-nvml, and so that no caller is tempted to use
// nvml.ErrorString, which panics once the library failed to load. Snapshots
// store it as the plain number.
type Return int

// The NVML return codes.
const (
	Success                  Return = 0
	ErrUninitialized         Return = 1
	ErrInvalidArgument       Return = 2
	ErrNotSupported          Return = 3
	ErrNoPermission          Return = 4
	ErrAlreadyInitialized    Return = 5
	ErrNotFound              Return = 6
	ErrInsufficientSize      Return = 7
	ErrInsufficientPower     Return = 8
	ErrDriverNotLoaded       Return = 9
	ErrTimeout               Return = 10
	ErrIRQIssue              Return = 11
	ErrLibraryNotFound       Return = 12
	ErrFunctionNotFound      Return = 13
	ErrCorruptedInforom      Return = 14
	ErrGPUIsLost             Return = 15
	ErrResetRequired         Return = 16
	ErrOperatingSystem       Return = 17
	ErrLibRMVersionMismatch  Return = 18
	ErrInUse                 Return = 19
	ErrMemory                Return = 20
	ErrNoData                Return = 21
	ErrVGPUECCNotSupported   Return = 22
	ErrInsufficientResources Return = 23
	ErrFreqNotSupported      Return = 24
	ErrArgumentVersion       Return = 25
	ErrDeprecated            Return = 26
	ErrNotReady              Return = 27
	ErrGPUNotFound           Return = 28
	ErrInvalidState          Return = 29
	ErrUnknown               Return = 999
)

type returnInfo struct{ name, meaning string }

// returnTable names each code and says what it means for a user, in the
// words doctor shows.
var returnTable = map[Return]returnInfo{
	Success:                  {"SUCCESS", "the call succeeded"},
	ErrUninitialized:         {"ERROR_UNINITIALIZED", "NVML was not initialised"},
	ErrInvalidArgument:       {"ERROR_INVALID_ARGUMENT", "a parameter was invalid"},
	ErrNotSupported:          {"ERROR_NOT_SUPPORTED", "this GPU or driver does not support the query"},
	ErrNoPermission:          {"ERROR_NO_PERMISSION", "no permission: check access to /dev/nvidia* device nodes"},
	ErrAlreadyInitialized:    {"ERROR_ALREADY_INITIALIZED", "NVML was already initialised"},
	ErrNotFound:              {"ERROR_NOT_FOUND", "the object asked for was not found"},
	ErrInsufficientSize:      {"ERROR_INSUFFICIENT_SIZE", "a buffer was too small"},
	ErrInsufficientPower:     {"ERROR_INSUFFICIENT_POWER", "the GPU's external power cables are not connected properly"},
	ErrDriverNotLoaded:       {"ERROR_DRIVER_NOT_LOADED", "the NVIDIA kernel driver is not loaded"},
	ErrTimeout:               {"ERROR_TIMEOUT", "the driver did not answer in time"},
	ErrIRQIssue:              {"ERROR_IRQ_ISSUE", "the kernel detected an interrupt problem with the GPU"},
	ErrLibraryNotFound:       {"ERROR_LIBRARY_NOT_FOUND", "the NVML library (libnvidia-ml.so.1) was not found: the driver's user-space part is not installed or not on the library path"},
	ErrFunctionNotFound:      {"ERROR_FUNCTION_NOT_FOUND", "the installed NVML library is too old for this query"},
	ErrCorruptedInforom:      {"ERROR_CORRUPTED_INFOROM", "the GPU's infoROM is corrupted"},
	ErrGPUIsLost:             {"ERROR_GPU_IS_LOST", "the GPU has fallen off the bus or is otherwise inaccessible; reset it or reboot"},
	ErrResetRequired:         {"ERROR_RESET_REQUIRED", "the GPU needs a reset before it can be used again"},
	ErrOperatingSystem:       {"ERROR_OPERATING_SYSTEM", "the operating system blocked the call"},
	ErrLibRMVersionMismatch:  {"ERROR_LIB_RM_VERSION_MISMATCH", "the NVML library and the kernel module are different versions: reboot, or reload the nvidia modules"},
	ErrInUse:                 {"ERROR_IN_USE", "the GPU is in use by another process"},
	ErrMemory:                {"ERROR_MEMORY", "not enough memory"},
	ErrNoData:                {"ERROR_NO_DATA", "no data"},
	ErrVGPUECCNotSupported:   {"ERROR_VGPU_ECC_NOT_SUPPORTED", "ECC is not supported with vGPU"},
	ErrInsufficientResources: {"ERROR_INSUFFICIENT_RESOURCES", "not enough resources"},
	ErrFreqNotSupported:      {"ERROR_FREQ_NOT_SUPPORTED", "the frequency is not supported"},
	ErrArgumentVersion:       {"ERROR_ARGUMENT_VERSION_MISMATCH", "the structure version does not match the library"},
	ErrDeprecated:            {"ERROR_DEPRECATED", "the call is deprecated"},
	ErrNotReady:              {"ERROR_NOT_READY", "the system is not ready"},
	ErrGPUNotFound:           {"ERROR_GPU_NOT_FOUND", "the GPU was not found"},
	ErrInvalidState:          {"ERROR_INVALID_STATE", "the GPU is in an invalid state"},
	ErrUnknown:               {"ERROR_UNKNOWN", "an unknown error; inside a container this often means the container lost access to the GPU"},
}

// Name is the NVML name of a return code ("ERROR_NOT_SUPPORTED"), or
// "ERROR_<n>" for a code this devctl does not know.
func (r Return) Name() string {
	if i, ok := returnTable[r]; ok {
		return i.name
	}
	return fmt.Sprintf("ERROR_%d", int(r))
}

// Meaning explains a return code in one phrase for a person.
func (r Return) Meaning() string {
	if i, ok := returnTable[r]; ok {
		return i.meaning
	}
	return fmt.Sprintf("NVML return code %d", int(r))
}

// String is "NAME (meaning)", as driver details show it.
func (r Return) String() string {
	return fmt.Sprintf("%s (%s)", r.Name(), r.Meaning())
}

// ArchitectureName maps nvmlDeviceArchitecture_t to a family name, "" when
// unknown.
func ArchitectureName(arch uint32) string {
	switch arch {
	case 2:
		return "Kepler"
	case 3:
		return "Maxwell"
	case 4:
		return "Pascal"
	case 5:
		return "Volta"
	case 6:
		return "Turing"
	case 7:
		return "Ampere"
	case 8:
		return "Ada"
	case 9:
		return "Hopper"
	case 10:
		return "Blackwell"
	case 13:
		return "Rubin"
	}
	return ""
}

// ArchitectureFromCC names the family from a compute capability, for GPUs
// or drivers that cannot answer DeviceGetArchitecture.
func ArchitectureFromCC(major, minor int) string {
	switch {
	case major == 3:
		return "Kepler"
	case major == 5:
		return "Maxwell"
	case major == 6:
		return "Pascal"
	case major == 7 && minor < 5:
		return "Volta"
	case major == 7:
		return "Turing"
	case major == 8 && minor == 9:
		return "Ada"
	case major == 8:
		return "Ampere"
	case major == 9:
		return "Hopper"
	case major == 10 || major == 11 || major == 12:
		return "Blackwell"
	}
	return ""
}

// CUDAVersionString turns NVML's integer (12040) into "12.4".
func CUDAVersionString(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}

// Clocks-event reason bits (nvmlClocksEventReason*).
var clocksEventReasons = []struct {
	bit  uint64
	name string
}{
	{0x001, "gpu_idle"},
	{0x002, "applications_clocks_setting"},
	{0x004, "sw_power_cap"},
	{0x008, "hw_slowdown"},
	{0x010, "sync_boost"},
	{0x020, "sw_thermal_slowdown"},
	{0x040, "hw_thermal_slowdown"},
	{0x080, "hw_power_brake_slowdown"},
	{0x100, "display_clock_setting"},
}

// ThrottleMask is the clocks-event bits that mean the GPU is being slowed
// by heat or power (DCGM treats the same set as failures).
const ThrottleMask uint64 = 0x08 | 0x20 | 0x40 | 0x80

// ClocksEventReasonNames decodes the bitmask into snake_case names; unknown
// bits are shown as hex.
func ClocksEventReasonNames(mask uint64) []string {
	names := []string{}
	for _, r := range clocksEventReasons {
		if mask&r.bit != 0 {
			names = append(names, r.name)
			mask &^= r.bit
		}
	}
	if mask != 0 {
		names = append(names, fmt.Sprintf("0x%x", mask))
	}
	return names
}

// FabricStateName names nvmlGpuFabricState_t.
func FabricStateName(s int) string {
	switch s {
	case 0:
		return "not_supported"
	case 1:
		return "not_started"
	case 2:
		return "in_progress"
	case 3:
		return "completed"
	}
	return "unknown"
}

// ComputeModeName names nvmlComputeMode_t.
func ComputeModeName(m int) string {
	switch m {
	case 0:
		return "default"
	case 1:
		return "exclusive_thread"
	case 2:
		return "prohibited"
	case 3:
		return "exclusive_process"
	}
	return "unknown"
}

// BrandName names nvmlBrandType_t.
func BrandName(b int) string {
	names := map[int]string{
		0: "unknown", 1: "quadro", 2: "tesla", 3: "nvs", 4: "grid", 5: "geforce", 6: "titan",
		7: "nvidia_vapps", 8: "nvidia_vpc", 9: "nvidia_vcs", 10: "nvidia_vws", 11: "nvidia_cloud_gaming",
		12: "quadro_rtx", 13: "nvidia_rtx", 14: "nvidia", 15: "geforce_rtx", 16: "titan_rtx",
	}
	if n, ok := names[b]; ok {
		return n
	}
	return "unknown"
}

func enabled(v int) string {
	if v == 1 {
		return "enabled"
	}
	return "disabled"
}

// trimNUL drops C string padding some answers carry.
func trimNUL(s string) string { return strings.TrimRight(s, "\x00") }
