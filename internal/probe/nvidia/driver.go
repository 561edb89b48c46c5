// Package nvidia is the nvidia probe driver. (Placeholder being replaced.)
package nvidia

import (
	"context"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes nvidia.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "nvidia" }

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	return probe.Result{}, probe.Absent("not implemented yet")
}

// LocalNVML returns the NVML source for the running machine (nil without cgo).
func LocalNVML() host.NVML { return nil }
