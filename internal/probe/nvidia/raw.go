package nvidia

import (
	"encoding/json"
	"errors"
	"fmt"
)

// RawVersion is the layout version of Raw. A snapshot records it so that a
// later devctl can tell which fields an old recording could have had.
const RawVersion = 1

// Sources of a Raw value.
const (
	SourceNVML      = "nvml"
	SourceNVIDIASMI = "nvidia-smi"
)

// Raw is everything devctl learned from NVML (or, in the fallback, from
// nvidia-smi), kept as answers rather than conclusions: each value carries
// the NVML return code it came with, so "this GPU does not support it"
// (ERROR_NOT_SUPPORTED) stays distinguishable from "the query failed". A nil
// answer means the question was never asked (an older recording, a GPU that
// was lost before we got to it, or a source that cannot answer it).
type Raw struct {
	Version int    `json:"version"`
	Source  string `json:"source"`
	// InitRet is nvmlInit's return code; nil when NVML was not tried (no cgo,
	// or no NVML on the host).
	InitRet *Return `json:"init_ret,omitempty"`
	// NVMLError is why NVML gave no answers when that is not a return code
	// (the query failed or produced undecodable data).
	NVMLError string `json:"nvml_error,omitempty"`
	// SMIError is why the nvidia-smi fallback failed, when it was tried.
	SMIError string `json:"smi_error,omitempty"`

	DriverVersion *Answer[string] `json:"driver_version,omitempty"`
	// CUDADriverVersion is the newest CUDA the driver supports, as NVML
	// encodes it: 12040 is 12.4.
	CUDADriverVersion *Answer[int]    `json:"cuda_driver_version,omitempty"`
	NVMLVersion       *Answer[string] `json:"nvml_version,omitempty"`
	DeviceCount       *Answer[int]    `json:"device_count,omitempty"`
	GPUs              []GPU           `json:"gpus"`
	// P2P holds peer-to-peer status for each pair of GPUs (A < B).
	P2P []P2PPair `json:"p2p,omitempty"`
	// Incomplete is set when collection stopped early (the deadline passed).
	Incomplete bool `json:"incomplete,omitempty"`
}

// GPU is the answers for one physical GPU.
type GPU struct {
	// Index is the NVML enumeration index.
	Index int `json:"index"`
	// HandleRet is DeviceGetHandleByIndex's return code.
	HandleRet Return `json:"handle_ret"`
	// Lost is set when any call answered ERROR_GPU_IS_LOST; collection of
	// that GPU stops there.
	Lost bool `json:"lost,omitempty"`

	Name              *Answer[string]            `json:"name,omitempty"`
	UUID              *Answer[string]            `json:"uuid,omitempty"`
	PCI               *Answer[PCIInfo]           `json:"pci,omitempty"`
	MinorNumber       *Answer[int]               `json:"minor_number,omitempty"`
	Memory            *Answer[Memory]            `json:"memory,omitempty"`
	MemoryV2          *Answer[Memory]            `json:"memory_v2,omitempty"`
	ComputeCapability *Answer[ComputeCapability] `json:"compute_capability,omitempty"`
	// Architecture is NVML's nvmlDeviceArchitecture_t (7 Ampere, 9 Hopper).
	Architecture *Answer[uint32] `json:"architecture,omitempty"`
	// Brand is NVML's nvmlBrandType_t.
	Brand *Answer[int] `json:"brand,omitempty"`

	PCIeGenCurrent *Answer[int] `json:"pcie_gen_current,omitempty"`
	// PCIeGenMax is the highest generation this GPU and system can run.
	PCIeGenMax *Answer[int] `json:"pcie_gen_max,omitempty"`
	// PCIeGenGPUMax is the highest generation the GPU itself supports.
	PCIeGenGPUMax    *Answer[int] `json:"pcie_gen_gpu_max,omitempty"`
	PCIeWidthCurrent *Answer[int] `json:"pcie_width_current,omitempty"`
	PCIeWidthMax     *Answer[int] `json:"pcie_width_max,omitempty"`

	// PersistenceMode is 1 when enabled.
	PersistenceMode *Answer[int]      `json:"persistence_mode,omitempty"`
	MIGMode         *Answer[ModePair] `json:"mig_mode,omitempty"`
	// ComputeMode is NVML's nvmlComputeMode_t (0 default, 2 prohibited,
	// 3 exclusive process).
	ComputeMode *Answer[int] `json:"compute_mode,omitempty"`

	PowerUsageMW        *Answer[uint32] `json:"power_usage_mw,omitempty"`
	PowerLimitMW        *Answer[uint32] `json:"power_limit_mw,omitempty"`
	PowerDefaultLimitMW *Answer[uint32] `json:"power_default_limit_mw,omitempty"`
	TemperatureC        *Answer[uint32] `json:"temperature_c,omitempty"`
	// ClocksEventReasons is the clocks-event (throttle) bitmask; see
	// ClocksEventReasonNames.
	ClocksEventReasons *Answer[uint64] `json:"clocks_event_reasons,omitempty"`

	ECCMode                 *Answer[ModePair]     `json:"ecc_mode,omitempty"`
	ECCVolatileUncorrected  *Answer[uint64]       `json:"ecc_volatile_uncorrected,omitempty"`
	ECCAggregateUncorrected *Answer[uint64]       `json:"ecc_aggregate_uncorrected,omitempty"`
	RetiredPagesPending     *Answer[int]          `json:"retired_pages_pending,omitempty"`
	RemappedRows            *Answer[RemappedRows] `json:"remapped_rows,omitempty"`
	Processes               *Answer[[]Process]    `json:"processes,omitempty"`
	Fabric                  *Answer[Fabric]       `json:"fabric,omitempty"`
}

// PCIInfo is the part of nvmlPciInfo_t devctl uses.
type PCIInfo struct {
	BusID string `json:"bus_id"`
	// DeviceID is the combined device and vendor id (0x20B010DE).
	DeviceID uint32 `json:"device_id"`
}

// Memory is frame-buffer memory in bytes. Reserved is only known from
// nvmlDeviceGetMemoryInfo_v2 (R510+), which also leaves it out of Used.
type Memory struct {
	Total    uint64  `json:"total"`
	Free     uint64  `json:"free"`
	Used     uint64  `json:"used"`
	Reserved *uint64 `json:"reserved,omitempty"`
}

// ComputeCapability is CUDA's major.minor.
type ComputeCapability struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
}

// String renders "8.0".
func (c ComputeCapability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }

// ModePair is a current and pending setting (MIG, ECC): 1 enabled, 0 disabled.
type ModePair struct {
	Current int `json:"current"`
	Pending int `json:"pending"`
}

// RemappedRows is nvmlDeviceGetRemappedRows (A100 and newer).
type RemappedRows struct {
	Correctable   int  `json:"correctable"`
	Uncorrectable int  `json:"uncorrectable"`
	Pending       bool `json:"pending"`
	Failure       bool `json:"failure"`
}

// Process is one compute process on a GPU. PIDs are host PIDs, even when
// devctl runs in a container.
type Process struct {
	PID             uint32 `json:"pid"`
	UsedMemoryBytes uint64 `json:"used_memory_bytes"`
}

// Fabric is nvmlDeviceGetGpuFabricInfo (NVSwitch systems): State is
// nvmlGpuFabricState_t (3 completed), Status the fabric's own return code.
type Fabric struct {
	State       int    `json:"state"`
	Status      int    `json:"status"`
	CliqueID    uint32 `json:"clique_id"`
	ClusterUUID string `json:"cluster_uuid,omitempty"`
}

// P2PPair is the peer-to-peer status between two GPUs, as
// nvmlGpuP2PStatus_t (0 OK).
type P2PPair struct {
	A      int          `json:"a"`
	B      int          `json:"b"`
	Read   *Answer[int] `json:"read,omitempty"`
	NVLink *Answer[int] `json:"nvlink,omitempty"`
}

// Answer is one NVML call's outcome. Value is meaningful only when Ret is
// Success.
type Answer[T any] struct {
	Value T
	Ret   Return
}

// OK reports whether the call succeeded; a nil answer was never asked.
func (a *Answer[T]) OK() bool { return a != nil && a.Ret == Success }

// Get returns the value and whether it is valid.
func (a *Answer[T]) Get() (T, bool) {
	if a.OK() {
		return a.Value, true
	}
	var zero T
	return zero, false
}

// Ok builds a successful answer.
func Ok[T any](v T) *Answer[T] { return &Answer[T]{Value: v} }

// Fail builds a failed answer.
func Fail[T any](ret Return) *Answer[T] { return &Answer[T]{Ret: ret} }

type answerJSON[T any] struct {
	Value *T     `json:"value,omitempty"`
	Ret   Return `json:"ret"`
	Error string `json:"error,omitempty"`
}

// MarshalJSON writes {"value":...,"ret":0} or, for a failure, the code and
// its name ({"ret":3,"error":"ERROR_NOT_SUPPORTED"}) so a person reading a
// snapshot needs no table.
func (a Answer[T]) MarshalJSON() ([]byte, error) {
	if a.Ret == Success {
		v := a.Value
		return json.Marshal(answerJSON[T]{Value: &v})
	}
	return json.Marshal(answerJSON[T]{Ret: a.Ret, Error: a.Ret.Name()})
}

// UnmarshalJSON reads what MarshalJSON writes; the error name is ignored.
func (a *Answer[T]) UnmarshalJSON(b []byte) error {
	var aux answerJSON[T]
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*a = Answer[T]{Ret: aux.Ret}
	if aux.Value != nil && aux.Ret == Success {
		a.Value = *aux.Value
	}
	return nil
}

// ErrEmpty is returned by Decode for empty input.
var ErrEmpty = errors.New("no NVML data")

// Decode parses the JSON a host.NVML produced (or a snapshot stored). It
// accepts unknown fields, so a newer recording still replays.
func Decode(b []byte) (*Raw, error) {
	if len(b) == 0 {
		return nil, ErrEmpty
	}
	var r Raw
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding NVML answers: %w", err)
	}
	if r.Version > RawVersion {
		// Newer layouts only add fields; read what we know.
		r.Version = RawVersion
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("decoding NVML answers: %w", err)
	}
	return &r, nil
}

// validate holds a decoded answer (a replayed nvml.json as much as a live
// one) to what NVML itself can return: a device count that is not
// negative and GPU indexes that are distinct and in [0, count). A crafted
// file once produced "cuda:0, cuda:0" and CUDA_VISIBLE_DEVICES=-1.
func (r *Raw) validate() error {
	count, haveCount := r.DeviceCount.Get()
	if haveCount && count < 0 {
		return fmt.Errorf("device count %d: want 0 or more", count)
	}
	seen := make(map[int]bool, len(r.GPUs))
	for _, g := range r.GPUs {
		switch {
		case g.Index < 0:
			return fmt.Errorf("GPU index %d: want 0 or more", g.Index)
		case haveCount && g.Index >= count:
			return fmt.Errorf("GPU index %d: want less than the device count %d", g.Index, count)
		case seen[g.Index]:
			return fmt.Errorf("GPU index %d appears twice", g.Index)
		}
		seen[g.Index] = true
	}
	for _, p := range r.P2P {
		if !seen[p.A] || !seen[p.B] || p.A == p.B {
			return fmt.Errorf("peer-to-peer pair %d-%d: want two distinct listed GPUs", p.A, p.B)
		}
	}
	return nil
}

// Usable reports whether NVML answered well enough to list GPUs.
func (r *Raw) Usable() bool {
	return r != nil && r.InitRet != nil && *r.InitRet == Success && r.DeviceCount.OK()
}
