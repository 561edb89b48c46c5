package doctor

import "context"

// NVState is the NVIDIA management state doctor's checks judge: devctl's own
// narrow view of NVML answers, so checks never depend on go-nvml or on the
// shape of the nvidia driver's raw data (an adapter fills it).
type NVState struct {
	// Source says where the answers came from ("nvml", "nvidia-smi", "snapshot").
	Source string
	// InitTried is true when NVML was asked at all (false without cgo, on a
	// --sysroot tree, or a snapshot recorded without NVML).
	InitTried bool
	// InitOK is false when NVML could not load or initialise.
	InitOK bool
	// Usable is true when the answers below are valid: from NVML, or from
	// the nvidia-smi fallback when NVML could not load.
	Usable bool
	// InitReturn is the NVML return code of the failed load/init ("" when OK),
	// e.g. "ERROR_LIB_RM_VERSION_MISMATCH", with its meaning.
	InitReturn  string
	InitCode    int
	InitMeaning string
	// DriverVersion is SystemGetDriverVersion ("550.90.07").
	DriverVersion string
	// CUDADriverVersion is SystemGetCudaDriverVersion_v2 (12040 = 12.4), 0 unknown.
	CUDADriverVersion int
	Devices           []NVDevice
}

// NVDevice is one GPU's state. Pointer fields are nil when NVML did not say
// (unsupported on this GPU, or not queried).
type NVDevice struct {
	Index int
	Name  string
	UUID  string
	BusID string
	Minor *int

	Persistence *bool

	// ClockEventReasons is DeviceGetCurrentClocksEventReasons' bitmask.
	ClockEventReasons *uint64
	PowerLimitMW      *uint32
	DefaultPowerMW    *uint32

	ECCEnabled              *bool
	ECCVolatileUncorrected  *uint64
	ECCAggregateUncorrected *uint64
	RetiredPagesPending     *bool
	RemapPending            *bool
	RemapFailure            *bool

	MIGCurrent *int
	MIGPending *int

	MemoryTotalMiB *uint64
	MemoryUsedMiB  *uint64
	Processes      []NVProcess

	// FabricState/FabricStatus come from DeviceGetGpuFabricInfo on NVSwitch
	// systems: state 3 = completed; status 0 = success.
	FabricState  *int
	FabricStatus *int

	LinkWidthCur *int
	LinkWidthMax *int
	LinkGenCur   *int
	LinkGenMax   *int
}

// NVProcess is a compute process holding GPU memory. PIDs are host PIDs
// even inside a container.
type NVProcess struct {
	PID     uint32
	UsedMiB uint64
}

// nvidiaState obtains NVIDIA state from the probe's nvidia outcome.
func nvidiaState(_ context.Context, e *Env) (*NVState, string) {
	return nvidiaFromProbe(e)
}
