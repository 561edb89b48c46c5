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
	ID:    "nvidia.nvml_init",
	Title: Text{EN: "NVML loads and initialises", PL: "Biblioteka NVML ładuje się i inicjalizuje"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "NVML initialised ({source}): driver {driver}, {count} GPU(s)", PL: "NVML zainicjalizowana ({source}): sterownik {driver}, kart: {count}"}},
		"LIBRARY_NOT_FOUND": {
			Detail: Text{EN: "NVML returned {ret} ({code}): {meaning}", PL: "NVML zwróciła {ret} ({code}): {meaning}"},
			Fix:    Text{EN: "install the driver's user-space libraries matching the kernel module (`sudo apt install libnvidia-compute-550`); on WSL2 make sure /usr/lib/wsl/lib is in the library path (`export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH`)", PL: "zainstaluj biblioteki użytkownika sterownika zgodne z modułem jądra (`sudo apt install libnvidia-compute-550`); w WSL2 dodaj /usr/lib/wsl/lib do ścieżki bibliotek (`export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH`)"},
		},
		"DRIVER_NOT_LOADED": {
			Detail: Text{EN: "NVML returned {ret} ({code}): {meaning}", PL: "NVML zwróciła {ret} ({code}): {meaning}"},
			Fix:    Text{EN: "load the kernel module: `sudo modprobe nvidia` (see nvidia.driver_loaded)", PL: "załaduj moduł jądra: `sudo modprobe nvidia` (zob. nvidia.driver_loaded)"},
		},
		"NO_PERMISSION": {
			Detail: Text{EN: "NVML returned {ret} ({code}): {meaning}", PL: "NVML zwróciła {ret} ({code}): {meaning}"},
			Fix:    Text{EN: "make /dev/nvidia* read/write for you: `sudo usermod -aG video $USER` and log in again (see nvidia.device_nodes)", PL: "nadaj sobie prawo odczytu/zapisu do /dev/nvidia*: `sudo usermod -aG video $USER` i zaloguj się ponownie (zob. nvidia.device_nodes)"},
		},
		"LIB_RM_VERSION_MISMATCH": {
			Detail: Text{EN: "NVML returned {ret} ({code}): {meaning}", PL: "NVML zwróciła {ret} ({code}): {meaning}"},
			Fix:    Text{EN: "reboot so the kernel module matches the upgraded libraries: `sudo reboot` (see nvidia.version_match)", PL: "uruchom ponownie, aby moduł jądra odpowiadał zaktualizowanym bibliotekom: `sudo reboot` (zob. nvidia.version_match)"},
		},
		"UNKNOWN_CONTAINER": {
			Detail: Text{EN: "NVML returned {ret} ({code}) inside a container: {meaning}; the container has most likely lost its GPU cgroup access (systemd daemon-reload on the host)", PL: "NVML zwróciła {ret} ({code}) w kontenerze: {meaning}; kontener najpewniej stracił dostęp do GPU w cgroup (systemd daemon-reload na hoście)"},
			Fix:    Text{EN: "restart the container; the host admin should run `sudo nvidia-ctk system create-dev-char-symlinks --create-all` or switch to CDI (see container.gpu_access)", PL: "uruchom kontener ponownie; administrator hosta powinien wykonać `sudo nvidia-ctk system create-dev-char-symlinks --create-all` albo przejść na CDI (zob. container.gpu_access)"},
		},
		"TIMEOUT": {
			Detail: Text{EN: "NVML did not answer in time ({ret}): the driver is probably wedged", PL: "NVML nie odpowiedziała na czas ({ret}): sterownik prawdopodobnie się zawiesił"},
			Fix:    Text{EN: "collect `sudo nvidia-bug-report.sh` and reboot the machine", PL: "zbierz `sudo nvidia-bug-report.sh` i uruchom maszynę ponownie"},
		},
		"other": {
			Detail: Text{EN: "NVML returned {ret} ({code}): {meaning}", PL: "NVML zwróciła {ret} ({code}): {meaning}"},
			Fix:    Text{EN: "run `nvidia-smi` to see the same error, then check `sudo dmesg | grep -i nvrm` for the kernel's reason", PL: "uruchom `nvidia-smi`, aby zobaczyć ten sam błąd, a następnie sprawdź `sudo dmesg | grep -i nvrm`"},
		},
	},
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

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

var checkPersistence = &Check{
	ID:    "nvidia.persistence_mode",
	Title: Text{EN: "NVIDIA persistence mode on", PL: "Tryb persistence NVIDIA włączony"},
	Messages: map[string]Message{
		"pass":   {Detail: Text{EN: "persistence mode on for {count} GPU(s)", PL: "tryb persistence włączony dla {count} kart(y)"}},
		"daemon": {Detail: Text{EN: "nvidia-persistenced is running ({socket})", PL: "nvidia-persistenced działa ({socket})"}},
		"off": {
			Detail: Text{EN: "persistence mode is off on {gpu} and nvidia-persistenced is not running: the driver tears down between jobs, so nvidia-smi and the first CUDA call are slow (30 s → 2 s on AKS)", PL: "tryb persistence jest wyłączony na {gpu}, a nvidia-persistenced nie działa: sterownik jest zwalniany między zadaniami, więc nvidia-smi i pierwsze wywołanie CUDA są wolne (30 s → 2 s na AKS)"},
			Fix:    Text{EN: "enable the daemon: `sudo systemctl enable --now nvidia-persistenced` (or `sudo nvidia-smi -pm 1`)", PL: "włącz demona: `sudo systemctl enable --now nvidia-persistenced` (lub `sudo nvidia-smi -pm 1`)"},
		},
		"unknown": {Detail: Text{EN: "NVML did not report the persistence mode", PL: "NVML nie podała trybu persistence"}},
	},
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
	ID:    "nvidia.fabric_manager",
	Title: Text{EN: "NVSwitch fabric manager ready", PL: "Menedżer sieci NVSwitch gotowy"},
	Messages: map[string]Message{
		"skip_no_nvswitch": {Detail: Text{EN: "no NVSwitch on the PCI bus (0x10de bridge class 0x0680) and no fabric state from NVML", PL: "brak NVSwitch na magistrali PCI (most 0x10de klasy 0x0680) i brak stanu sieci z NVML"}},
		"pass":             {Detail: Text{EN: "fabric registration completed on {count} GPU(s)", PL: "rejestracja w sieci NVSwitch zakończona na {count} kartach"}},
		"pass_process":     {Detail: Text{EN: "{switches} NVSwitch(es), nv-fabricmanager running (pid {pid})", PL: "{switches} NVSwitch, nv-fabricmanager działa (pid {pid})"}},
		"not_ready": {
			Detail: Text{EN: "{gpu} fabric state {state}, status {status}: CUDA fails with error 802 \"system not yet initialized\" until the fabric manager finishes", PL: "{gpu}: stan sieci {state}, status {status}: CUDA zgłasza błąd 802 \"system not yet initialized\", dopóki menedżer sieci nie skończy"},
			Fix:    Text{EN: "install and start the fabric manager matching the driver: `sudo apt install nvidia-fabricmanager-550 && sudo systemctl enable --now nvidia-fabricmanager`", PL: "zainstaluj i uruchom menedżer sieci zgodny ze sterownikiem: `sudo apt install nvidia-fabricmanager-550 && sudo systemctl enable --now nvidia-fabricmanager`"},
		},
		"no_process": {
			Detail: Text{EN: "{switches} NVSwitch(es) on the PCI bus but no nv-fabricmanager process: CUDA fails with error 802 \"system not yet initialized\"", PL: "{switches} NVSwitch na magistrali PCI, ale brak procesu nv-fabricmanager: CUDA zgłasza błąd 802 \"system not yet initialized\""},
			Fix:    Text{EN: "install and start the fabric manager matching the driver: `sudo apt install nvidia-fabricmanager-550 && sudo systemctl enable --now nvidia-fabricmanager`", PL: "zainstaluj i uruchom menedżer sieci zgodny ze sterownikiem: `sudo apt install nvidia-fabricmanager-550 && sudo systemctl enable --now nvidia-fabricmanager`"},
		},
	},
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
	ID:    "nvidia.throttle",
	Title: Text{EN: "No thermal or power throttling", PL: "Brak dławienia termicznego i zasilania"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "no slowdown reasons active on {count} GPU(s)", PL: "brak aktywnych przyczyn spowolnienia na {count} kartach"}},
		"hw": {
			Detail: Text{EN: "{gpu} is slowed down: {reasons}", PL: "{gpu} jest spowolniona: {reasons}"},
			Fix:    Text{EN: "check cooling and power: `nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER`; clean airflow, reseat power cables; HwSlowdown with normal temperatures means a PSU or board fault", PL: "sprawdź chłodzenie i zasilanie: `nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER`; popraw przepływ powietrza, sprawdź kable zasilania; HwSlowdown przy normalnej temperaturze oznacza usterkę zasilacza lub karty"},
		},
		"power": {
			Detail: Text{EN: "{gpu} is power-capped: {reasons} (limit {limit} W, default {default} W)", PL: "{gpu} ma ograniczoną moc: {reasons} (limit {limit} W, domyślnie {default} W)"},
			Fix:    Text{EN: "restore the default power limit: `sudo nvidia-smi -i {index} -pl {default}`", PL: "przywróć domyślny limit mocy: `sudo nvidia-smi -i {index} -pl {default}`"},
		},
		"unknown": {Detail: Text{EN: "NVML did not report clock event reasons", PL: "NVML nie podała przyczyn zmian zegarów"}},
	},
	Run: runThrottle,
}

func runThrottle(ctx context.Context, e *Env) Finding {
	nv, sk := nvml(ctx, e)
	if sk != nil {
		return *sk
	}
	known := 0
	var warn *Finding
	for _, d := range nv.Devices {
		if d.ClockEventReasons == nil {
			continue
		}
		known++
		mask := *d.ClockEventReasons
		ev := []Evidence{{"DeviceGetCurrentClocksEventReasons(" + strconv.Itoa(d.Index) + ")", fmt.Sprintf("0x%x", mask)}}
		if hw := mask & (0x08 | 0x20 | 0x40 | 0x80); hw != 0 {
			return Finding{Status: Fail, Msg: "hw", Args: Args{"gpu": devName(d), "reasons": strings.Join(DecodeClockReasons(hw), ", ")}, Evidence: ev}
		}
		capped := d.PowerLimitMW != nil && d.DefaultPowerMW != nil && *d.PowerLimitMW < *d.DefaultPowerMW
		if (mask&0x04 != 0 || capped) && warn == nil {
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
			warn = &Finding{Status: Warn, Msg: "power", Args: Args{"gpu": devName(d), "reasons": reasons, "limit": limit, "default": def, "index": strconv.Itoa(d.Index)}, Evidence: ev}
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
	ID:    "nvidia.ecc",
	Title: Text{EN: "No ECC errors, pending page retirement or row remaps", PL: "Brak błędów ECC, oczekujących wycofań stron i remapowań wierszy"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "no uncorrectable ECC errors or pending remaps on {count} GPU(s)", PL: "brak nienaprawialnych błędów ECC i oczekujących remapowań na {count} kartach"}},
		"remap_failure": {
			Detail: Text{EN: "{gpu} reports a row-remapping failure: the memory has run out of spare rows", PL: "{gpu} zgłasza nieudane remapowanie wiersza: pamięć nie ma już zapasowych wierszy"},
			Fix:    Text{EN: "drain the node and open an RMA with the vendor (attach `sudo nvidia-bug-report.sh`)", PL: "wycofaj węzeł z użycia i zgłoś reklamację (RMA) u dostawcy (dołącz `sudo nvidia-bug-report.sh`)"},
		},
		"volatile": {
			Detail: Text{EN: "{gpu} has {count} volatile uncorrectable ECC error(s) since the last driver load", PL: "{gpu} ma {count} nienaprawialnych błędów ECC od ostatniego załadowania sterownika"},
			Fix:    Text{EN: "stop jobs on this GPU and reset it (`sudo nvidia-smi -r -i {index}`) or reboot; if errors return, open an RMA", PL: "zatrzymaj zadania na tej karcie i zresetuj ją (`sudo nvidia-smi -r -i {index}`) albo uruchom ponownie; jeśli błędy wrócą, zgłoś RMA"},
		},
		"pending": {
			Detail: Text{EN: "{gpu} has {what} pending: the fix takes effect only after a GPU reset", PL: "{gpu} ma oczekujące {what}: naprawa zadziała dopiero po resecie karty"},
			Fix:    Text{EN: "reset the GPU when idle: `sudo nvidia-smi -r -i {index}` (or reboot)", PL: "zresetuj kartę, gdy jest bezczynna: `sudo nvidia-smi -r -i {index}` (lub uruchom ponownie)"},
		},
		"aggregate": {
			Detail: Text{EN: "{gpu} has {count} aggregate uncorrectable ECC errors over its life (more than 4 is the RMA guideline)", PL: "{gpu} ma łącznie {count} nienaprawialnych błędów ECC (powyżej 4 to próg RMA)"},
			Fix:    Text{EN: "watch it with `nvidia-smi -q -d ECC,ROW_REMAPPER` and plan an RMA with the vendor", PL: "obserwuj kartę (`nvidia-smi -q -d ECC,ROW_REMAPPER`) i zaplanuj RMA u dostawcy"},
		},
		"unknown": {Detail: Text{EN: "NVML did not report ECC or remapping state (consumer GPUs have no ECC)", PL: "NVML nie podała stanu ECC ani remapowania (karty konsumenckie nie mają ECC)"}},
	},
	Run: runECC,
}

func runECC(ctx context.Context, e *Env) Finding {
	nv, sk := nvml(ctx, e)
	if sk != nil {
		return *sk
	}
	known := 0
	var warn *Finding
	for _, d := range nv.Devices {
		idx := strconv.Itoa(d.Index)
		if d.RemapFailure != nil || d.ECCVolatileUncorrected != nil || d.RetiredPagesPending != nil || d.RemapPending != nil || d.ECCAggregateUncorrected != nil {
			known++
		}
		if d.RemapFailure != nil && *d.RemapFailure {
			return Finding{Status: Fail, Msg: "remap_failure", Args: Args{"gpu": devName(d)}, Evidence: []Evidence{{"DeviceGetRemappedRows(" + idx + ")", "failure=true"}}}
		}
		if d.ECCVolatileUncorrected != nil && *d.ECCVolatileUncorrected > 0 {
			n := strconv.FormatUint(*d.ECCVolatileUncorrected, 10)
			return Finding{Status: Fail, Msg: "volatile", Args: Args{"gpu": devName(d), "count": n, "index": idx}, Evidence: []Evidence{{"DeviceGetTotalEccErrors(" + idx + ", UNCORRECTED, VOLATILE)", n}}}
		}
		if warn != nil {
			continue
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
			warn = &Finding{Status: Warn, Msg: "pending", Args: Args{"gpu": devName(d), "what": strings.Join(what, " and "), "index": idx}, Evidence: ev}
			continue
		}
		if d.ECCAggregateUncorrected != nil && *d.ECCAggregateUncorrected > 4 {
			n := strconv.FormatUint(*d.ECCAggregateUncorrected, 10)
			warn = &Finding{Status: Warn, Msg: "aggregate", Args: Args{"gpu": devName(d), "count": n}, Evidence: []Evidence{{"DeviceGetTotalEccErrors(" + idx + ", UNCORRECTED, AGGREGATE)", n}}}
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

var checkMIG = &Check{
	ID:    "nvidia.mig_pending",
	Title: Text{EN: "MIG mode applied (no reset pending)", PL: "Tryb MIG zastosowany (bez oczekującego resetu)"},
	Messages: map[string]Message{
		"pass":        {Detail: Text{EN: "MIG mode current = pending on {count} MIG-capable GPU(s)", PL: "tryb MIG bieżący = oczekujący na {count} kartach z MIG"}},
		"pass_on":     {Detail: Text{EN: "MIG is on for {gpus}: a CUDA process sees one MIG device; select it with CUDA_VISIBLE_DEVICES=MIG-<uuid>", PL: "MIG jest włączony dla {gpus}: proces CUDA widzi jedno urządzenie MIG; wybierz je przez CUDA_VISIBLE_DEVICES=MIG-<uuid>"}},
		"skip_no_mig": {Detail: Text{EN: "no MIG-capable GPU reported by NVML", PL: "NVML nie zgłasza kart z obsługą MIG"}},
		"pending": {
			Detail: Text{EN: "{gpu} MIG mode is {current} but {pending} is pending: the change applies only after a GPU reset", PL: "{gpu}: tryb MIG to {current}, ale oczekuje {pending}: zmiana zadziała dopiero po resecie karty"},
			Fix:    Text{EN: "stop processes on the GPU and reset it: `sudo nvidia-smi -r -i {index}` (or reboot)", PL: "zatrzymaj procesy na karcie i zresetuj ją: `sudo nvidia-smi -r -i {index}` (lub uruchom ponownie)"},
		},
	},
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
	ID:    "gpu.memory_in_use",
	Title: Text{EN: "GPU memory not held by other processes", PL: "Pamięć GPU nie jest zajęta przez inne procesy"},
	Messages: map[string]Message{
		"pass": {Detail: Text{EN: "no compute processes hold GPU memory on {count} GPU(s)", PL: "żaden proces nie zajmuje pamięci na {count} kartach"}},
		"busy": {
			Detail: Text{EN: "{gpu}: {procs} process(es) hold {used} MiB of {total} MiB (pids {pids}; host PIDs even inside a container)", PL: "{gpu}: {procs} proces(y) zajmują {used} MiB z {total} MiB (pid {pids}; to PID-y hosta nawet w kontenerze)"},
			Fix:    Text{EN: "see who they are with `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv`; stop them, or pick a free GPU with CUDA_VISIBLE_DEVICES", PL: "sprawdź, czyje to procesy: `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv`; zatrzymaj je albo wybierz wolną kartę przez CUDA_VISIBLE_DEVICES"},
		},
	},
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
