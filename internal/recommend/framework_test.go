package recommend

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/oomsim"
)

func TestFrameworkSettings(t *testing.T) {
	whisper := oomsim.Model{Name: "whisper-base", Params: 72_593_920, Family: "whisper"}
	llm := oomsim.Model{Params: 150_000_000}
	tests := []struct {
		name     string
		device   string
		model    oomsim.Model
		devices  int
		autocast string // "device_type dtype"
		whisper  *WhisperSettings
		xlaFlags string
		jax      bool
	}{
		{"Whisper on an Apple M4: seed 003's MPS settings", "apple-m4-16gb", whisper, 1, "mps torch.bfloat16",
			&WhisperSettings{FP16: true, BeamSize: 1, ConditionOnPreviousText: false}, "", true},
		{"Whisper on the CPU: seed 003's CPU settings, bfloat16 autocast", "cpu-64gb", whisper, 1, "cpu torch.bfloat16",
			&WhisperSettings{FP16: false, BeamSize: 5, ConditionOnPreviousText: true}, "", true},
		{"Whisper on a T4: whisper's own defaults, said to be so", "t4", whisper, 1, "cuda torch.float16",
			&WhisperSettings{FP16: true, BeamSize: 5, ConditionOnPreviousText: true}, "", true},
		{"Whisper on a TPU: nothing stated", "tpu-v5e", whisper, 1, "xla torch.bfloat16", nil, "", true},
		{"an LLM on two A100s: JAX gets the latency-hiding scheduler", "a100-80gb", llm, 2, "cuda torch.bfloat16", nil,
			"--xla_gpu_enable_latency_hiding_scheduler=true", true},
		{"ROCm keeps the cuda device type", "mi300x", llm, 1, "cuda torch.bfloat16", nil, "", true},
		{"Intel XPU: no JAX platform, xpu autocast", "intel-max-1550", llm, 1, "xpu torch.bfloat16", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := catalogueTarget(t, tt.device)
			r, err := Recommend(Input{Model: tt.model, Precision: "auto", Strategy: "auto", Target: tg, RunSettings: RunSettings{Mode: oomsim.Inference, Devices: tt.devices}})
			if err != nil {
				t.Fatal(err)
			}
			f := r.Framework
			if got := f.AutocastDeviceType + " " + f.AutocastDtype; got != tt.autocast {
				t.Errorf("autocast %q, want %q", got, tt.autocast)
			}
			var w *WhisperSettings
			if f.Whisper != nil {
				c := *f.Whisper
				c.Source = ""
				w = &c
				if f.Whisper.Source == "" {
					t.Error("whisper settings without a source")
				}
			}
			if diff := cmp.Diff(tt.whisper, w); diff != "" {
				t.Errorf("whisper (-want +got)\n%s", diff)
			}
			if (f.JAX != nil) != tt.jax {
				t.Fatalf("jax settings %+v, want present=%v", f.JAX, tt.jax)
			}
			if f.JAX != nil && (f.JAX.EnableX64 || !f.JAX.EnableJIT || f.JAX.XLAFlags != tt.xlaFlags) {
				t.Errorf("jax %+v, want x64 off, jit on, XLA_FLAGS %q", f.JAX, tt.xlaFlags)
			}
			var exported string
			for _, e := range r.Env {
				if e.Name == "XLA_FLAGS" {
					exported = e.Value
				}
			}
			if exported != tt.xlaFlags {
				t.Errorf("env XLA_FLAGS %q, want %q", exported, tt.xlaFlags)
			}
			comments := strings.Join(f.EnvComments(), "\n")
			if (tt.whisper != nil) != strings.HasPrefix(comments, "# whisper: transcribe(") {
				t.Errorf("-o env comments %q", comments)
			}
		})
	}
}
