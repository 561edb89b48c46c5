package explain

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/explain/i18n"
	"github.com/devctl/devctl/internal/units"
)

// Category names the kind of failure; the set is closed and stable because
// history files and CI gates key on it.
type Category string

// The categories, in the order the doctor documentation lists them.
const (
	CategoryOutOfMemory           Category = "out_of_memory"
	CategoryXLAResourceExhausted  Category = "xla_resource_exhausted"
	CategoryDeviceMismatch        Category = "device_mismatch"
	CategoryDTypeMismatch         Category = "dtype_mismatch"
	CategoryUnsupportedDType      Category = "unsupported_dtype"
	CategoryMPSPlaceholderStorage Category = "mps_placeholder_storage"
	CategoryMPSUnsupportedOp      Category = "mps_unsupported_op"
	CategoryCUDADriverMismatch    Category = "cuda_driver_mismatch"
	CategoryNoGPUFound            Category = "no_gpu_found"
	CategoryCUDALaunchFailure     Category = "cuda_launch_failure"
	CategoryCUDNNError            Category = "cudnn_error"
	CategoryNCCLError             Category = "nccl_error"
	CategoryXLATPUInit            Category = "xla_tpu_init"
	CategoryROCmHIPError          Category = "rocm_hip_error"
	// CategoryOther is a device error of no listed kind.
	CategoryOther Category = "other"
	// CategoryUnknown means nothing device-related was recognised.
	CategoryUnknown Category = "unknown"
)

// Device is the device family a failure belongs to, matching the names the
// probe and history use.
type Device string

// The devices.
const (
	DeviceCUDA Device = "cuda"
	DeviceMPS  Device = "mps"
	DeviceXLA  Device = "xla"
	DeviceROCm Device = "rocm"
	DeviceCPU  Device = "cpu"
	// DeviceXPU is Intel's GPU family (oneAPI / Level Zero).
	DeviceXPU Device = "xpu"
	// DeviceNeuron is AWS Inferentia/Trainium.
	DeviceNeuron Device = "neuron"
	// DeviceAny is used when the log does not say which device was involved.
	DeviceAny Device = "any"
)

// Explanation is what Classify read from a log.
type Explanation struct {
	Category Category `json:"category"`
	Device   Device   `json:"device"`
	// MessageID keys the catalogue; it is the category or a refinement of
	// it such as "out_of_memory.mps".
	MessageID string `json:"message_id"`
	// Evidence quotes the primary line first, then at most two related
	// lines, trimmed; empty for CategoryUnknown with no exception line.
	Evidence []string `json:"evidence"`
	// Line is the 1-based line number of the primary evidence (0 if none).
	Line    int     `json:"line,omitempty"`
	Numbers Numbers `json:"numbers"`
	// Confidence in [0,1]: how specific the matched rule is and how
	// primary its line looked.
	Confidence float64 `json:"confidence"`
	// Rule is the id of the rule that matched, for debugging reports.
	Rule string `json:"rule,omitempty"`
	// DecidedBy says which part of the classifier named the category: a
	// hand-written rule, an error catalogue, the learned model, or none
	// (nothing recognised, CategoryUnknown).
	DecidedBy DecidedBy `json:"decided_by"`
}

// DecidedBy names the part of the classifier that decided a category.
type DecidedBy string

// The deciders, strongest evidence first.
const (
	DecidedByRule      DecidedBy = "rule"
	DecidedByCatalogue DecidedBy = "catalogue"
	DecidedByModel     DecidedBy = "model"
	DecidedByNone      DecidedBy = "none"
)

// Numbers are the values the classifier read from the log. A nil pointer
// means the log did not state the value; nothing is estimated.
type Numbers struct {
	RequestedBytes *int64 `json:"requested_bytes"`
	TotalBytes     *int64 `json:"total_bytes"`
	FreeBytes      *int64 `json:"free_bytes"`
	ReservedBytes  *int64 `json:"reserved_bytes"`
	AllocatedBytes *int64 `json:"allocated_bytes"`
	// OtherBytes is memory held outside the framework's allocator (MPS
	// "other allocations", CUDA "this process has ... in use").
	OtherBytes  *int64 `json:"other_bytes"`
	DeviceIndex *int   `json:"device_index"`
	// DriverVersion is the NVIDIA driver release, e.g. "470.86".
	DriverVersion *string `json:"driver_version"`
	// DriverCUDAVersion is the newest CUDA the driver supports, e.g. "11.4"
	// (from "found version 11040" or nvidia-smi's "CUDA Version").
	DriverCUDAVersion *string `json:"driver_cuda_version"`
	// RuntimeVersion is the CUDA runtime the program was built with.
	RuntimeVersion *string `json:"runtime_version"`
	// ErrorCode is a numeric CUDA/HIP/NCCL error code when printed.
	ErrorCode *int `json:"error_code"`
	// Operator is the failing op, e.g. "aten::_slow_conv2d_forward".
	Operator *string `json:"operator"`
	// DType is the precision named by the error, e.g. "BFloat16".
	DType *string `json:"dtype"`
	// Devices are the devices named by a mismatch, e.g. ["cuda:0", "cpu"].
	Devices []string `json:"devices,omitempty"`
}

// Fragmented reports whether the log shows the caching allocator holding
// much more than it had handed out: the reserved-but-unallocated part is at
// least a quarter of what is reserved and, when the request size is known,
// at least the request (so the bytes were there, only not in one piece).
// Without both numbers it is false: fragmentation is not guessed.
func (n Numbers) Fragmented() bool {
	if n.ReservedBytes == nil || n.AllocatedBytes == nil {
		return false
	}
	unalloc := *n.ReservedBytes - *n.AllocatedBytes
	if unalloc <= 0 || unalloc < *n.ReservedBytes/4 {
		return false
	}
	return n.RequestedBytes == nil || unalloc >= *n.RequestedBytes
}

// Vars renders the numbers for message placeholders: requested, total,
// free, reserved, allocated, other (bytes, human units), frag_reserved and
// frag_allocated (only when Fragmented), device_index,
// driver_version, driver_cuda_version, torch_install (TorchInstall for the
// driver's CUDA), runtime_version, error_code,
// operator, dtype, devices. Absent values are absent from the map.
func (n Numbers) Vars() map[string]string {
	v := map[string]string{}
	sz := func(k string, p *int64) {
		if p != nil {
			v[k] = units.Bytes(*p).String()
		}
	}
	sz("requested", n.RequestedBytes)
	sz("total", n.TotalBytes)
	sz("free", n.FreeBytes)
	sz("reserved", n.ReservedBytes)
	sz("allocated", n.AllocatedBytes)
	sz("other", n.OtherBytes)
	if n.Fragmented() {
		// Only then may the message blame fragmentation.
		v["frag_reserved"] = units.Bytes(*n.ReservedBytes).String()
		v["frag_allocated"] = units.Bytes(*n.AllocatedBytes).String()
	}
	if n.DeviceIndex != nil {
		v["device_index"] = strconv.Itoa(*n.DeviceIndex)
	}
	str := func(k string, p *string) {
		if p != nil && *p != "" {
			v[k] = *p
		}
	}
	str("driver_version", n.DriverVersion)
	str("driver_cuda_version", n.DriverCUDAVersion)
	if n.DriverCUDAVersion != nil {
		if cmd, ok := TorchInstall(*n.DriverCUDAVersion); ok {
			v["torch_install"] = cmd // the newest PyTorch build the driver runs
		}
	}
	str("runtime_version", n.RuntimeVersion)
	str("operator", n.Operator)
	str("dtype", n.DType)
	if n.ErrorCode != nil {
		v["error_code"] = strconv.Itoa(*n.ErrorCode)
	}
	if len(n.Devices) > 0 {
		s := n.Devices[0]
		for _, d := range n.Devices[1:] {
			s += ", " + d
		}
		v["devices"] = s
	}
	return v
}

// Message renders the explanation's catalogue entry in lang (falling back
// to English) with the numbers filled in. An id missing from cat gives the
// generic "other" or "unknown" entry, so a caller always has text to show.
func (e Explanation) Message(cat *i18n.Catalog, lang string) i18n.Message {
	m, ok := cat.Lookup(e.MessageID, lang)
	if !ok {
		m, ok = cat.Lookup(string(e.Category), lang)
	}
	if !ok {
		m, _ = cat.Lookup(string(CategoryUnknown), lang)
	}
	vars := e.Numbers.Vars()
	// The autocast call in the dtype-mismatch fix names the log's device
	// (torch.autocast needs its device_type); an unknown device reads it
	// from the tensor.
	vars["autocast"] = backend.Backend(e.Device).AutocastCall()
	r := m.Render(vars)
	// A sentence left out for want of its numbers leaves a space behind.
	r.Explanation = strings.TrimSpace(r.Explanation)
	return r
}

// MaxTail is how much of a log's end ClassifyReader keeps: primary errors
// sit at the end of a failed run, and this bounds memory on huge job logs.
const MaxTail = 32 << 20

// ClassifyReader classifies the last MaxTail bytes of r. It reads r to the
// end holding at most MaxTail bytes (a ring once the log is that long). A
// caller with a regular file should seek to its last MaxTail bytes first.
//
// Line counts from the start of r, also when its head was dropped.
func ClassifyReader(r io.Reader) (Explanation, error) {
	b, dropped, err := readTail(r, MaxTail)
	if err != nil {
		return Explanation{}, fmt.Errorf("reading log: %w", err)
	}
	e := Classify(b)
	if e.Line > 0 {
		e.Line += dropped
	}
	return e, nil
}

// readTail returns the last max bytes of r, without the partial first line
// when anything was cut, and how many lines were dropped before them.
// Memory stays at max bytes however long r is.
func readTail(r io.Reader, max int) ([]byte, int, error) {
	dropped := 0
	buf := make([]byte, 0, min(max, 64<<10))
	chunk := make([]byte, 256<<10)
	pos, full := 0, false // in ring mode, buf[pos] is the oldest byte
	for {
		n, err := r.Read(chunk)
		data := chunk[:n]
		if !full {
			room := max - len(buf)
			if len(data) <= room {
				buf = append(buf, data...)
				data = nil
			} else {
				buf = append(buf, data[:room]...)
				data = data[room:]
				full = true
			}
		}
		for len(data) > 0 {
			dropped += bytes.Count(buf[pos:pos+min(len(data), max-pos)], []byte{'\n'})
			k := copy(buf[pos:], data)
			data = data[k:]
			pos = (pos + k) % max
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	if !full {
		return buf, 0, nil
	}
	// Rotate the ring so the oldest byte comes first, in place.
	slices.Reverse(buf[:pos])
	slices.Reverse(buf[pos:])
	slices.Reverse(buf)
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:] // drop the partial first line
		dropped++
	}
	return buf, dropped, nil
}
