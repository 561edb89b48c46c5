package recommend

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/configs"
	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
)

func loadDeviceCatalogue(t *testing.T) []CatalogDevice {
	t.Helper()
	devs, err := LoadDevices(configs.DevicesYAML)
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

// Every entry carries what planning needs and where it came from.
func TestDeviceCatalogueEntriesAreComplete(t *testing.T) {
	devs := loadDeviceCatalogue(t)
	perBackend := map[backend.Backend]int{}
	for _, d := range devs {
		perBackend[d.Backend]++
		if d.TotalGiB <= 0 || d.UsableGiB <= 0 || d.UsableGiB > d.TotalGiB {
			t.Errorf("%s: total %g, usable %g", d.Name, d.TotalGiB, d.UsableGiB)
		}
		if d.Source == "" {
			t.Errorf("%s: no source", d.Name)
		}
		if !strings.HasPrefix(d.UsableSource, "READ") && !strings.HasPrefix(d.UsableSource, "ESTIMATED") {
			t.Errorf("%s: usable_source %q says neither READ nor ESTIMATED", d.Name, d.UsableSource)
		}
		if d.Name != strings.ToLower(d.Name) || strings.ContainsAny(d.Name, " _") {
			t.Errorf("%s: names are lower-case slugs", d.Name)
		}
		switch d.Backend {
		case backend.CUDA:
			if _, _, ok := capability.ParseVersion(d.ComputeCapability); !ok {
				t.Errorf("%s: compute_capability %q", d.Name, d.ComputeCapability)
			}
		case backend.ROCm, backend.XLA, backend.XPU:
			if d.Generation == "" {
				t.Errorf("%s: a %s device needs its generation for the precision rules", d.Name, d.Backend)
			}
		case backend.MPS:
			if !d.Unified {
				t.Errorf("%s: Apple silicon memory is unified", d.Name)
			}
		}
	}
	// The catalogue covers every vendor the issue names.
	for b, min := range map[backend.Backend]int{backend.CUDA: 80, backend.ROCm: 15, backend.XPU: 4, backend.XLA: 7, backend.MPS: 25} {
		if perBackend[b] < min {
			t.Errorf("%d %s devices, want at least %d", perBackend[b], b, min)
		}
	}
}

// A catalogued device is found by its name or by what the machine reports,
// ignoring case, spaces, punctuation, trademark signs and the vendor word.
func TestFindDeviceByNameOrReportedName(t *testing.T) {
	devs := loadDeviceCatalogue(t)
	tests := []struct{ name, in, want string }{
		{"a catalogue name", "a100-80gb", "a100-80gb"},
		{"a catalogue name in capitals", "A100-80GB", "a100-80gb"},
		{"NVML's name of an SXM A100", "NVIDIA A100-SXM4-80GB", "a100-80gb"},
		{"NVML's name of a PCIe A100", "NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
		{"nvidia-smi's name of a T4", "Tesla T4", "t4"},
		{"a GeForce name without the vendor word older drivers print", "GeForce RTX 3090", "rtx-3090"},
		{"spacing and case do not matter", "nvidia   geforce rtx-4090", "rtx-4090"},
		{"an H100 SXM as NVML names it", "NVIDIA H100 80GB HBM3", "h100-80gb"},
		{"an AMD accelerator as amd-smi names it", "AMD Instinct MI300X", "mi300x"},
		{"an Intel stack as torch.xpu names it, trademark signs and all", "Intel(R) Data Center GPU Max 1550", "intel-max-1550"},
		{"a TPU by its GKE accelerator name", "v5litepod", "tpu-v5e"},
		{"a Volta TITAN as the driver names it", "NVIDIA TITAN V", "titan-v"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := FindDevice(devs, tt.in)
			if !ok || d.Name != tt.want {
				t.Errorf("FindDevice(%q) = %q, %v; want %q", tt.in, d.Name, ok, tt.want)
			}
		})
	}
	for _, in := range []string{"", "cuda", "cuda:1", "quantum-computer", "NVIDIA GeForce RTX 4060 Ti"} {
		if d, ok := FindDevice(devs, in); ok {
			t.Errorf("FindDevice(%q) = %q, want nothing", in, d.Name)
		}
	}
}

// One reported name can stand for several memory sizes; MatchDevices
// lists them all so the caller can pick by total memory.
func TestMatchDevicesListsEveryMemorySize(t *testing.T) {
	devs := loadDeviceCatalogue(t)
	tests := []struct {
		reported string
		want     []string
	}{
		{"NVIDIA GeForce RTX 4060 Ti", []string{"rtx-4060-ti-8gb", "rtx-4060-ti-16gb"}},
		{"Apple M2 Max", []string{"apple-m2-max-32gb", "apple-m2-max-96gb"}},
		{"Apple M3 Ultra", []string{"apple-m3-ultra-96gb", "apple-m3-ultra-256gb", "apple-m3-ultra-512gb"}},
		{"AMD Instinct MI50", []string{"mi50-16gb", "mi50-32gb"}},
	}
	for _, tt := range tests {
		var got []string
		for _, d := range MatchDevices(devs, tt.reported) {
			got = append(got, d.Name)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("MatchDevices(%q) (-want +got):\n%s", tt.reported, diff)
		}
	}
}

// bf16 and fp8 follow from compute capability, gfx target and generation
// through the capability rules; no entry needs its own flags.
func TestCataloguePrecisionFollowsTheRules(t *testing.T) {
	devs := loadDeviceCatalogue(t)
	tests := []struct {
		name      string
		bf16, fp8 bool
	}{
		{"tesla-p100-16gb", false, false},
		{"t4", false, false},
		{"rtx-3060-12gb", true, false},
		{"rtx-4060-ti-16gb", true, true},
		{"h100-pcie", true, true},
		{"rtx-5090", true, true},
		{"mi100", true, false},
		{"mi250", true, false},
		{"mi355x", true, true},
		{"rx-7900-xtx", true, false},
		{"radeon-pro-w6800", false, false},
		{"intel-arc-b580", true, false},
		{"tpu-v3", true, false},
		{"tpu-v7", true, true},
		{"apple-m4-max-128gb", true, false},
	}
	for _, tt := range tests {
		d, ok := FindDevice(devs, tt.name)
		if !ok {
			t.Errorf("%s: not catalogued", tt.name)
			continue
		}
		s := capability.Evaluate(d.Facts())
		if s.BF16 != tt.bf16 || s.FP8 != tt.fp8 {
			t.Errorf("%s: bf16 %v fp8 %v, want %v %v", tt.name, s.BF16, s.FP8, tt.bf16, tt.fp8)
		}
	}
}

// The loader is strict: a CUDA entry needs a compute capability, every
// entry a source, and an alias may not be another entry's name.
func TestLoadDevicesRejects(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"a CUDA entry without a compute capability", `devices:
  - {name: x, backend: cuda, total_gib: 8, usable_gib: 7, usable_source: ESTIMATED, source: s}`, "needs a compute_capability"},
		{"no source", `devices:
  - {name: x, backend: rocm, generation: gfx90a, total_gib: 8, usable_gib: 7, usable_source: ESTIMATED}`, "needs a source"},
		{"no memory", `devices:
  - {name: x, backend: rocm, generation: gfx90a, usable_source: ESTIMATED, source: s}`, "0 < usable_gib <= total_gib"},
		{"two entries one name", `devices:
  - {name: a-1, backend: xla, generation: v4, total_gib: 8, usable_gib: 7, usable_source: E, source: s}
  - {name: A 1, backend: xla, generation: v4, total_gib: 8, usable_gib: 7, usable_source: E, source: s}`, "same name"},
		{"an alias that is another entry's name", `devices:
  - {name: a1, backend: xla, generation: v4, total_gib: 8, usable_gib: 7, usable_source: E, source: s}
  - {name: b1, aliases: [A-1], backend: xla, generation: v4, total_gib: 8, usable_gib: 7, usable_source: E, source: s}`, "is the name of"},
		{"an unknown key", `devices:
  - {name: a1, alias: [x], backend: xla, generation: v4, total_gib: 8, usable_gib: 7, usable_source: E, source: s}`, "not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadDevices([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}
