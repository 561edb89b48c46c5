package doctor

import (
	"context"
	"fmt"
	"strconv"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/explain"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
)

// LogReport is the explanation of a failed run's log, grounded in this
// machine: devctl's JSON schema for `log`.
type LogReport struct {
	Category    string          `json:"category"`
	Device      string          `json:"device"`
	MessageID   string          `json:"message_id"`
	Title       string          `json:"title"`
	Explanation string          `json:"explanation"`
	Evidence    []string        `json:"evidence"`
	Line        int             `json:"line,omitempty"`
	Numbers     explain.Numbers `json:"numbers"`
	// Fixes are ordered: fixes from this machine's failing checks first
	// (they quote its actual state), then the category's general fixes,
	// each action once (sameFix in fixes.go).
	Fixes      []string `json:"fixes"`
	Confidence float64  `json:"confidence"`
	// DecidedBy says which part of the classifier named the category:
	// rule, catalogue (the libraries' error catalogues), model (the
	// learned fallback, answering only above its threshold) or none
	// (category unknown). Confidence is the rule's or the model's.
	DecidedBy string `json:"decided_by"`
	// Machine lists facts about this machine that bear on the failure
	// (actual driver and runtime versions, device memory, other processes).
	Machine []string `json:"machine,omitempty"`
	// Checks are the ids of the checks run to ground the explanation.
	Checks []string `json:"checks"`
	// OOMPlan is the first plan that fits, for out-of-memory logs when
	// --model-params was given.
	OOMPlan *OOMPlan `json:"oom_plan,omitempty"`
}

// OOMPlan is the oomsim ladder's answer for an out-of-memory log.
type OOMPlan struct {
	ModelParams int64            `json:"model_params"`
	Device      string           `json:"device"`
	BudgetBytes int64            `json:"budget_bytes"`
	Fits        bool             `json:"fits"`
	Changes     []string         `json:"changes"`
	Plan        oomsim.Plan      `json:"plan"`
	Memory      oomsim.Breakdown `json:"memory"`
}

// relatedChecks maps a log category to the checks that can confirm or rule
// out its usual causes on this machine.
var relatedChecks = map[explain.Category][]string{
	explain.CategoryOutOfMemory:           {"gpu.memory_in_use", "host.cgroup_limits", "host.shm_size", "env.pytorch", "apple.mps_watermark"},
	explain.CategoryXLAResourceExhausted:  {"env.xla", "gpu.memory_in_use", "tpu.in_use"},
	explain.CategoryCUDADriverMismatch:    {"nvidia.driver_loaded", "nvidia.nvml_init", "nvidia.version_match", "cuda.framework_runtime"},
	explain.CategoryNoGPUFound:            {"nvidia.driver_loaded", "nvidia.nvml_init", "nvidia.version_match", "nvidia.device_nodes", "container.gpu_access", "env.visible_devices", "cuda.framework_runtime", "rocm.kfd_access", "platform.wsl2", "platform.jetson"},
	explain.CategoryCUDALaunchFailure:     {"nvidia.ecc", "nvidia.throttle", "env.visible_devices", "cuda.framework_runtime"},
	explain.CategoryCUDNNError:            {"cuda.framework_runtime", "nvidia.version_match", "gpu.memory_in_use"},
	explain.CategoryNCCLError:             {"multi_gpu.p2p_iommu", "host.shm_size", "nvidia.fabric_manager", "env.visible_devices", "pcie.link_width"},
	explain.CategoryXLATPUInit:            {"tpu.in_use", "tpu.env_bounds", "tpu.hugepages", "env.xla"},
	explain.CategoryROCmHIPError:          {"rocm.kfd_access", "env.visible_devices"},
	explain.CategoryMPSPlaceholderStorage: {"apple.macos_version", "env.pytorch"},
	explain.CategoryMPSUnsupportedOp:      {"apple.rosetta", "apple.macos_version", "env.pytorch"},
	explain.CategoryUnsupportedDType:      {"apple.macos_version", "cuda.framework_runtime", "cpu.avx2"},
	explain.CategoryDeviceMismatch:        {"env.visible_devices"},
	explain.CategoryDTypeMismatch:         {"env.pytorch"},
}

// RelatedChecks returns the checks to run for a log category (all checks
// for other/unknown: nothing narrows the search).
func RelatedChecks(all []*Check, c explain.Category) []*Check {
	ids, ok := relatedChecks[c]
	if !ok {
		return all
	}
	sel, err := Select(all, ids)
	if err != nil {
		return all
	}
	return sel
}

// BuildLogReport renders an explanation in lang and grounds it in the
// checks' results and the machine's state.
//
// env nil means the explanation alone: no checks ran and nothing about this
// machine is added (the log may come from another one).
func BuildLogReport(ctx context.Context, e explain.Explanation, msg LogMessage, env *Env, results []Result, lang Lang) *LogReport {
	lr := &LogReport{
		Category: string(e.Category), Device: string(e.Device), MessageID: e.MessageID,
		Title: msg.Title, Explanation: msg.Explanation, Evidence: e.Evidence, Line: e.Line,
		Numbers: e.Numbers, Confidence: e.Confidence, DecidedBy: string(e.DecidedBy),
	}
	if lr.Evidence == nil {
		lr.Evidence = []string{}
	}
	var fixes []fix
	for _, r := range results {
		lr.Checks = append(lr.Checks, r.ID)
		if (r.Status == Fail || r.Status == Warn) && r.Fix != "" {
			fixes = append(fixes, fix{r.FixID, r.Fix})
		}
	}
	for i, f := range msg.Fixes {
		if len(results) > 0 && runsDoctor(f) {
			continue // the checks it would run have just run
		}
		fixes = append(fixes, fix{messageFixID(msg.ID, i), f})
	}
	lr.Fixes = distinctFixes(fixes)
	if lr.Checks == nil {
		lr.Checks = []string{}
	}
	if env != nil {
		lr.Machine = machineFacts(ctx, e, env, lang)
	}
	return lr
}

// LogMessage is the catalogue text of an explanation in one language. ID
// is the catalogue entry the text came from (a sub-id's parent when the
// sub-id has no entry): it names the fixes for de-duplication.
type LogMessage struct {
	ID          string
	Title       string
	Explanation string
	Fixes       []string
}

// machineFacts states what this machine says about the failure's subject.
func machineFacts(ctx context.Context, e explain.Explanation, env *Env, lang Lang) []string {
	var out []string
	switch e.Category {
	case explain.CategoryCUDADriverMismatch, explain.CategoryNoGPUFound, explain.CategoryCUDNNError, explain.CategoryCUDALaunchFailure:
		if c, d, src := driverMaxCUDA(ctx, env); c != "" {
			out = append(out, Fact("driver_cuda", Args{"driver": orUnknown(d), "cuda": c, "source": src}, lang))
		} else if env.nvidiaPresent() {
			out = append(out, Fact("driver_unknown", nil, lang))
		} else if e.Device == explain.DeviceCUDA || e.Device == explain.DeviceAny {
			out = append(out, Fact("no_nvidia", nil, lang))
		}
		for _, rt := range FindFrameworkRuntimes(ctx, env) {
			out = append(out, Fact("framework_cuda", Args{"package": rt.Package, "cuda": rt.CUDA, "source": rt.Source}, lang))
		}
		if v := e.Numbers.RuntimeVersion; v != nil {
			out = append(out, Fact("log_runtime", Args{"version": *v}, lang))
		}
	}
	if e.Category == explain.CategoryOutOfMemory || e.Category == explain.CategoryXLAResourceExhausted {
		for _, d := range deviceFor(env, backend.Backend(e.Device), e.Numbers.DeviceIndex) {
			if d.TotalMemoryMB != nil {
				a := Args{"id": d.ID, "name": d.Name, "total": strconv.FormatInt(int64(*d.TotalMemoryMB), 10)}
				if d.FreeMemoryMB != nil {
					a["free"] = strconv.FormatInt(int64(*d.FreeMemoryMB), 10)
				}
				out = append(out, Fact("device_memory", a, lang))
			}
		}
		if nv, _ := env.NVIDIA(ctx); nv != nil && nv.Usable {
			for _, d := range nv.Devices {
				var used uint64
				for _, p := range d.Processes {
					used += p.UsedMiB
				}
				if len(d.Processes) > 0 {
					out = append(out, Fact("other_processes", Args{"gpu": devName(d), "count": strconv.Itoa(len(d.Processes)), "mib": strconv.FormatUint(used, 10)}, lang))
				}
			}
		}
	}
	if len(out) == 0 && env.Report != nil && env.Report.Summary.DefaultDevice != "" {
		out = append(out, Fact("default_device", Args{"device": env.Report.Summary.DefaultDevice, "backend": string(env.Report.Summary.Backend)}, lang))
	}
	return out
}

// deviceFor finds the probe devices a log's device refers to.
func deviceFor(env *Env, be backend.Backend, index *int) []probe.Device {
	if env.Report == nil {
		return nil
	}
	if be == "any" || be == "" {
		be = env.Report.Summary.Backend
	}
	var out []probe.Device
	for _, d := range env.Report.Devices {
		if d.Backend != be {
			continue
		}
		if index != nil && d.Index != *index {
			continue
		}
		out = append(out, d)
	}
	return out
}

// OOMOptions are the inputs of the ladder for an out-of-memory log.
type OOMOptions struct {
	Params    int64
	Mode      oomsim.Mode          // "" means training
	Precision capability.Precision // "" means the config's or bf16/fp16 by support
	Fraction  float64
	Fallback  bool
}

// PlanOOM runs the oomsim ladder against the device the log ran out of
// memory on (its total from the log, else from the probe).
func PlanOOM(e explain.Explanation, env *Env, o OOMOptions) (*OOMPlan, error) {
	be := backend.Backend(e.Device)
	var dev *probe.Device
	if ds := deviceFor(env, be, e.Numbers.DeviceIndex); len(ds) > 0 {
		dev = &ds[0]
		be = dev.Backend
	}
	if be == "any" || be == "" {
		be = "cpu"
	}
	var total int64
	switch {
	case e.Numbers.TotalBytes != nil && *e.Numbers.TotalBytes > 0:
		total = *e.Numbers.TotalBytes
	case dev != nil && dev.TotalMemoryMB != nil:
		total = *dev.TotalMemoryMB << 20
	default:
		return nil, fmt.Errorf("the device's memory is unknown: neither the log nor the probe states it")
	}
	frac := o.Fraction
	if frac <= 0 || frac > 1 {
		frac = 1
	}
	// A log from another machine (or a device the probe cannot see): assume
	// the precisions that be's current devices run.
	sup := capability.Support{FP16: true, BF16: be != "cpu", Int8: be == "cuda", Int4: be == "cuda"}
	name := string(be)
	if dev != nil {
		sup = capability.Support{FP16: dev.SupportsFP16, BF16: dev.SupportsBF16, Int8: dev.Supports8Bit, FP8: dev.SupportsFP8, Int4: dev.Supports8Bit}
		name = dev.ID + " " + dev.Name
	}
	mode := o.Mode
	if mode == "" {
		mode = oomsim.Training
	}
	prec := o.Precision
	if prec == "" || prec == capability.Auto {
		prec = capability.FP32
	}
	plan := oomsim.Plan{
		Model:     oomsim.Model{Name: "model", Params: o.Params, Arch: oomsim.AssumeArch(o.Params)},
		Mode:      mode,
		Precision: prec,
	}
	avail := 1
	if env.Report != nil && be != "cpu" {
		avail = max(1, len(env.Devices(be)))
	}
	// One budget with recommend: what the framework can allocate (the
	// log's total capacity), the runtime overhead counted once in the
	// estimate. The host's memory lets the ladder reach its CPU rung.
	d := oomsim.Device{Name: name, Backend: be, BudgetBytes: oomsim.Allocatable(int64(float64(total)*frac), 0), Support: sup, Available: avail}
	if env.Report != nil && env.Report.Host.MemoryTotalMB != nil && *env.Report.Host.MemoryTotalMB > 0 {
		d.HostBudgetBytes = *env.Report.Host.MemoryTotalMB << 20
	}
	tr, err := oomsim.Ladder(plan, d, oomsim.LadderOptions{CPUFallback: o.Fallback})
	if err != nil {
		return nil, err
	}
	p := &OOMPlan{ModelParams: o.Params, Device: name, BudgetBytes: d.BudgetBytes, Fits: tr.Fits, Plan: tr.Final, Memory: tr.FinalMemory}
	for _, s := range tr.Steps {
		// Up to the change that fits, then the changes put back as
		// not needed ("undo ...").
		p.Changes = append(p.Changes, s.Change)
	}
	if p.Changes == nil {
		p.Changes = []string{}
	}
	return p, nil
}
