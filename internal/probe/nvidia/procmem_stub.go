//go:build !(linux && cgo)

package nvidia

import (
	"fmt"

	"github.com/devctl/devctl/internal/devmem"
)

// ProcessMemory needs go-nvml (Linux and cgo): elsewhere devctl run reads
// nvidia-smi instead.
func ProcessMemory() (devmem.Source, error) {
	return nil, fmt.Errorf("%w: NVML needs a linux cgo build", devmem.ErrUnavailable)
}
