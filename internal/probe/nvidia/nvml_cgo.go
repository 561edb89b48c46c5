//go:build linux && cgo

package nvidia

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/devctl/devctl/internal/host"
)

// LocalNVML returns the NVML source for the running machine. Nothing is
// loaded until Query runs, so a CPU-only machine pays one failed dlopen.
func LocalNVML() host.NVML {
	return &Source{New: func() nvml.Interface { return nvml.New() }}
}

// Source answers host.NVML queries from an nvml.Interface.
type Source struct {
	New func() nvml.Interface
}

// Query initialises NVML, collects every answer, shuts NVML down and returns
// the Raw value as JSON. An init failure is an answer (Raw.InitRet), not an
// error. When ctx ends first, Query returns ctx.Err() and leaves the
// collection goroutine to finish on its own: an NVML call cannot be
// interrupted.
func (s *Source) Query(ctx context.Context) ([]byte, error) {
	ch := make(chan *Raw, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- &Raw{Version: RawVersion, Source: SourceNVML, NVMLError: fmt.Sprintf("NVML collection panicked: %v", p)}
			}
		}()
		ch <- Collect(ctx, s.New())
	}()
	select {
	case r := <-ch:
		return json.Marshal(r)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// p2pMaxGPUs bounds the pairwise P2P queries (n² calls).
const p2pMaxGPUs = 16

// Collect asks lib everything devctl and doctor use. Every call is guarded:
// a panic (a go-nvml mock with that method unset) becomes ERROR_NOT_SUPPORTED
// for that field, and calls newer than the installed library are skipped as
// ERROR_FUNCTION_NOT_FOUND rather than crashing on an unresolved symbol.
func Collect(ctx context.Context, lib nvml.Interface) *Raw {
	raw := &Raw{Version: RawVersion, Source: SourceNVML, GPUs: []GPU{}}
	initRet := callRet(lib.Init)
	raw.InitRet = &initRet
	if initRet != Success {
		return raw
	}
	defer callRet(lib.Shutdown)

	c := &collector{lib: lib, syms: map[string]bool{}}
	raw.DriverVersion = ask(nil, lib.SystemGetDriverVersion)
	raw.NVMLVersion = ask(nil, lib.SystemGetNVMLVersion)
	if c.has("nvmlSystemGetCudaDriverVersion_v2") {
		raw.CUDADriverVersion = ask(nil, lib.SystemGetCudaDriverVersion_v2)
	}
	if !raw.CUDADriverVersion.OK() {
		raw.CUDADriverVersion = ask(nil, lib.SystemGetCudaDriverVersion)
	}
	raw.DeviceCount = ask(nil, lib.DeviceGetCount)
	n, ok := raw.DeviceCount.Get()
	if !ok {
		return raw
	}
	handles := make([]nvml.Device, 0, n)
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			raw.Incomplete = true
			return raw
		}
		g, d := c.gpu(ctx, i)
		raw.GPUs = append(raw.GPUs, g)
		if g.HandleRet == Success && !g.Lost {
			handles = append(handles, d)
		} else {
			handles = append(handles, nil)
		}
	}
	if ctx.Err() != nil {
		raw.Incomplete = true
		return raw
	}
	if len(handles) > 1 && len(handles) <= p2pMaxGPUs && c.has("nvmlDeviceGetP2PStatus") {
		raw.P2P = c.p2p(ctx, handles)
	}
	if ctx.Err() != nil {
		raw.Incomplete = true
	}
	return raw
}

type collector struct {
	lib  nvml.Interface
	syms map[string]bool
}

// has reports whether the loaded library exports sym. When the
// implementation cannot say (a mock without LookupSymbol) it answers true:
// the call itself is still panic-guarded.
func (c *collector) has(sym string) (ok bool) {
	if v, seen := c.syms[sym]; seen {
		return v
	}
	defer func() {
		if recover() != nil {
			ok = true
		}
		c.syms[sym] = ok
	}()
	ext := c.lib.Extensions()
	if ext == nil {
		return true
	}
	return ext.LookupSymbol(sym) == nil
}

// callRet runs a call that only returns a code; a panic is ERROR_UNKNOWN.
func callRet(f func() nvml.Return) (ret Return) {
	defer func() {
		if recover() != nil {
			ret = ErrUnknown
		}
	}()
	return Return(f())
}

// ask runs one NVML call. A panic becomes ERROR_NOT_SUPPORTED; a lost GPU
// marks g.Lost so collection of that GPU stops.
func ask[T any](g *GPU, f func() (T, nvml.Return)) (a *Answer[T]) {
	defer func() {
		if recover() != nil {
			a = Fail[T](ErrNotSupported)
		}
		if g != nil && a.Ret == ErrGPUIsLost {
			g.Lost = true
		}
	}()
	v, ret := f()
	if ret != nvml.SUCCESS {
		return Fail[T](Return(ret))
	}
	return Ok(v)
}

// askSym is ask for a call that older libraries lack.
func askSym[T any](c *collector, g *GPU, sym string, f func() (T, nvml.Return)) *Answer[T] {
	if !c.has(sym) {
		return Fail[T](ErrFunctionNotFound)
	}
	return ask(g, f)
}

func (c *collector) gpu(ctx context.Context, i int) (GPU, nvml.Device) {
	g := GPU{Index: i}
	h := ask(nil, func() (nvml.Device, nvml.Return) { return c.lib.DeviceGetHandleByIndex(i) })
	g.HandleRet = h.Ret
	if !h.OK() || h.Value == nil {
		if h.OK() {
			g.HandleRet = ErrUnknown
		}
		g.Lost = g.HandleRet == ErrGPUIsLost
		return g, nil
	}
	d := h.Value
	steps := []func(){
		func() { g.Name = ask(&g, d.GetName) },
		func() { g.UUID = ask(&g, d.GetUUID) },
		func() {
			g.PCI = ask(&g, func() (PCIInfo, nvml.Return) {
				p, ret := d.GetPciInfo()
				id := cString(p.BusId[:])
				if id == "" {
					id = cString(p.BusIdLegacy[:])
				}
				return PCIInfo{BusID: id, DeviceID: p.PciDeviceId}, ret
			})
		},
		func() { g.MinorNumber = ask(&g, d.GetMinorNumber) },
		func() {
			g.MemoryV2 = askSym(c, &g, "nvmlDeviceGetMemoryInfo_v2", func() (Memory, nvml.Return) {
				m, ret := d.GetMemoryInfo_v2()
				r := m.Reserved
				return Memory{Total: m.Total, Free: m.Free, Used: m.Used, Reserved: &r}, ret
			})
			if !g.MemoryV2.OK() && !g.Lost {
				g.Memory = ask(&g, func() (Memory, nvml.Return) {
					m, ret := d.GetMemoryInfo()
					return Memory{Total: m.Total, Free: m.Free, Used: m.Used}, ret
				})
			}
		},
		func() {
			g.ComputeCapability = ask(&g, func() (ComputeCapability, nvml.Return) {
				ma, mi, ret := d.GetCudaComputeCapability()
				return ComputeCapability{Major: ma, Minor: mi}, ret
			})
		},
		func() {
			g.Architecture = askSym(c, &g, "nvmlDeviceGetArchitecture", func() (uint32, nvml.Return) {
				a, ret := d.GetArchitecture()
				return uint32(a), ret
			})
		},
		func() {
			g.Brand = ask(&g, func() (int, nvml.Return) { b, ret := d.GetBrand(); return int(b), ret })
		},
		func() { g.PCIeGenCurrent = ask(&g, d.GetCurrPcieLinkGeneration) },
		func() { g.PCIeGenMax = ask(&g, d.GetMaxPcieLinkGeneration) },
		func() {
			g.PCIeGenGPUMax = askSym(c, &g, "nvmlDeviceGetGpuMaxPcieLinkGeneration", d.GetGpuMaxPcieLinkGeneration)
		},
		func() { g.PCIeWidthCurrent = ask(&g, d.GetCurrPcieLinkWidth) },
		func() { g.PCIeWidthMax = ask(&g, d.GetMaxPcieLinkWidth) },
		func() {
			g.PersistenceMode = ask(&g, func() (int, nvml.Return) { m, ret := d.GetPersistenceMode(); return int(m), ret })
		},
		func() {
			g.MIGMode = askSym(c, &g, "nvmlDeviceGetMigMode", func() (ModePair, nvml.Return) {
				cur, pend, ret := d.GetMigMode()
				return ModePair{Current: cur, Pending: pend}, ret
			})
		},
		func() {
			g.ComputeMode = ask(&g, func() (int, nvml.Return) { m, ret := d.GetComputeMode(); return int(m), ret })
		},
		func() { g.PowerUsageMW = ask(&g, d.GetPowerUsage) },
		func() { g.PowerLimitMW = ask(&g, d.GetEnforcedPowerLimit) },
		func() { g.PowerDefaultLimitMW = ask(&g, d.GetPowerManagementDefaultLimit) },
		func() {
			g.TemperatureC = askSym(c, &g, "nvmlDeviceGetTemperature", func() (uint32, nvml.Return) { return d.GetTemperature(nvml.TEMPERATURE_GPU) })
		},
		func() {
			g.ClocksEventReasons = askSym(c, &g, "nvmlDeviceGetCurrentClocksEventReasons", d.GetCurrentClocksEventReasons)
			if !g.ClocksEventReasons.OK() && !g.Lost {
				// The pre-R535 name of the same bitmask.
				old := askSym(c, &g, "nvmlDeviceGetCurrentClocksThrottleReasons", d.GetCurrentClocksThrottleReasons)
				if old.OK() || g.ClocksEventReasons.Ret == ErrFunctionNotFound {
					g.ClocksEventReasons = old
				}
			}
		},
		func() {
			g.ECCMode = ask(&g, func() (ModePair, nvml.Return) {
				cur, pend, ret := d.GetEccMode()
				return ModePair{Current: int(cur), Pending: int(pend)}, ret
			})
		},
		func() {
			g.ECCVolatileUncorrected = ask(&g, func() (uint64, nvml.Return) {
				return d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
			})
		},
		func() {
			g.ECCAggregateUncorrected = ask(&g, func() (uint64, nvml.Return) {
				return d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC)
			})
		},
		func() {
			g.RetiredPagesPending = ask(&g, func() (int, nvml.Return) {
				s, ret := d.GetRetiredPagesPendingStatus()
				return int(s), ret
			})
		},
		func() {
			g.RemappedRows = askSym(c, &g, "nvmlDeviceGetRemappedRows", func() (RemappedRows, nvml.Return) {
				corr, unc, pending, failure, ret := d.GetRemappedRows()
				return RemappedRows{Correctable: corr, Uncorrectable: unc, Pending: pending, Failure: failure}, ret
			})
		},
		func() {
			g.Processes = ask(&g, func() ([]Process, nvml.Return) {
				ps, ret := d.GetComputeRunningProcesses()
				out := make([]Process, 0, len(ps))
				for _, p := range ps {
					out = append(out, Process{PID: p.Pid, UsedMemoryBytes: p.UsedGpuMemory})
				}
				return out, ret
			})
		},
		func() {
			g.Fabric = askSym(c, &g, "nvmlDeviceGetGpuFabricInfo", func() (Fabric, nvml.Return) {
				f, ret := d.GetGpuFabricInfo()
				return Fabric{State: int(f.State), Status: int(f.Status), CliqueID: f.CliqueId, ClusterUUID: clusterUUID(f.ClusterUuid)}, ret
			})
		},
	}
	for _, step := range steps {
		if g.Lost || ctx.Err() != nil {
			break
		}
		step()
	}
	return g, d
}

func (c *collector) p2p(ctx context.Context, handles []nvml.Device) []P2PPair {
	var out []P2PPair
	for a := 0; a < len(handles); a++ {
		for b := a + 1; b < len(handles); b++ {
			if ctx.Err() != nil {
				return out
			}
			da, db := handles[a], handles[b]
			if da == nil || db == nil {
				continue
			}
			pair := P2PPair{A: a, B: b}
			pair.Read = ask(nil, func() (int, nvml.Return) {
				s, ret := da.GetP2PStatus(db, nvml.P2P_CAPS_INDEX_READ)
				return int(s), ret
			})
			pair.NVLink = ask(nil, func() (int, nvml.Return) {
				s, ret := da.GetP2PStatus(db, nvml.P2P_CAPS_INDEX_NVLINK)
				return int(s), ret
			})
			out = append(out, pair)
		}
	}
	return out
}

func cString(b []int8) string {
	buf := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		buf = append(buf, byte(c))
	}
	return string(buf)
}

func clusterUUID(u [16]uint8) string {
	zero := true
	for _, b := range u {
		if b != 0 {
			zero = false
			break
		}
	}
	if zero {
		return ""
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
