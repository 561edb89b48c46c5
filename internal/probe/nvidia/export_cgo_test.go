//go:build linux && cgo

package nvidia

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/devctl/devctl/internal/host"
)

// FromInterface wraps an nvml.Interface, such as go-nvml's dgxa100 mock, as
// a host.NVML, so tests replay a machine.
func FromInterface(lib nvml.Interface) host.NVML {
	return &Source{New: func() nvml.Interface { return lib }}
}
