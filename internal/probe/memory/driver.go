// Package memory is the memory probe driver: how much RAM and swap the
// machine has, how much of it this process may use (cgroup limits, walking
// up the tree), and how big /dev/shm is (PyTorch DataLoader workers share
// tensors through it; Docker's 64 MiB default breaks them). The facts are
// read by internal/hw/meminfo; this driver puts them in the report.
package memory

import (
	"context"
	"strings"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/meminfo"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/units"
)

// Driver probes memory.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "memory" }

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	f, err := meminfo.Read(h)
	if err != nil {
		return probe.Result{}, err
	}
	hi := &probe.HostInfo{
		MemoryTotalMB: probe.MB(f.Total),
		MemoryAvailMB: probe.MB(f.Available),
		SwapTotalMB:   probe.MB(f.SwapTotal),
		MemoryLimitMB: probe.MB(f.Limit),
		ShmTotalMB:    probe.MB(f.Shm),
	}
	return probe.Result{Host: hi, Source: f.Source, Detail: detail(f)}, nil
}

func detail(f meminfo.Facts) string {
	var parts []string
	if f.Total != nil {
		parts = append(parts, units.Bytes(*f.Total).Format(units.MiB, 0)+" RAM")
	}
	if f.Limit != nil {
		parts = append(parts, "cgroup limit "+units.Bytes(*f.Limit).Format(units.MiB, 0))
	}
	if f.Shm != nil {
		s := "/dev/shm " + units.Bytes(*f.Shm).Format(units.MiB, 0)
		if f.ShmDefaulted {
			s += " (tmpfs default)"
		}
		if f.ShmUnlimited {
			s += " (size=0: no limit but RAM)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
