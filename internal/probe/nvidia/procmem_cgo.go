//go:build linux && cgo

package nvidia

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/devctl/devctl/internal/devmem"
)

// ProcessMemory opens the machine's NVML for devctl run's memory sampling:
// initialised once, read once a second, shut down at the end. It returns
// devmem.ErrUnavailable when NVML cannot start (no driver, no library).
func ProcessMemory() (devmem.Source, error) { return OpenProcessMemory(nvml.New()) }

// OpenProcessMemory is ProcessMemory over any nvml.Interface (go-nvml's
// mocks in tests).
func OpenProcessMemory(lib nvml.Interface) (devmem.Source, error) {
	if ret := callRet(lib.Init); ret != Success {
		return nil, fmt.Errorf("%w: NVML: %v", devmem.ErrUnavailable, ret)
	}
	n := ask(nil, lib.DeviceGetCount)
	count, ok := n.Get()
	if !ok {
		callRet(lib.Shutdown)
		return nil, fmt.Errorf("%w: NVML device count: %v", devmem.ErrUnavailable, n.Ret)
	}
	s := &procMem{lib: lib}
	for i := 0; i < count; i++ {
		h := ask(nil, func() (nvml.Device, nvml.Return) { return lib.DeviceGetHandleByIndex(i) })
		if h.OK() && h.Value != nil {
			s.devices = append(s.devices, h.Value)
			s.keys = append(s.keys, strconv.Itoa(i))
		}
	}
	return s, nil
}

type procMem struct {
	mu      sync.Mutex
	lib     nvml.Interface
	devices []nvml.Device
	keys    []string
	closed  bool
}

func (s *procMem) Method() string { return devmem.MethodNVML }

// notAvailable is NVML_VALUE_NOT_AVAILABLE: usedGpuMemory on platforms
// that cannot attribute memory to a process (Windows WDDM).
const notAvailable = ^uint64(0)

// Read lists the compute and graphics processes of every GPU. A process in
// both lists is counted once per GPU, by the larger figure. A device that
// fails (a lost GPU) is skipped for this reading.
func (s *procMem) Read(context.Context) ([]devmem.Reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil
	}
	var r devmem.Reading
	for i, d := range s.devices {
		per := map[uint32]uint64{}
		for _, list := range []func() ([]nvml.ProcessInfo, nvml.Return){d.GetComputeRunningProcesses, d.GetGraphicsRunningProcesses} {
			ps := ask(nil, list)
			if !ps.OK() {
				continue
			}
			for _, p := range ps.Value {
				if p.UsedGpuMemory == notAvailable {
					continue
				}
				per[p.Pid] = max(per[p.Pid], p.UsedGpuMemory)
			}
		}
		for pid, b := range per {
			r = append(r, devmem.Usage{PID: int(pid), Device: s.keys[i], Bytes: int64(min(b, 1<<62))})
		}
	}
	return []devmem.Reading{r}, nil
}

func (s *procMem) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		callRet(s.lib.Shutdown)
	}
	return nil
}
