package doctor

import (
	"github.com/devctl/devctl/internal/probe/nvidia"
)

// nvidiaFromProbe adapts the nvidia driver's raw answers (nvidia.Answers,
// also when the driver failed) into NVState.
func nvidiaFromProbe(e *Env) (*NVState, string) {
	o := e.Outcome("nvidia")
	if o == nil {
		return nil, "the nvidia probe did not run"
	}
	raw, ok := nvidia.Answers(e.Host)
	if !ok {
		return nil, o.Status.Detail
	}
	return FromRaw(raw), o.Status.Detail
}

// FromRaw converts the nvidia driver's recorded answers to NVState.
func FromRaw(r *nvidia.Raw) *NVState {
	s := &NVState{Source: r.Source}
	if r.InitRet != nil {
		s.InitTried = true
		s.InitCode = int(*r.InitRet)
		s.InitOK = *r.InitRet == nvidia.Success
		if !s.InitOK {
			s.InitReturn = r.InitRet.Name()
			s.InitMeaning = r.InitRet.Meaning()
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
		d := NVDevice{
			Index:                   g.Index,
			Minor:                   value(g.MinorNumber),
			Persistence:             mapValue(g.PersistenceMode, isOne),
			ClockEventReasons:       value(g.ClocksEventReasons),
			PowerLimitMW:            value(g.PowerLimitMW),
			DefaultPowerMW:          value(g.PowerDefaultLimitMW),
			ECCEnabled:              mapValue(g.ECCMode, func(m nvidia.ModePair) bool { return m.Current == 1 }),
			ECCVolatileUncorrected:  value(g.ECCVolatileUncorrected),
			ECCAggregateUncorrected: value(g.ECCAggregateUncorrected),
			RetiredPagesPending:     mapValue(g.RetiredPagesPending, func(n int) bool { return n != 0 }),
			LinkWidthCur:            value(g.PCIeWidthCurrent),
			LinkWidthMax:            value(g.PCIeWidthMax),
			LinkGenCur:              value(g.PCIeGenCurrent),
			LinkGenMax:              value(g.PCIeGenMax),
		}
		if v, ok := g.Name.Get(); ok {
			d.Name = v
		}
		if v, ok := g.UUID.Get(); ok {
			d.UUID = v
		}
		if v, ok := g.PCI.Get(); ok {
			d.BusID = v.BusID
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
		s.Devices = append(s.Devices, d)
	}
	return s
}

// value is an NVML answer as NVState keeps it: nil when NVML did not say.
func value[T any](a *nvidia.Answer[T]) *T {
	return mapValue(a, func(v T) T { return v })
}

// mapValue is value with the answer converted (a mode number to a bool).
func mapValue[T, U any](a *nvidia.Answer[T], conv func(T) U) *U {
	v, ok := a.Get()
	if !ok {
		return nil
	}
	u := conv(v)
	return &u
}

func isOne(v int) bool { return v == 1 }
