package doctor

import (
	"context"
	"sync"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/config"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/kernlog"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/software"
)

// Env is what every check receives: the machine, the probe report made once
// for all checks, and the configuration. Facts several checks need (the PCI
// walk, NVIDIA state) are computed once, on first use.
type Env struct {
	Host *host.Host
	// Report and Outcomes come from one probe run; Report may be nil when
	// the probe could not run (checks then rely on the Host alone).
	Report   *probe.Report
	Outcomes []probe.Outcome
	// Config is the effective configuration, or nil when it failed to load.
	Config *config.Config
	// ConfigErr is why the configuration failed to load (env.devctl reports it).
	ConfigErr error

	pciOnce sync.Once
	pci     []pci.Device

	klOnce sync.Once
	kl     kernlog.Log

	swOnce sync.Once
	sw     *probe.Software

	nvOnce sync.Once
	nv     *NVState
	nvWhy  string

	// NVIDIAFunc, when set, replaces how NVIDIA state is obtained (tests).
	NVIDIAFunc func(ctx context.Context, e *Env) (*NVState, string)
}

// Outcome returns the probe outcome of a driver by name, or nil.
func (e *Env) Outcome(name string) *probe.Outcome {
	for i := range e.Outcomes {
		if e.Outcomes[i].Status.Name == name {
			return &e.Outcomes[i]
		}
	}
	return nil
}

// PCI returns the machine's PCI functions from devctl's shared PCI walk
// (memoised per Host, so the probe drivers and doctor walk the bus once).
// A missing bus is no devices.
func (e *Env) PCI() []pci.Device {
	e.pciOnce.Do(func() { e.pci, _ = pci.Scan(e.Host) })
	return e.pci
}

// NVIDIA returns the NVIDIA management state, or nil with the reason when no
// NVML answers are available.
func (e *Env) NVIDIA(ctx context.Context) (*NVState, string) {
	e.nvOnce.Do(func() {
		f := e.NVIDIAFunc
		if f == nil {
			f = nvidiaState
		}
		e.nv, e.nvWhy = f(ctx, e)
	})
	return e.nv, e.nvWhy
}

// Devices returns probe devices of a backend.
func (e *Env) Devices(b backend.Backend) []probe.Device {
	if e.Report == nil {
		return nil
	}
	var out []probe.Device
	for _, d := range e.Report.Devices {
		if d.Backend == b {
			out = append(out, d)
		}
	}
	return out
}

// Vendor IDs devctl recognises on the PCI bus (the pci package's).
const (
	VendorNVIDIA = pci.VendorNVIDIA
	VendorAMD    = pci.VendorAMD
	VendorIntel  = pci.VendorIntel
	VendorGoogle = pci.VendorGoogle
	VendorAmazon = pci.VendorAmazon
)

// pciRoot is where sysfs lists PCI functions.
const pciRoot = pci.DevicesDir

// pciOf returns the functions of a vendor that are display devices (or any
// class when display is false).
func (e *Env) pciOf(vendor uint16, display bool) []pci.Device {
	var out []pci.Device
	for _, d := range e.PCI() {
		if d.Vendor == vendor && (!display || d.IsDisplay()) {
			out = append(out, d)
		}
	}
	return out
}

// Software returns the probe's software facts. Without a probe report (a
// failed probe, or tests that build an Env by hand) it collects them once
// with the probe's own code, so doctor never parses them differently.
func (e *Env) Software(ctx context.Context) *probe.Software {
	e.swOnce.Do(func() {
		if e.Report != nil && e.Report.Software != nil {
			e.sw = e.Report.Software
			return
		}
		if e.Host != nil {
			e.sw = software.Collect(ctx, e.Host)
		}
	})
	return e.sw
}
