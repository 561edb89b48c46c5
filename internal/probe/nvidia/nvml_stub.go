//go:build !(linux && cgo)

package nvidia

import "github.com/devctl/devctl/internal/host"

// LocalNVML returns nil: go-nvml needs Linux and cgo. Without it the driver
// falls back to nvidia-smi, and a snapshot's recorded NVML answers still
// replay through host.NVML.
func LocalNVML() host.NVML { return nil }
