package pci_test

// Tests across the accelerator drivers that share this package's walk: a
// CPU-only host costs one walk and nothing else, and default-device
// selection behaves through probe.Run on real fixture trees.

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/mps"
	"github.com/devctl/devctl/internal/probe/neuron"
	"github.com/devctl/devctl/internal/probe/rocm"
	"github.com/devctl/devctl/internal/probe/tpu"
	"github.com/devctl/devctl/internal/probe/xpu"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func accelDrivers() []probe.Driver {
	return []probe.Driver{rocm.New(), xpu.New(), tpu.New(), neuron.New(), mps.New()}
}

// recordingFS logs every path read, listed or linked.
type recordingFS struct {
	host.FS
	mu   sync.Mutex
	seen []string
}

func (r *recordingFS) note(op, name string) {
	r.mu.Lock()
	r.seen = append(r.seen, op+" "+name)
	r.mu.Unlock()
}

func (r *recordingFS) ReadFile(name string) ([]byte, error) {
	r.note("read", name)
	return r.FS.ReadFile(name)
}

func (r *recordingFS) ReadDir(name string) ([]fs.DirEntry, error) {
	r.note("list", name)
	return r.FS.ReadDir(name)
}

func (r *recordingFS) Readlink(name string) (string, error) {
	r.note("link", name)
	return r.FS.Readlink(name)
}

func fixture(name string) string { return filepath.Join("..", "..", "..", "testdata", "accel", name) }

func TestCPUOnlyHostCostsOneWalk(t *testing.T) {
	h := fakehost.RootHost(t, fixture("cpu-only"), nil)
	rec := &recordingFS{FS: h.FS}
	h.FS = rec
	_, outcomes, err := probe.Run(context.Background(), h, accelDrivers(), probe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		if o.Status.Status != probe.StatusAbsent {
			t.Errorf("%s: %s (%s), want absent", o.Status.Name, o.Status.Status, o.Status.Detail)
		}
	}
	lists := 0
	for _, s := range rec.seen {
		switch {
		case s == "list /sys/bus/pci/devices":
			lists++
		case strings.HasPrefix(s, "read /sys/bus/pci/devices/") && strings.HasSuffix(s, "/uevent"):
		default:
			t.Errorf("a CPU-only host made the drivers do %q", s)
		}
	}
	if lists != 1 {
		t.Errorf("the bus was listed %d times by five drivers, want 1", lists)
	}
}

func TestSelectionWithFixtures(t *testing.T) {
	tests := []struct {
		name      string
		tree      string
		opts      probe.Options
		chosen    string
		fellBack  bool
		wantErr   bool
		reasonHas string
	}{
		{"auto on a TPU host picks xla:0", "tpu-v6e-8", probe.Options{Preferred: "auto"}, "xla:0", false, false, "platform priority"},
		{"tpu is an alias of xla", "tpu-v6e-8", probe.Options{Preferred: "tpu"}, "xla:0", false, false, "requested xla"},
		{"a device id is honoured", "tpu-v6e-8", probe.Options{Preferred: "xla:5"}, "xla:5", false, false, "requested xla:5"},
		{"asking for cuda on a TPU host without fallback is an error", "tpu-v6e-8", probe.Options{Preferred: "cuda"}, "", false, true, ""},
		{"asking for cuda on a TPU host with fallback falls back to the TPU", "tpu-v6e-8", probe.Options{Preferred: "cuda", FallbackEnabled: true}, "xla:0", true, false, "cuda is not available"},
		{"platform priority can put xpu before rocm", "xpu-arc-bmg-igpu", probe.Options{PlatformPriority: []backend.Backend{"xpu", "cpu"}}, "xpu:0", false, false, "platform priority"},
		{"asking for rocm:4 on a four-partition MI308X falls back to rocm:0", "rocm-mi308x-cpx", probe.Options{Preferred: "rocm:4", FallbackEnabled: true}, "rocm:0", true, false, "rocm:4 is not available"},
		{"asking for neuron on a CPU-only host with fallback ends on the CPU", "cpu-only", probe.Options{Preferred: "neuron", FallbackEnabled: true}, "cpu", true, false, "neuron is not available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.RootHost(t, fixture(tt.tree), nil)
			rep, _, err := probe.Run(context.Background(), h, accelDrivers(), tt.opts)
			if tt.wantErr {
				if !errors.Is(err, probe.ErrDeviceUnavailable) {
					t.Fatalf("err = %v, want ErrDeviceUnavailable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := rep.Selection
			if s.Chosen != tt.chosen || s.FellBack != tt.fellBack || !strings.Contains(s.Reason, tt.reasonHas) {
				t.Errorf("selection = %+v", s)
			}
			if rep.Summary.DefaultDevice != tt.chosen {
				t.Errorf("summary default %q", rep.Summary.DefaultDevice)
			}
		})
	}
}
