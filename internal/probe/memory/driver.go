// Package memory is the memory probe driver. (Placeholder being replaced.)
package memory

import (
	"context"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes memory.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "memory" }

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	return probe.Result{}, probe.Absent("not implemented yet")
}
