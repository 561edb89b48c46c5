package backend_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/backend"
)

func TestParsePreference(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "auto is kept", in: "auto", want: "auto"},
		{name: "a backend is lower-cased and trimmed", in: " CUDA ", want: "cuda"},
		{name: "tpu is the xla backend", in: "tpu", want: "xla"},
		{name: "a tpu device id becomes an xla id", in: "TPU:3", want: "xla:3"},
		{name: "a device id keeps its index", in: "rocm:2", want: "rocm:2"},
		{name: "the CPU has no index", in: "cpu:0", wantErr: true},
		{name: "a negative index is refused", in: "cuda:-1", wantErr: true},
		{name: "a huge index is refused", in: "cuda:65536", wantErr: true},
		{name: "an unknown word is refused", in: "gpu", wantErr: true},
		{name: "an empty value is refused", in: "", wantErr: true},
		{name: "a substring alias is not resolved inside other words", in: "tpux", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := backend.ParsePreference(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParsePreference(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("ParsePreference(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseList(t *testing.T) {
	got, err := backend.ParseList("cuda, TPU", "", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]backend.Backend{backend.CUDA, backend.XLA, backend.CPU}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := backend.ParseList("cuda,metal"); err == nil || err.Error() != `entry "metal": want one of `+backend.Help() {
		t.Errorf("an unknown entry: err = %v", err)
	}
}

func TestRankPutsAcceleratorsBeforeTheCPU(t *testing.T) {
	all := backend.All()
	for i := 1; i < len(all); i++ {
		if all[i-1].Rank() >= all[i].Rank() {
			t.Errorf("%s ranks after %s", all[i-1], all[i])
		}
	}
	if backend.CPU != all[len(all)-1] {
		t.Errorf("the CPU is not last: %v", all)
	}
	if backend.Backend("metal").Rank() <= backend.CPU.Rank() {
		t.Error("an unknown backend sorts before the CPU")
	}
}

func TestOfKeepsUnknownWords(t *testing.T) {
	for in, want := range map[string]backend.Backend{"cuda:1": "cuda", "TPU": "xla", "GPU": "gpu", "": "", "tpu:0": "xla"} {
		if got := backend.Of(in); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParsePreference(f *testing.F) {
	for _, s := range []string{"auto", "tpu:1", "cuda:0", "cpu", "x:y:z", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := backend.ParsePreference(s)
		if err != nil {
			return
		}
		again, err := backend.ParsePreference(got)
		if err != nil || again != got {
			t.Errorf("ParsePreference(%q) = %q, which parses to %q, %v", s, got, again, err)
		}
	})
}

func TestAutocast(t *testing.T) {
	want := map[backend.Backend]string{
		backend.CUDA:   `torch.autocast(device_type="cuda", dtype=torch.float16)`,
		backend.ROCm:   `torch.autocast(device_type="cuda", dtype=torch.float16)`,
		backend.XLA:    `torch.autocast(device_type="xla", dtype=torch.bfloat16)`,
		backend.Neuron: `torch.autocast(device_type="xla")`,
		backend.MPS:    `torch.autocast(device_type="mps", dtype=torch.float16)`,
		backend.XPU:    `torch.autocast(device_type="xpu")`,
		backend.CPU:    `torch.autocast(device_type="cpu", dtype=torch.bfloat16)`,
		"any":          `torch.autocast(device_type=x.device.type)`,
	}
	for b, w := range want {
		if got := b.AutocastCall(); got != w {
			t.Errorf("%s: %s, want %s", b, got, w)
		}
	}
}
