package devmem

import "fmt"

// Methods a Measurement can name.
const (
	MethodNVML      = "nvml"       // nvmlDeviceGetComputeRunningProcesses
	MethodSMI       = "nvidia-smi" // nvidia-smi --query-compute-apps
	MethodDRMFdinfo = "drm-fdinfo" // /proc/<pid>/fdinfo, drm-resident-vram*
)

// Measurement is what the sampling of one attempt found, beside the plan's
// estimate for the same settings. Sizes are bytes.
type Measurement struct {
	// PeakBytes is the largest amount the job's processes held on any one
	// device at one sample: the figure a per-device plan is compared with.
	PeakBytes int64 `json:"peak_bytes"`
	// TotalPeakBytes is the largest sum over all devices at one sample.
	TotalPeakBytes int64 `json:"total_peak_bytes"`
	// Devices is how many devices the job's processes were seen on.
	Devices int `json:"devices"`
	// Method says how the memory was read (nvml, nvidia-smi, drm-fdinfo).
	Method string `json:"method"`
	// Samples is how many readings were taken, IntervalMS their period.
	Samples    int   `json:"samples"`
	IntervalMS int64 `json:"interval_ms"`
	// Plan is the planner's estimate for the settings the attempt ran
	// with, when the user named the model (nil otherwise).
	Plan *Estimate `json:"plan,omitempty"`
}

// Estimate is the plan's answer for one attempt's settings: what
// `devctl recommend` computes for the model, mode, batch and precision the
// attempt ran with.
type Estimate struct {
	// Bytes is the plan's total per device (weights, gradients, optimizer
	// states, activations, KV cache and the runtime's overhead).
	Bytes int64 `json:"bytes"`
	// Model is the catalogue or Hugging Face name ("" for a config file or
	// a bare parameter count: a path is never recorded).
	Model  string `json:"model,omitempty"`
	Params int64  `json:"params"`
	Mode   string `json:"mode"`
	// Precision is the precision the estimate assumed.
	Precision string `json:"precision"`
	// Batch is the batch size the estimate assumed; BatchGiven says whether
	// it came from --batch-env (false: the planner's default of 1).
	Batch      int  `json:"batch"`
	BatchGiven bool `json:"batch_given"`
	Devices    int  `json:"devices"`
}

// Ratio is PeakBytes over the plan's estimate (0 when either is unknown).
func (m Measurement) Ratio() float64 {
	if m.Plan == nil || m.Plan.Bytes <= 0 || m.PeakBytes <= 0 {
		return 0
	}
	return float64(m.PeakBytes) / float64(m.Plan.Bytes)
}

// Settings names the batch and precision an estimate assumed, as the
// report and the history show them: "batch 8, bf16", or "batch 1 (not
// given), fp32".
func (e Estimate) Settings() string {
	b := fmt.Sprintf("batch %d", e.Batch)
	if !e.BatchGiven {
		b += " (not given)"
	}
	return b + ", " + e.Precision
}
