package doctor

import (
	"github.com/devctl/devctl/internal/probe/nvidia"
)

// nvidiaFromProbe adapts the nvidia driver's raw answers (Result.Raw is a
// *nvidia.Raw, also when the driver failed) into NVState.
func nvidiaFromProbe(e *Env) (*NVState, string) {
	o := e.Outcome("nvidia")
	if o == nil {
		return nil, "the nvidia probe did not run"
	}
	raw, ok := o.Result.Raw.(*nvidia.Raw)
	if !ok || raw == nil {
		return nil, o.Status.Detail
	}
	return FromRaw(raw), o.Status.Detail
}

// FromRaw converts the nvidia driver's recorded answers to NVState.
func FromRaw(r *nvidia.Raw) *NVState {
	s := &NVState{Source: r.Source}
	if r.InitRet != nil {
		s.InitTried = true
		s.InitCode = *r.InitRet
		s.InitOK = *r.InitRet == nvidia.Success
		if !s.InitOK {
			s.InitReturn = nvidia.ReturnName(*r.InitRet)
			s.InitMeaning = nvidia.ReturnMeaning(*r.InitRet)
		}
	} else if r.NVMLError != "" && r.Source == nvidia.SourceNVML {
		// NVML was asked but gave no return code: it hung or broke.
		s.InitTried = true
		s.InitReturn, s.InitCode, s.InitMeaning = "TIMEOUT", -1, r.NVMLError
	}
	s.Usable = len(r.GPUs) > 0 && (r.Usable() || r.Source == nvidia.SourceNVIDIASMI)
	if v, ok := r.DriverVersion.Get(); ok {
		s.DriverVersion = v
	}
	if v, ok := r.CUDADriverVersion.Get(); ok {
		s.CUDADriverVersion = v
	}
	for _, g := range r.GPUs {
		d := NVDevice{Index: g.Index}
		if v, ok := g.Name.Get(); ok {
			d.Name = v
		}
		if v, ok := g.UUID.Get(); ok {
			d.UUID = v
		}
		if v, ok := g.PCI.Get(); ok {
			d.BusID = v.BusID
		}
		if v, ok := g.MinorNumber.Get(); ok {
			d.Minor = &v
		}
		if v, ok := g.PersistenceMode.Get(); ok {
			on := v == 1
			d.Persistence = &on
		}
		if v, ok := g.ClocksEventReasons.Get(); ok {
			d.ClockEventReasons = &v
		}
		if v, ok := g.PowerLimitMW.Get(); ok {
			d.PowerLimitMW = &v
		}
		if v, ok := g.PowerDefaultLimitMW.Get(); ok {
			d.DefaultPowerMW = &v
		}
		if v, ok := g.ECCMode.Get(); ok {
			on := v.Current == 1
			d.ECCEnabled = &on
		}
		if v, ok := g.ECCVolatileUncorrected.Get(); ok {
			d.ECCVolatileUncorrected = &v
		}
		if v, ok := g.ECCAggregateUncorrected.Get(); ok {
			d.ECCAggregateUncorrected = &v
		}
		if v, ok := g.RetiredPagesPending.Get(); ok {
			p := v != 0
			d.RetiredPagesPending = &p
		}
		if v, ok := g.RemappedRows.Get(); ok {
			p, f := v.Pending, v.Failure
			d.RemapPending, d.RemapFailure = &p, &f
		}
		if v, ok := g.MIGMode.Get(); ok {
			c, p := v.Current, v.Pending
			d.MIGCurrent, d.MIGPending = &c, &p
		}
		mem, ok := g.MemoryV2.Get()
		if !ok {
			mem, ok = g.Memory.Get()
		}
		if ok {
			t, u := mem.Total>>20, mem.Used>>20
			d.MemoryTotalMiB, d.MemoryUsedMiB = &t, &u
		}
		if v, ok := g.Processes.Get(); ok {
			for _, p := range v {
				d.Processes = append(d.Processes, NVProcess{PID: p.PID, UsedMiB: p.UsedMemoryBytes >> 20})
			}
		}
		if v, ok := g.Fabric.Get(); ok {
			st, status := v.State, v.Status
			d.FabricState, d.FabricStatus = &st, &status
		}
		if v, ok := g.PCIeWidthCurrent.Get(); ok {
			d.LinkWidthCur = &v
		}
		if v, ok := g.PCIeWidthMax.Get(); ok {
			d.LinkWidthMax = &v
		}
		if v, ok := g.PCIeGenCurrent.Get(); ok {
			d.LinkGenCur = &v
		}
		if v, ok := g.PCIeGenMax.Get(); ok {
			d.LinkGenMax = &v
		}
		s.Devices = append(s.Devices, d)
	}
	return s
}
