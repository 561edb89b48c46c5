package history

import (
	"fmt"
	"strconv"

	"github.com/devctl/devctl/internal/explain"
)

// Scope is what a recorded failure says about the device it ran on.
type Scope int

const (
	// ScopeNone: the failure is recorded but says nothing about the device:
	// the model did not fit (out of memory), the program has a bug (a
	// tensor on the wrong device, mismatched dtypes), the setup is wrong
	// (a CPU-only build, a library missing from the environment), or the
	// classifier could not tell.
	ScopeNone Scope = iota
	// ScopeDevice: the device itself is unwell: lost from the bus, an Xid
	// or ECC fault, the driver or the vendor runtime failing. It counts
	// against the device for every operation.
	ScopeDevice
	// ScopeOperation: the backend does not implement what the program
	// asked of it (an operator, a dtype). It counts against the device for
	// that operation only, as seed 003 keys its history by (device,
	// operation).
	ScopeOperation
)

func (s Scope) String() string {
	switch s {
	case ScopeDevice:
		return "device"
	case ScopeOperation:
		return "operation"
	}
	return "none"
}

// scopes decides, per classifier message id or category, whether a failure
// counts. A message id (the classifier's refinement) is looked up first,
// then its category; what is in neither counts for nothing. The reasons
// are in docs/run.md ("The history rule").
var scopes = map[string]Scope{
	// The device is unwell.
	"other.gpu_lost":       ScopeDevice, // Xid 79/119/120/154, "GPU is lost", fallen off the bus
	"other.xid_ecc":        ScopeDevice, // Xid 48/63/64/92/94/95: ECC and row-remapping faults
	"other.xid_nvlink":     ScopeDevice, // Xid 74, 144-150: NVLink faults
	"other.xid":            ScopeDevice, // an Xid the catalogue does not map to the application
	"other.nvml_unknown":   ScopeDevice, // NVML "Unknown Error": access to the device nodes lost
	"other.fabric_manager": ScopeDevice, // CUDA 802: the NVSwitch fabric is not up
	"other.xpu":            ScopeDevice, // an Intel Level Zero / Unified Runtime device error
	string(explain.CategoryCUDADriverMismatch): ScopeDevice, // driver older than the runtime, library/module mismatch
	string(explain.CategoryNoGPUFound):         ScopeDevice, // the driver finds no device
	"no_gpu_found.cuda_unknown":                ScopeDevice, // cudaErrorUnknown at initialisation
	"no_gpu_found.mps":                         ScopeDevice, // the MPS backend is not available
	string(explain.CategoryCUDALaunchFailure):  ScopeDevice, // "unspecified launch failure"
	string(explain.CategoryROCmHIPError):       ScopeDevice, // the HIP runtime failed
	"rocm_hip_error.kfd":                       ScopeDevice, // /dev/kfd cannot be opened
	string(explain.CategoryXLATPUInit):         ScopeDevice, // libtpu could not start

	// The backend does not implement the operation.
	string(explain.CategoryMPSUnsupportedOp): ScopeOperation,
	"mps_unsupported_op.sparse":              ScopeOperation,
	"other.mps_assert":                       ScopeOperation, // an MPS kernel asserted on a shape it cannot handle
	string(explain.CategoryUnsupportedDType): ScopeOperation,
	"unsupported_dtype.mps_bf16":             ScopeOperation,
	"unsupported_dtype.mps_float64":          ScopeOperation,
	"unsupported_dtype.cpu_half":             ScopeOperation,
	"unsupported_dtype.bf16_cc":              ScopeOperation,
	"unsupported_dtype.compute_capability":   ScopeOperation,

	// Refinements of counted categories that do not count: the program or
	// its environment is at fault, or the device is only busy.
	"no_gpu_found.cpu_build":             ScopeNone, // a CPU-only framework build
	"no_gpu_found.deserialize":           ScopeNone, // a CUDA checkpoint loaded without map_location
	"no_gpu_found.tf_libraries":          ScopeNone, // CUDA libraries missing from the environment
	"cuda_launch_failure.illegal_access": ScopeNone, // an out-of-bounds access in a kernel
	"cuda_launch_failure.resources":      ScopeNone, // a launch asking for too many registers/threads
	"rocm_hip_error.no_binary":           ScopeNone, // a build without code for this GPU
	"xla_tpu_init.busy":                  ScopeNone, // another process holds the TPU
	"xla_tpu_init.multihost":             ScopeNone, // a multi-host slice started on one host
}

// ScopeOf says what a failure of the given category and classifier message
// id counts against (see Scope).
func ScopeOf(category, messageID string) Scope {
	if s, ok := scopes[messageID]; ok && messageID != "" {
		return s
	}
	return scopes[category]
}

// The one rule devctl follows everywhere (probe's default device, recommend,
// run), from the device-manager design (seed 003): a device whose success
// rate over its last RuleWindow counted runs is below RuleThreshold is
// passed over for the next device in priority, once it has at least
// RuleMinRuns counted runs. Two windows are judged: the device's health
// (successes of any operation against failures of ScopeDevice) and the
// operation (successes of that operation against its failures of
// ScopeOperation). Failures of ScopeNone are never counted. An explicitly
// requested device is used anyway, with the verdict shown as a warning,
// and so is every device when device.fallback_enabled is false.
const (
	RuleWindow    = 5
	RuleThreshold = 0.8
	// RuleMinRuns is the fewest counted runs before a rate can pass a
	// device over: one failure may be a driver reload or a preempted TPU,
	// and a rate of one run is 0 or 1.
	RuleMinRuns = 3
)

// Verdict is the rule applied to one device and operation.
type Verdict struct {
	Device    string `json:"device"`
	Operation string `json:"operation,omitempty"`
	// Runs and Successes count the device-health window: the newest
	// runs (at most RuleWindow) that succeeded or failed because the
	// device was unwell.
	Runs      int     `json:"runs"`
	Successes int     `json:"successes"`
	Rate      float64 `json:"rate"`
	// OperationRuns and OperationSuccesses count the operation window:
	// the newest runs of this operation that succeeded or failed because
	// the backend does not implement it.
	OperationRuns      int     `json:"operation_runs"`
	OperationSuccesses int     `json:"operation_successes"`
	OperationRate      float64 `json:"operation_rate"`
	// NotCounted is how many failed runs the rule skipped on the way
	// because they say nothing about the device (out of memory, bugs).
	NotCounted int `json:"not_counted"`
	// PassOver is true when a window with at least RuleMinRuns runs has a
	// rate below RuleThreshold; Scope names that window.
	PassOver bool   `json:"pass_over"`
	Scope    string `json:"scope,omitempty"`
	// TopCategory is the most frequent counted failure (its message id
	// when the classifier refined it).
	TopCategory string `json:"top_category,omitempty"`
}

// Reason renders the verdict as the one line probe, recommend and run show.
func (v Verdict) Reason() string {
	var s string
	if v.Scope == ScopeOperation.String() {
		s = fmt.Sprintf("%s: %d of its last %d runs of %s succeeded (%.0f%%, below %.0f%%)", v.Device, v.OperationSuccesses, v.OperationRuns, opName(v.Operation), v.OperationRate*100, RuleThreshold*100)
	} else {
		s = fmt.Sprintf("%s: %d of its last %d counted runs succeeded (%.0f%%, below %.0f%%)", v.Device, v.Successes, v.Runs, v.Rate*100, RuleThreshold*100)
	}
	if v.TopCategory != "" {
		s += ", most often " + v.TopCategory
	}
	return s + "; see devctl history"
}

func opName(op string) string {
	if op == "" {
		return "jobs that name no operation"
	}
	return "operation " + strconv.Quote(op)
}

// unit is one run on one device: the attempts of a `devctl run` there, or
// one record of any other source.
type unit struct {
	operation string
	success   bool
	device    string // the newest counted device-scope failure's label
	op        string // the newest counted operation-scope failure's label
	failed    bool   // a failure of any kind (for NotCounted)
}

func label(r Record) string {
	if r.MessageID != "" && r.MessageID != r.Category {
		return r.MessageID
	}
	return r.Category
}

// units groups the device's success and failure records into runs, newest
// first. A run counts by its last attempt on the device: success if that
// succeeded; otherwise as the failure any of its attempts there had that
// counts (a GPU lost on attempt 1 is not hidden by an out-of-memory on
// attempt 2).
func (rs Records) units(device string) []unit {
	var out []unit
	byRun := map[string]int{}
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if r.Device != device || (r.Outcome != Success && r.Outcome != Failure) {
			continue
		}
		idx := -1
		if r.Run != "" {
			if j, ok := byRun[r.Run]; ok {
				idx = j
			}
		}
		if idx < 0 {
			out = append(out, unit{operation: r.Operation, success: r.Outcome == Success})
			idx = len(out) - 1
			if r.Run != "" {
				byRun[r.Run] = idx
			}
		}
		u := &out[idx]
		if r.Outcome != Failure {
			continue
		}
		u.failed = true
		switch ScopeOf(r.Category, r.MessageID) {
		case ScopeDevice:
			if u.device == "" {
				u.device = label(r)
			}
		case ScopeOperation:
			if u.op == "" {
				u.op = label(r)
			}
		}
	}
	return out
}

// Judge applies the rule to a device for jobs that name no operation:
// what probe and recommend ask.
func (rs Records) Judge(device string) Verdict { return rs.JudgeFor(device, "") }

// JudgeFor applies the rule to a device and an operation. Interrupted and
// unrelated outcomes never count; nor do failures of ScopeNone.
func (rs Records) JudgeFor(device, operation string) Verdict {
	device = NormalizeDevice(device)
	v := Verdict{Device: device, Operation: operation}
	health, ops := map[string]int{}, map[string]int{}
	for _, u := range rs.units(device) {
		if v.Runs < RuleWindow {
			switch {
			case u.success:
				v.Runs++
				v.Successes++
			case u.device != "":
				v.Runs++
				health[u.device]++
			case u.failed && u.op == "":
				v.NotCounted++
			}
		}
		if u.operation == operation && v.OperationRuns < RuleWindow {
			switch {
			case u.success:
				v.OperationRuns++
				v.OperationSuccesses++
			case u.op != "" && u.device == "":
				v.OperationRuns++
				ops[u.op]++
			}
		}
	}
	if v.Runs > 0 {
		v.Rate = float64(v.Successes) / float64(v.Runs)
	}
	if v.OperationRuns > 0 {
		v.OperationRate = float64(v.OperationSuccesses) / float64(v.OperationRuns)
	}
	switch {
	case v.Runs >= RuleMinRuns && v.Rate < RuleThreshold:
		v.PassOver, v.Scope, v.TopCategory = true, ScopeDevice.String(), top(health)
	case v.OperationRuns >= RuleMinRuns && v.OperationRate < RuleThreshold:
		v.PassOver, v.Scope, v.TopCategory = true, ScopeOperation.String(), top(ops)
	default:
		v.TopCategory = top(health)
		if v.TopCategory == "" {
			v.TopCategory = top(ops)
		}
	}
	return v
}

func top(counts map[string]int) string {
	best, name := 0, ""
	for c, n := range counts {
		if n > best || (n == best && c < name) {
			name, best = c, n
		}
	}
	return name
}

// PassOver applies the rule, for operation, to every device in the history
// and returns the reasons of those to pass over, by backend.
func (rs Records) PassOver(operation string) map[string]string {
	out := map[string]string{}
	done := map[string]bool{}
	for _, r := range rs {
		if done[r.Device] {
			continue
		}
		done[r.Device] = true
		if v := rs.JudgeFor(r.Device, operation); v.PassOver {
			out[r.Device] = v.Reason()
		}
	}
	return out
}
