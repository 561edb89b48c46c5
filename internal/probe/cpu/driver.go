// Package cpu is the cpu probe driver. (Placeholder being replaced.)
package cpu

import (
	"context"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes cpu.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "cpu" }

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	return probe.Result{}, probe.Absent("not implemented yet")
}
