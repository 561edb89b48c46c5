//go:build linux && cgo

package nvidia

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	mockserver "github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/devctl/devctl/internal/devmem"
)

// devctl run's sampling over a DGX H100 mock: a real child of the test
// holds memory on GPUs 0 and 1 (compute and graphics lists, the larger
// figure kept), a stranger on GPU 0; GPU 2 answers "not supported", GPU 3
// is lost. The peak is the child's busiest GPU.
func TestProcessMemoryOfARealChildOnADGXH100Mock(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	pid := uint32(child.Process.Pid)
	const gib = 1 << 30

	srv := dgxh100.New()
	dev := func(i int) *mockserver.Device { return srv.Devices[i].(*mockserver.Device) }
	var calls int
	dev(0).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		calls++
		return []nvml.ProcessInfo{{Pid: pid, UsedGpuMemory: uint64(calls) * gib}, {Pid: 1, UsedGpuMemory: 60 * gib}}, nvml.SUCCESS
	}
	dev(0).GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: pid, UsedGpuMemory: gib / 2}}, nvml.SUCCESS
	}
	dev(1).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: pid, UsedGpuMemory: 2 * gib}, {Pid: pid, UsedGpuMemory: ^uint64(0)}}, nvml.SUCCESS
	}
	dev(2).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	dev(3).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }

	src, err := OpenProcessMemory(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	job := &devmem.Job{Proc: os.DirFS("/proc"), Root: os.Getpid()}
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	m, err := devmem.Sample(ctx, src, job.Has, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m.Method != devmem.MethodNVML || m.Samples < 3 || m.Devices != 2 {
		t.Fatalf("measurement %+v", m)
	}
	if want := int64(calls) * gib; m.PeakBytes != want || m.TotalPeakBytes != want+2*gib {
		t.Errorf("peak %d total %d, want the child's GPU 0 at the last reading (%d) and GPU 1's 2 GiB beside it", m.PeakBytes, m.TotalPeakBytes, want)
	}
	if err := src.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestProcessMemoryWithoutNVML(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	if _, err := OpenProcessMemory(lib); !errors.Is(err, devmem.ErrUnavailable) {
		t.Errorf("NVML without its library: %v, want ErrUnavailable", err)
	}
}

// One NVML reading of a DGX H100 mock whose 8 GPUs each list 4 processes,
// the job's 2 among them: go-nvml's mock stands in for the driver, so this
// is devctl's side of the cost (calls, matching), not the driver's.
func BenchmarkProcessMemoryReading(b *testing.B) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	srv := dgxh100.New()
	for i := range srv.Devices {
		d := srv.Devices[i].(*mockserver.Device)
		pids := []nvml.ProcessInfo{{Pid: uint32(child.Process.Pid), UsedGpuMemory: 1 << 30}, {Pid: uint32(os.Getpid()), UsedGpuMemory: 1 << 20}, {Pid: 1, UsedGpuMemory: 1 << 30}, {Pid: 2, UsedGpuMemory: 1 << 30}}
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return pids, nvml.SUCCESS }
		d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	}
	src, err := OpenProcessMemory(srv)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	job := &devmem.Job{Proc: os.DirFS("/proc"), Root: os.Getpid()}
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		rs, err := src.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range rs {
			for _, u := range r {
				job.Has(u.PID)
			}
		}
	}
}
