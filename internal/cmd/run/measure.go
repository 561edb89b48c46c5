package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/cmdutil"
	"github.com/devctl/devctl/internal/devmem"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe/nvidia"
	"github.com/devctl/devctl/internal/supervise"
)

// Memory sources --memory-source accepts.
const (
	memAuto = "auto"
	memNVML = devmem.MethodNVML
	memSMI  = devmem.MethodSMI
	memDRM  = "drm"
	memOff  = "off"
)

var memSources = []string{memAuto, memNVML, memSMI, memDRM, memOff}

// openMemory is the production opener of memory sources: on the live
// Linux machine only (a replay has no processes of its own), NVML then
// nvidia-smi for CUDA, the kernel's DRM fdinfo for ROCm and Intel XPU.
func openMemory(f *cmdutil.Factory) func(method string, b backend.Backend, interval time.Duration) (devmem.Source, error) {
	return func(method string, b backend.Backend, interval time.Duration) (devmem.Source, error) {
		if f.Replay() || runtime.GOOS != "linux" {
			return nil, fmt.Errorf("%w: device memory is sampled on the live Linux machine only", devmem.ErrUnavailable)
		}
		var errs []error
		switch b {
		case backend.CUDA:
			if method == memAuto || method == memNVML {
				s, err := nvidia.ProcessMemory()
				if err == nil {
					return s, nil
				}
				errs = append(errs, err)
			}
			if method == memAuto || method == memSMI {
				path := "nvidia-smi"
				if f.Global != nil && f.Global.NvidiaSMI != "" {
					path = f.Global.NvidiaSMI
				}
				if p, err := exec.LookPath(path); err != nil {
					errs = append(errs, fmt.Errorf("%w: %v", devmem.ErrUnavailable, err))
				} else if s, err := devmem.StartSMI(p, interval); err != nil {
					errs = append(errs, err)
				} else {
					return s, nil
				}
			}
		case backend.ROCm, backend.XPU:
			if method == memAuto || method == memDRM {
				return &devmem.FDInfo{Job: newJob(), Link: func(name string) (string, error) { return os.Readlink("/proc/" + name) }}, nil
			}
		}
		if len(errs) == 0 {
			return nil, fmt.Errorf("%w: no way to read %s device memory per process (%s)", devmem.ErrUnavailable, b, method)
		}
		return nil, errors.Join(errs...)
	}
}

// newJob is devctl run's process tree: devctl itself (the subreaper of
// everything the job starts) and its descendants.
func newJob() *devmem.Job { return &devmem.Job{Proc: os.DirFS("/proc"), Root: os.Getpid()} }

// meter samples the device memory of each attempt, with one source per
// backend opened once for the run (NVML initialised once, one
// nvidia-smi stream started before the first attempt, so it is devctl's
// child and never the job's).
type meter struct {
	open     func(method string, b backend.Backend, interval time.Duration) (devmem.Source, error)
	method   string
	interval time.Duration
	isJob    func(pid int) bool
	sources  map[backend.Backend]devmem.Source
	failed   map[backend.Backend]error
}

// begin starts sampling an attempt on backend b; the function it returns
// stops it and gives the measurement (nil when nothing was measured), and
// why not.
func (m *meter) begin(ctx context.Context, b backend.Backend) func() (*devmem.Measurement, error) {
	none := func() (*devmem.Measurement, error) { return nil, nil }
	if m == nil || m.interval <= 0 || m.method == memOff || b == backend.CPU {
		return none // host memory is not device memory
	}
	src, ok := m.sources[b]
	if !ok {
		if err, failed := m.failed[b]; failed {
			return func() (*devmem.Measurement, error) { return nil, err }
		}
		var err error
		if src, err = m.open(m.method, b, m.interval); err != nil {
			m.failed[b] = err
			return func() (*devmem.Measurement, error) { return nil, err }
		}
		m.sources[b] = src
	}
	sctx, cancel := context.WithCancel(ctx)
	type result struct {
		m   devmem.Measurement
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := devmem.Sample(sctx, src, m.isJob, m.interval)
		done <- result{r, err}
	}()
	return func() (*devmem.Measurement, error) {
		cancel()
		select {
		case r := <-done:
			if r.err != nil {
				return nil, r.err
			}
			if r.m.Samples == 0 || r.m.PeakBytes == 0 {
				return nil, nil
			}
			return &r.m, nil
		case <-time.After(m.interval + 2*time.Second):
			// A hung NVML call: the attempt's result matters more.
			return nil, fmt.Errorf("the %s reading did not return", src.Method())
		}
	}
}

func (m *meter) close() {
	if m == nil {
		return
	}
	for _, s := range m.sources {
		_ = s.Close()
	}
}

// estimate is the plan's memory per device for the settings the next
// attempt runs with: the model, mode and devices of the plan, the batch and
// precision the ladder has now. nil without a model, or once the run left
// the planned device.
func (o *Options) estimate(l *supervise.Ladder) *devmem.Estimate {
	res := o.planned
	if res == nil || !l.OnFirst() {
		return nil
	}
	p := res.Plan
	given := l.Batch() > 0
	if given {
		p.BatchSize, p.MicroBatch = l.Batch(), 0
	}
	if s := l.Precision(); s != "" {
		if v, err := capability.ParsePrecision(s); err == nil {
			p.Precision = v
		}
	}
	b, err := oomsim.Estimate(p)
	if err != nil || b.TotalBytes <= 0 {
		return nil
	}
	e := &devmem.Estimate{Bytes: b.TotalBytes, Params: p.Model.Params, Mode: string(p.Mode), Precision: string(p.Precision),
		Batch: max(p.BatchSize, 1), BatchGiven: given, Devices: max(p.Devices, 1)}
	// --model is a catalogue name or a Hugging Face id (ORG/NAME); a
	// --model-config path is never recorded.
	e.Model = o.Model
	return e
}
