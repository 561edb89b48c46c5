package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// nvml returns NVIDIA state for checks that need NVML answers, or the skip
// finding to return when there are none.
func nvml(ctx context.Context, e *Env) (*NVState, *Finding) {
	if !e.nvidiaPresent() {
		f := skip("skip_no_nvidia", nil)
		return nil, &f
	}
	nv, why := e.NVIDIA(ctx)
	if nv == nil || !nv.Usable {
		if nv != nil && nv.InitTried && !nv.InitOK {
			why = "NVML init returned " + nv.InitReturn
		}
		if why == "" {
			why = "no NVML source"
		}
		f := skip("skip_no_nvml", Args{"why": why})
		return nil, &f
	}
	return nv, nil
}

func devName(d NVDevice) string {
	s := "GPU " + strconv.Itoa(d.Index)
	if d.BusID != "" {
		s += " (" + d.BusID + ")"
	}
	return s
}

var checkNVMLInit = &Check{
	ID:  "nvidia.nvml_init",
	Run: runNVMLInit,
}

func runNVMLInit(ctx context.Context, e *Env) Finding {
	if !e.nvidiaPresent() {
		return skip("skip_no_nvidia", nil)
	}
	nv, why := e.NVIDIA(ctx)
	if nv == nil || !nv.InitTried {
		if why == "" {
			why = "no NVML source"
		}
		return skip("skip_no_nvml", Args{"why": why})
	}
	if nv.InitOK {
		return Finding{Status: Pass, Msg: "pass", Args: Args{"source": nv.Source, "driver": orUnknown(nv.DriverVersion), "count": strconv.Itoa(len(nv.Devices))}}
	}
	ret := strings.TrimPrefix(nv.InitReturn, "ERROR_")
	args := Args{"ret": nv.InitReturn, "code": strconv.Itoa(nv.InitCode), "meaning": orUnknown(nv.InitMeaning)}
	ev := []Evidence{{"nvmlInit_v2", fmt.Sprintf("%s (%d)", nv.InitReturn, nv.InitCode)}}
	msg := "other"
	switch ret {
	case "LIBRARY_NOT_FOUND", "DRIVER_NOT_LOADED", "NO_PERMISSION", "LIB_RM_VERSION_MISMATCH":
		msg = ret
	case "TIMEOUT":
		msg = "TIMEOUT"
	case "UNKNOWN":
		if inContainer(e) != "" {
			msg = "UNKNOWN_CONTAINER"
		}
	}
	return Finding{Status: Fail, Msg: msg, Args: args, Evidence: ev}
}

var checkPersistence = &Check{
	ID: "nvidia.persistence_mode",
	Run: func(ctx context.Context, e *Env) Finding {
		nv, sk := nvml(ctx, e)
		if sk != nil {
			return *sk
		}
		const sock = "/var/run/nvidia-persistenced/socket"
		daemon := e.Host.Exists(sock) || e.Host.Exists("/run/nvidia-persistenced/socket")
		known := 0
		for _, d := range nv.Devices {
			if d.Persistence == nil {
				continue
			}
			known++
			if !*d.Persistence && !daemon {
				return Finding{Status: Warn, Msg: "off", Args: Args{"gpu": devName(d)},
					Evidence: []Evidence{{"DeviceGetPersistenceMode(" + strconv.Itoa(d.Index) + ")", "disabled"}, {sock, "missing"}}}
			}
		}
		if known == 0 {
			if daemon {
				return Finding{Status: Pass, Msg: "daemon", Args: Args{"socket": sock}}
			}
			return Finding{Status: Skip, Msg: "unknown"}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(known)}}
	},
}

var checkFabric = &Check{
	ID:  "nvidia.fabric_manager",
	Run: runFabric,
}

// Fabric states (nvmlGpuFabricState_t).
var fabricStates = map[int]string{0: "NOT_SUPPORTED", 1: "NOT_STARTED", 2: "IN_PROGRESS", 3: "COMPLETED"}

func runFabric(ctx context.Context, e *Env) Finding {
	switches := 0
	for _, d := range e.pciOf(VendorNVIDIA, false) {
		if d.Class>>8 == 0x0680 {
			switches++
		}
	}
	nv, _ := e.NVIDIA(ctx)
	withFabric := 0
	if nv != nil && nv.Usable {
		for _, d := range nv.Devices {
			if d.FabricState == nil || *d.FabricState == 0 {
				continue
			}
			withFabric++
			st, status := *d.FabricState, 0
			if d.FabricStatus != nil {
				status = *d.FabricStatus
			}
			if st != 3 || status != 0 {
				name := fabricStates[st]
				if name == "" {
					name = strconv.Itoa(st)
				}
				return Finding{Status: Fail, Msg: "not_ready", Args: Args{"gpu": devName(d), "state": name, "status": strconv.Itoa(status)},
					Evidence: []Evidence{{"DeviceGetGpuFabricInfo(" + strconv.Itoa(d.Index) + ")", fmt.Sprintf("state %s status %d", name, status)}}}
			}
		}
	}
	if withFabric > 0 {
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(withFabric)}}
	}
	if switches == 0 {
		return skip("skip_no_nvswitch", nil)
	}
	ev := []Evidence{{pciRoot, fmt.Sprintf("%d NVSwitch function(s)", switches)}}
	if pid := findProcess(e, "nv-fabricmanager"); pid != "" {
		return Finding{Status: Pass, Msg: "pass_process", Args: Args{"switches": strconv.Itoa(switches), "pid": pid}, Evidence: ev}
	}
	ev = append(ev, Evidence{"/proc/*/comm", "no nv-fabricmanager"})
	return Finding{Status: Fail, Msg: "no_process", Args: Args{"switches": strconv.Itoa(switches)}, Evidence: ev}
}

// findProcess scans /proc/<pid>/comm for a process name and returns its pid.
func findProcess(e *Env, comm string) string {
	ents, err := e.Host.FS.ReadDir("/proc")
	if err != nil {
		return ""
	}
	for _, ent := range ents {
		if !isDigits(ent.Name()) {
			continue
		}
		if c, err := e.Host.ReadString("/proc/" + ent.Name() + "/comm"); err == nil && c == comm {
			return ent.Name()
		}
	}
	return ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Clock event reasons (nvmlClocksEventReason*), bit -> name.
var clockReasons = []struct {
	bit  uint64
	name string
}{
	{0x1, "GpuIdle"}, {0x2, "ApplicationsClocksSetting"}, {0x4, "SwPowerCap"}, {0x8, "HwSlowdown"},
	{0x10, "SyncBoost"}, {0x20, "SwThermalSlowdown"}, {0x40, "HwThermalSlowdown"}, {0x80, "HwPowerBrakeSlowdown"},
	{0x100, "DisplayClockSetting"},
}

// DecodeClockReasons names the set bits of a clocks-event mask.
func DecodeClockReasons(mask uint64) []string {
	var out []string
	for _, r := range clockReasons {
		if mask&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	return out
}

var checkThrottle = &Check{
	ID:  "nvidia.throttle",
	Run: runThrottle,
}

func runThrottle(ctx context.Context, e *Env) Finding {
	return perGPU(ctx, e, func(d NVDevice) (bool, *Finding) {
		if d.ClockEventReasons == nil {
			return false, nil
		}
		mask := *d.ClockEventReasons
		ev := []Evidence{{"DeviceGetCurrentClocksEventReasons(" + strconv.Itoa(d.Index) + ")", fmt.Sprintf("0x%x", mask)}}
		if hw := mask & (0x08 | 0x20 | 0x40 | 0x80); hw != 0 {
			return true, &Finding{Status: Fail, Msg: "hw", Args: Args{"gpu": devName(d), "reasons": strings.Join(DecodeClockReasons(hw), ", ")}, Evidence: ev}
		}
		capped := d.PowerLimitMW != nil && d.DefaultPowerMW != nil && *d.PowerLimitMW < *d.DefaultPowerMW
		if mask&0x04 == 0 && !capped {
			return true, nil
		}
		limit, def := "?", "?"
		if d.PowerLimitMW != nil {
			limit = strconv.Itoa(int(*d.PowerLimitMW / 1000))
		}
		if d.DefaultPowerMW != nil {
			def = strconv.Itoa(int(*d.DefaultPowerMW / 1000))
		}
		reasons := strings.Join(DecodeClockReasons(mask&0x04), ", ")
		if reasons == "" {
			reasons = "limit below default"
		}
		return true, &Finding{Status: Warn, Msg: "power", Args: Args{"gpu": devName(d), "reasons": reasons, "limit": limit, "default": def, "index": strconv.Itoa(d.Index)}, Evidence: ev}
	})
}

// perGPU runs judge on each GPU NVML reported on and sums up: judge says
// whether NVML answered what it needs (known) and what it found, if
// anything. The first failure wins at once, else the first warning; no GPU
// with an answer is the check's "unknown" skip, and otherwise its "pass"
// with their count.
func perGPU(ctx context.Context, e *Env, judge func(NVDevice) (known bool, f *Finding)) Finding {
	nv, sk := nvml(ctx, e)
	if sk != nil {
		return *sk
	}
	known := 0
	var warn *Finding
	for _, d := range nv.Devices {
		k, f := judge(d)
		if !k {
			continue
		}
		known++
		switch {
		case f == nil:
		case f.Status == Fail:
			return *f
		case warn == nil:
			warn = f
		}
	}
	if warn != nil {
		return *warn
	}
	if known == 0 {
		return Finding{Status: Skip, Msg: "unknown"}
	}
	return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(known)}}
}

var checkECC = &Check{
	ID:  "nvidia.ecc",
	Run: runECC,
}

func runECC(ctx context.Context, e *Env) Finding {
	return perGPU(ctx, e, func(d NVDevice) (bool, *Finding) {
		if d.RemapFailure == nil && d.ECCVolatileUncorrected == nil && d.RetiredPagesPending == nil && d.RemapPending == nil && d.ECCAggregateUncorrected == nil {
			return false, nil
		}
		idx := strconv.Itoa(d.Index)
		if d.RemapFailure != nil && *d.RemapFailure {
			return true, &Finding{Status: Fail, Msg: "remap_failure", Args: Args{"gpu": devName(d)}, Evidence: []Evidence{{"DeviceGetRemappedRows(" + idx + ")", "failure=true"}}}
		}
		if d.ECCVolatileUncorrected != nil && *d.ECCVolatileUncorrected > 0 {
			n := strconv.FormatUint(*d.ECCVolatileUncorrected, 10)
			return true, &Finding{Status: Fail, Msg: "volatile", Args: Args{"gpu": devName(d), "count": n, "index": idx}, Evidence: []Evidence{{"DeviceGetTotalEccErrors(" + idx + ", UNCORRECTED, VOLATILE)", n}}}
		}
		var what []string
		var ev []Evidence
		if d.RetiredPagesPending != nil && *d.RetiredPagesPending {
			what = append(what, "retired pages")
			ev = append(ev, Evidence{"DeviceGetRetiredPagesPendingStatus(" + idx + ")", "pending"})
		}
		if d.RemapPending != nil && *d.RemapPending {
			what = append(what, "row remaps")
			ev = append(ev, Evidence{"DeviceGetRemappedRows(" + idx + ")", "pending=true"})
		}
		if len(what) > 0 {
			return true, &Finding{Status: Warn, Msg: "pending", Args: Args{"gpu": devName(d), "what": strings.Join(what, " and "), "index": idx}, Evidence: ev}
		}
		if d.ECCAggregateUncorrected != nil && *d.ECCAggregateUncorrected > 4 {
			n := strconv.FormatUint(*d.ECCAggregateUncorrected, 10)
			return true, &Finding{Status: Warn, Msg: "aggregate", Args: Args{"gpu": devName(d), "count": n}, Evidence: []Evidence{{"DeviceGetTotalEccErrors(" + idx + ", UNCORRECTED, AGGREGATE)", n}}}
		}
		return true, nil
	})
}

var checkMIG = &Check{
	ID: "nvidia.mig_pending",
	Run: func(ctx context.Context, e *Env) Finding {
		nv, sk := nvml(ctx, e)
		if sk != nil {
			return *sk
		}
		known := 0
		var on []string
		onoff := func(v int) string {
			if v == 1 {
				return "enabled"
			}
			return "disabled"
		}
		for _, d := range nv.Devices {
			if d.MIGCurrent == nil || d.MIGPending == nil {
				continue
			}
			known++
			idx := strconv.Itoa(d.Index)
			if *d.MIGCurrent != *d.MIGPending {
				return Finding{Status: Warn, Msg: "pending", Args: Args{"gpu": devName(d), "current": onoff(*d.MIGCurrent), "pending": onoff(*d.MIGPending), "index": idx},
					Evidence: []Evidence{{"DeviceGetMigMode(" + idx + ")", fmt.Sprintf("current %d, pending %d", *d.MIGCurrent, *d.MIGPending)}}}
			}
			if *d.MIGCurrent == 1 {
				on = append(on, devName(d))
			}
		}
		if known == 0 {
			return skip("skip_no_mig", nil)
		}
		if len(on) > 0 {
			return Finding{Status: Pass, Msg: "pass_on", Args: Args{"gpus": strings.Join(on, ", ")}}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(known)}}
	},
}

var checkMemoryInUse = &Check{
	ID: "gpu.memory_in_use",
	Run: func(ctx context.Context, e *Env) Finding {
		nv, sk := nvml(ctx, e)
		if sk != nil {
			return *sk
		}
		for _, d := range nv.Devices {
			var used uint64
			var pids []string
			for _, p := range d.Processes {
				used += p.UsedMiB
				pids = append(pids, strconv.FormatUint(uint64(p.PID), 10))
			}
			total := uint64(0)
			if d.MemoryTotalMiB != nil {
				total = *d.MemoryTotalMiB
			}
			// A process holding more than 256 MiB or 5% of the GPU is real
			// work, not a display server's sliver.
			if len(d.Processes) > 0 && (used > 256 || (total > 0 && used*20 > total)) {
				idx := strconv.Itoa(d.Index)
				return Finding{Status: Warn, Msg: "busy", Args: Args{"gpu": devName(d), "procs": strconv.Itoa(len(d.Processes)), "used": strconv.FormatUint(used, 10), "total": strconv.FormatUint(total, 10), "pids": strings.Join(pids, ",")},
					Evidence: []Evidence{{"DeviceGetComputeRunningProcesses(" + idx + ")", fmt.Sprintf("%d process(es), %d MiB", len(d.Processes), used)}}}
			}
		}
		return Finding{Status: Pass, Msg: "pass", Args: Args{"count": strconv.Itoa(len(nv.Devices))}}
	},
}
