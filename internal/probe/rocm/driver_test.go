package rocm_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/rocm"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func TestGFXName(t *testing.T) {
	tests := []struct {
		in   uint64
		want string
	}{
		{90010, "gfx90a"}, {90402, "gfx942"}, {90006, "gfx906"}, {90008, "gfx908"}, {90500, "gfx950"},
		{80003, "gfx803"}, {100300, "gfx1030"}, {110000, "gfx1100"}, {110501, "gfx1151"}, {120001, "gfx1201"},
		{0, ""}, {9999, ""}, {91600, ""}, {90016, ""}, {1000000, ""},
	}
	for _, tt := range tests {
		if got := rocm.GFXName(tt.in); got != tt.want {
			t.Errorf("GFXName(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBusID(t *testing.T) {
	tests := []struct {
		domain, loc uint64
		want        string
	}{
		{0, 25344, "0000:63:00.0"}, {0, 256, "0000:01:00.0"}, {1, 512, "0001:02:00.0"},
		{0, 2563, "0000:0a:00.3"}, {0, 0x050b, "0000:05:01.3"},
	}
	for _, tt := range tests {
		if got := rocm.BusID(tt.domain, tt.loc); got != tt.want {
			t.Errorf("BusID(%d, %d) = %q, want %q", tt.domain, tt.loc, got, tt.want)
		}
	}
}

func TestParseProperties(t *testing.T) {
	in := "cpu_cores_count 0\nsimd_count 304\nhive_id 11638818706288400384\nname gfx942\nbroken\nneg -1\n\ngfx_target_version 90402\n"
	want := rocm.Properties{"cpu_cores_count": 0, "simd_count": 304, "hive_id": 11638818706288400384, "gfx_target_version": 90402}
	if diff := cmp.Diff(want, rocm.ParseProperties([]byte(in))); diff != "" {
		t.Errorf("ParseProperties (-want +got):\n%s", diff)
	}
}

func FuzzParseProperties(f *testing.F) {
	f.Add([]byte("simd_count 416\nsimd_per_cu 4\ngfx_target_version 90010\n"))
	f.Add([]byte("a b c\n\x00 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := rocm.ParseProperties(b)
		_ = rocm.GFXName(p["gfx_target_version"])
		_ = rocm.BusID(p["domain"], p["location_id"])
	})
}

func FuzzGFXName(f *testing.F) {
	f.Add(uint64(90402))
	f.Fuzz(func(t *testing.T, v uint64) {
		if s := rocm.GFXName(v); s != "" && (len(s) < 6 || s[:3] != "gfx") {
			t.Errorf("GFXName(%d) = %q", v, s)
		}
	})
}

// summary is the part of a device the fixture tests compare.
type summary struct {
	ID, Name, Bus, Arch, Pytorch string
	MemMB                        int64
	BF16, Int8, FP8              bool
	CUs                          uint64
	Partition                    any
}

func summarize(ds []probe.Device) []summary {
	var out []summary
	for _, d := range ds {
		s := summary{ID: d.ID, Name: d.Name, Pytorch: d.PytorchDevice, BF16: d.SupportsBF16, Int8: d.Supports8Bit, FP8: d.SupportsFP8}
		if d.PCIBusID != nil {
			s.Bus = *d.PCIBusID
		}
		if d.Architecture != nil {
			s.Arch = *d.Architecture
		}
		if d.TotalMemoryMB != nil {
			s.MemMB = *d.TotalMemoryMB
		}
		if cu, ok := d.Extra["compute_units"].(uint64); ok {
			s.CUs = cu
		}
		s.Partition = d.Extra["partition_index"]
		out = append(out, s)
	}
	return out
}

func fixture(name string) string { return filepath.Join("..", "..", "..", "testdata", "accel", name) }

func TestProbeFixtures(t *testing.T) {
	tests := []struct {
		name string
		tree string
		want []summary
	}{
		{
			name: "two MI210s from a real KFD capture become rocm:0 and rocm:1 in KFD order",
			tree: "rocm-mi210",
			want: []summary{
				{ID: "rocm:0", Name: "AMD Instinct MI210", Bus: "0000:63:00.0", Arch: "gfx90a", Pytorch: "cuda:0", MemMB: 65520, BF16: true, Int8: true, CUs: 104},
				{ID: "rocm:1", Name: "AMD Instinct MI210", Bus: "0000:43:00.0", Arch: "gfx90a", Pytorch: "cuda:1", MemMB: 65520, BF16: true, Int8: true, CUs: 104},
			},
		},
		{
			name: "a 2018 node without gfx_target_version takes its target from the device id and VRAM from DRM",
			tree: "rocm-rx470-no-gfx-target",
			want: []summary{{ID: "rocm:0", Name: "AMD Radeon RX 470/480/570/580 (Ellesmere)", Bus: "0000:01:00.0", Arch: "gfx803", Pytorch: "cuda:0", MemMB: 4096, CUs: 32}},
		},
		{
			name: "an MI308X in CPX mode is four devices on one PCI function",
			tree: "rocm-mi308x-cpx",
			want: []summary{
				{ID: "rocm:0", Name: "AMD Instinct MI308X", Bus: "0000:0a:00.0", Arch: "gfx942", Pytorch: "cuda:0", BF16: true, Int8: true, FP8: true, CUs: 20, Partition: 0},
				{ID: "rocm:1", Name: "AMD Instinct MI308X", Bus: "0000:0a:00.0", Arch: "gfx942", Pytorch: "cuda:1", BF16: true, Int8: true, FP8: true, CUs: 20, Partition: 1},
				{ID: "rocm:2", Name: "AMD Instinct MI308X", Bus: "0000:0a:00.0", Arch: "gfx942", Pytorch: "cuda:2", BF16: true, Int8: true, FP8: true, CUs: 20, Partition: 2},
				{ID: "rocm:3", Name: "AMD Instinct MI308X", Bus: "0000:0a:00.0", Arch: "gfx942", Pytorch: "cuda:3", BF16: true, Int8: true, FP8: true, CUs: 20, Partition: 3},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.RootHost(t, fixture(tt.tree), nil)
			res, err := rocm.New().Probe(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summarize(res.Devices)); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
			for _, d := range res.Devices {
				if d.Backend != "rocm" || d.DeviceType != "gpu" || d.JAXPlatform != "rocm" || d.VisibilityEnv != "HIP_VISIBLE_DEVICES" {
					t.Errorf("%s: framework hints %q %q %q %q", d.ID, d.Backend, d.DeviceType, d.JAXPlatform, d.VisibilityEnv)
				}
			}
		})
	}
}

func TestProbeMI300XPartitionsReportTheirShareOfVRAM(t *testing.T) {
	h := fakehost.RootHost(t, fixture("rocm-mi300x-cpx"), nil)
	res, err := rocm.New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Devices) != 8 {
		t.Fatalf("%d devices, want 8", len(res.Devices))
	}
	d := res.Devices[7]
	if *d.TotalMemoryMB != 24574 || d.Extra["partitions"] != 8 || d.Extra["partition_index"] != 7 || d.Extra["compute_partition"] != "CPX" {
		t.Errorf("last partition: mem %d, extra %v", *d.TotalMemoryMB, d.Extra)
	}
}

func TestProbeAbsence(t *testing.T) {
	amdOnBus := fakehost.PCIFunction("0000:03:00.0", 0x1002, 0x744c, 0x1002, 0x0e3b, 0x030000, "amdgpu", "16.0 GT/s PCIe", 16)
	gpuNode := fakehost.Files{"/sys/class/kfd/kfd/topology/nodes/1/properties": "simd_count 192\nsimd_per_cu 2\ngfx_target_version 110000\nlocation_id 768\n"}
	tests := []struct {
		name    string
		files   fakehost.Files
		absent  bool
		devices int
	}{
		{"a bus without AMD is absent", fakehost.PCIFunction("0000:00:02.0", 0x8086, 0x4680, 0x8086, 0, 0x030000, "i915", "Unknown", 0), true, 0},
		{"an AMD GPU without KFD is absent", amdOnBus, true, 0},
		{"an AMD audio function alone is absent", fakehost.PCIFunction("0000:03:00.1", 0x1002, 0xab30, 0x1002, 0, 0x040300, "snd_hda_intel", "", 0), true, 0},
		{"KFD with only a CPU node is absent", fakehost.Merge(amdOnBus, fakehost.Files{"/sys/class/kfd/kfd/topology/nodes/0/properties": "cpu_cores_count 16\nsimd_count 0\n"}), true, 0},
		{"KFD without any PCI bus still finds the GPU", gpuNode, false, 1},
		{"a node with a broken properties file is skipped", fakehost.Merge(amdOnBus, gpuNode, fakehost.Files{"/sys/class/kfd/kfd/topology/nodes/2/properties": "\xff\xfe garbage"}), false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := fakehost.Host(t, tt.files, nil)
			res, err := rocm.New().Probe(context.Background(), h)
			if got := errors.Is(err, probe.ErrAbsent); got != tt.absent {
				t.Fatalf("absent = %v (err %v), want %v", got, err, tt.absent)
			}
			if len(res.Devices) != tt.devices {
				t.Errorf("%d devices, want %d", len(res.Devices), tt.devices)
			}
		})
	}
}

func TestProbeReportsAccess(t *testing.T) {
	h := fakehost.RootHost(t, fixture("rocm-mi210"), nil)
	res, err := rocm.New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Devices[0]
	if d.Extra["dev_kfd"] != true || d.Extra["render_node"] != "/dev/dri/renderD128" || d.Extra["render_node_present"] != true || d.Extra["groups_ok"] != false {
		t.Errorf("access facts: %v", d.Extra)
	}
	if res.Detail != "2 GPU(s) (gfx90a); not in the render/video group" {
		t.Errorf("detail %q", res.Detail)
	}
	if res.Platform == nil || *res.Platform.DriverVersion != "6.7.0" || *res.Platform.RuntimeVersion != "6.2.0-66" {
		t.Errorf("platform %+v", res.Platform)
	}
	h.Identity.Groups = []string{"render"}
	res, _ = rocm.New().Probe(context.Background(), h)
	if res.Devices[0].Extra["groups_ok"] != true {
		t.Error("a render-group member is not ok")
	}
}
