package nvidia

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
)

func decodeFixture(t *testing.T, name string) *Raw {
	t.Helper()
	r, err := Decode(readFixture(t, "raw", name))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInterpretRawFixtures(t *testing.T) {
	tests := []struct {
		name       string
		fixture    string
		wantCount  int
		wantFirst  probe.Device
		wantDetail string
	}{
		{
			name: "a recorded DGX H100 replays as eight Hopper GPUs", fixture: "dgxh100.json", wantCount: 8,
			wantFirst: probe.Device{
				ID: "cuda:0", Backend: "cuda", DeviceType: "gpu", Vendor: "NVIDIA", Name: "NVIDIA H100 80GB HBM3",
				TotalMemoryMB: probe.Ptr(int64(81920)), FreeMemoryMB: probe.Ptr(int64(0)),
				ComputeCapability: probe.Ptr("9.0"), Architecture: probe.Ptr("Hopper"),
				SupportsFP16: true, SupportsBF16: true, Supports8Bit: true, SupportsFP8: true,
				PytorchDevice: "cuda:0", JAXPlatform: "cuda", VisibilityEnv: "CUDA_VISIBLE_DEVICES", InferenceContext: "torch.inference_mode",
				Extra: map[string]any{"brand": "nvidia", "minor_number": 0, "memory_used_mb": int64(0), "mig_mode_current": "disabled", "mig_mode_pending": "disabled"},
			},
			wantDetail: "8 GPUs (8× NVIDIA H100 80GB HBM3); driver 550.54.15; CUDA 12.4",
		},
		{
			name: "a T4 without memory v2 or MIG keeps only what it answered", fixture: "t4-unsupported-fields.json", wantCount: 1,
			wantFirst: probe.Device{
				ID: "cuda:0", Backend: "cuda", DeviceType: "gpu", Vendor: "NVIDIA", Name: "Tesla T4",
				UUID:          probe.Ptr("GPU-6c2d8d5a-2a4b-3f0e-8f1d-2b6a0e9f1c3d"),
				TotalMemoryMB: probe.Ptr(int64(15360)), FreeMemoryMB: probe.Ptr(int64(14930)),
				ComputeCapability: probe.Ptr("7.5"), Architecture: probe.Ptr("Turing"),
				SupportsFP16: true, Supports8Bit: true,
				PytorchDevice: "cuda:0", JAXPlatform: "cuda", VisibilityEnv: "CUDA_VISIBLE_DEVICES", InferenceContext: "torch.inference_mode",
				Extra: map[string]any{"memory_used_mb": int64(430)},
			},
			wantDetail: "1 GPU (1× Tesla T4); driver 550.90.07; CUDA 12.4",
		},
		{
			name: "a lost GPU is still listed and named in the detail", fixture: "h100-one-lost.json", wantCount: 2,
			wantDetail: "2 GPUs (1× NVIDIA H100 PCIe, 1× NVIDIA GPU); driver 550.90.07; CUDA 12.4; cuda:1 lost (ERROR_GPU_IS_LOST)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := decodeFixture(t, tt.fixture)
			devs := Devices(raw)
			if len(devs) != tt.wantCount {
				t.Fatalf("got %d devices, want %d", len(devs), tt.wantCount)
			}
			if tt.wantFirst.ID != "" {
				got := devs[0]
				if tt.fixture == "dgxh100.json" {
					got.UUID = nil // the mock's UUIDs are random
				}
				if diff := cmp.Diff(tt.wantFirst, got); diff != "" {
					t.Errorf("first device (-want +got):\n%s", diff)
				}
			}
			if got := Detail(raw); got != tt.wantDetail {
				t.Errorf("detail = %q, want %q", got, tt.wantDetail)
			}
		})
	}
}

func TestPlatformFromRaw(t *testing.T) {
	got := Platform(decodeFixture(t, "h100-pcie-x2-full.json"))
	want := &probe.Platform{Backend: "cuda", DriverVersion: probe.Ptr("550.90.07"), RuntimeVersion: probe.Ptr("12.4"), LibraryVersion: probe.Ptr("12.550.90.07")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&probe.Platform{Backend: "cuda"}, Platform(decodeFixture(t, "init-library-not-found.json"))); diff != "" {
		t.Errorf("a failed init gives an empty platform (-want +got):\n%s", diff)
	}
}

func TestLostGPUDevice(t *testing.T) {
	d := Devices(decodeFixture(t, "h100-one-lost.json"))[1]
	want := map[string]any{"lost": true, "error": "ERROR_GPU_IS_LOST (the GPU has fallen off the bus or is otherwise inaccessible; reset it or reboot)"}
	if diff := cmp.Diff(want, d.Extra); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if d.Name != "NVIDIA GPU" || d.TotalMemoryMB != nil || d.SupportsFP16 {
		t.Errorf("a lost GPU must not invent values: %+v", d)
	}
}

func TestDeviceFromSyntheticAnswers(t *testing.T) {
	const gib = uint64(1) << 30
	type part struct {
		TotalMemoryMB, FreeMemoryMB *int64
		Link                        *probe.PCIeLink
		Extra                       map[string]any
	}
	tests := []struct {
		name string
		gpu  GPU
		want part
	}{
		{
			name: "memory v2 wins over v1 because only v2 knows the reserved amount",
			gpu: GPU{
				Memory:   Ok(Memory{Total: 16 * gib, Free: 10 * gib, Used: 6 * gib}),
				MemoryV2: Ok(Memory{Total: 16 * gib, Free: 10 * gib, Used: 5 * gib, Reserved: probe.Ptr(gib)}),
			},
			want: part{
				TotalMemoryMB: probe.Ptr(int64(16384)), FreeMemoryMB: probe.Ptr(int64(10240)),
				Extra: map[string]any{"memory_used_mb": int64(5120), "memory_reserved_mb": int64(1024)},
			},
		},
		{
			name: "a handle that answered GPU_IS_LOST marks the GPU lost even before any call set Lost",
			gpu:  GPU{HandleRet: ErrGPUIsLost},
			want: part{Extra: map[string]any{"lost": true, "error": "ERROR_GPU_IS_LOST (the GPU has fallen off the bus or is otherwise inaccessible; reset it or reboot)"}},
		},
		{
			name: "a link trained below its maximum keeps current and max apart",
			gpu:  GPU{PCIeGenCurrent: Ok(3), PCIeGenMax: Ok(4), PCIeWidthCurrent: Ok(8), PCIeWidthMax: Ok(16)},
			want: part{Link: &probe.PCIeLink{GenCurrent: probe.Ptr(3), GenMax: probe.Ptr(4), WidthCurrent: probe.Ptr(8), WidthMax: probe.Ptr(16)}},
		},
		{
			name: "ECC reports the mode in force, not the one pending a reboot",
			gpu:  GPU{ECCMode: Ok(ModePair{Current: 1, Pending: 0})},
			want: part{Extra: map[string]any{"ecc_mode": "enabled"}},
		},
		{
			name: "a fabric state of not supported is left out",
			gpu:  GPU{Fabric: Ok(Fabric{State: 0})},
			want: part{},
		},
		{
			name: "a completed fabric is reported",
			gpu:  GPU{Fabric: Ok(Fabric{State: 3})},
			want: part{Extra: map[string]any{"fabric_state": "completed"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := device(tt.gpu)
			got := part{d.TotalMemoryMB, d.FreeMemoryMB, d.Link, d.Extra}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("device (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetailOfNoGPUs(t *testing.T) {
	if diff := cmp.Diff("0 GPUs", Detail(&Raw{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
