// Package neuron is the neuron probe driver. (Placeholder being replaced.)
package neuron

import (
	"context"

	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes neuron.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "neuron" }

// Probe implements probe.Driver.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	return probe.Result{}, probe.Absent("not implemented yet")
}
