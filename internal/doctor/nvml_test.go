package doctor

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/nvidia"
)

// nvEnv is a machine with a CUDA device whose NVML answers are devs.
func nvEnv(devs ...NVDevice) *Env {
	e := testEnv()
	e.Report = &probe.Report{Devices: []probe.Device{{Backend: "cuda"}}}
	e.NVIDIAFunc = func(context.Context, *Env) (*NVState, string) {
		return &NVState{InitTried: true, InitOK: true, Usable: true, Devices: devs}, ""
	}
	return e
}

func TestPerGPU(t *testing.T) {
	warn := &Finding{Status: Warn, Msg: "w"}
	fail := &Finding{Status: Fail, Msg: "f"}
	// judge reads what to say for each GPU from its index.
	says := map[int]*Finding{1: warn, 2: fail, 3: {Status: Warn, Msg: "later warning"}}
	unknown := map[int]bool{9: true}
	judge := func(d NVDevice) (bool, *Finding) { return !unknown[d.Index], says[d.Index] }
	gpus := func(idx ...int) []NVDevice {
		var out []NVDevice
		for _, i := range idx {
			out = append(out, NVDevice{Index: i})
		}
		return out
	}
	tests := []struct {
		name string
		devs []NVDevice
		want Finding
	}{
		{"GPUs with nothing found pass with their count", gpus(0, 4), Finding{Status: Pass, Msg: "pass", Args: Args{"count": "2"}}},
		{"a GPU NVML did not answer for is not counted", gpus(0, 9), Finding{Status: Pass, Msg: "pass", Args: Args{"count": "1"}}},
		{"no GPU with an answer is the unknown skip", gpus(9), Finding{Status: Skip, Msg: "unknown"}},
		{"the first warning wins over later ones", gpus(0, 1, 3), *warn},
		{"a failure on a later GPU wins over an earlier warning", gpus(1, 2), *fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := perGPU(context.Background(), nvEnv(tt.devs...), judge)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("perGPU (-want +got):\n%s", d)
			}
		})
	}
}

func TestPerGPUSkipsWithoutNVIDIA(t *testing.T) {
	got := perGPU(context.Background(), testEnv(), func(NVDevice) (bool, *Finding) { return true, nil })
	if got.Status != Skip || got.Msg != "skip_no_nvidia" {
		t.Errorf("perGPU without an NVIDIA GPU = %+v, want the skip_no_nvidia skip", got)
	}
}

func TestValue(t *testing.T) {
	if got := value[int](nil); got != nil {
		t.Errorf("a call never made gave %v, want nil", *got)
	}
	if got := value(nvidia.Fail[int](3)); got != nil {
		t.Errorf("a failed call gave %v, want nil", *got)
	}
	if got := value(nvidia.Ok(7)); got == nil || *got != 7 {
		t.Errorf("a successful call gave %v, want 7", got)
	}
	if got := mapValue(nvidia.Ok(1), isOne); got == nil || !*got {
		t.Errorf("mapValue(1, isOne) = %v, want true", got)
	}
}
