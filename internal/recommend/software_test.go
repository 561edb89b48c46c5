package recommend

import (
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
)

func env(active bool, torch *probe.FrameworkBuild, pkgs ...string) probe.PythonEnv {
	e := probe.PythonEnv{Kind: "venv", Prefix: "/opt/venv", Active: active, Torch: torch}
	for _, p := range pkgs {
		name, version, _ := strings.Cut(p, "=")
		e.Packages = append(e.Packages, probe.Package{Name: name, Version: version, Installer: "pip"})
	}
	return e
}

func TestStackFromSoftware(t *testing.T) {
	tests := []struct {
		name      string
		sw        *probe.Software
		mode      oomsim.Mode
		want      oomsim.Stack
		whyPrefix string
	}{
		{"no probe", nil, oomsim.Inference, oomsim.StackAuto, ""},
		{"vllm serves", &probe.Software{Environments: []probe.PythonEnv{env(true, nil, "torch=2.5.1", "vllm=0.6.4")}},
			oomsim.Inference, oomsim.StackVLLM, "assumed from the software probe: vllm 0.6.4 is installed in /opt/venv (active)"},
		{"vllm does not train", &probe.Software{Environments: []probe.PythonEnv{env(true, nil, "torch=2.5.1", "vllm=0.6.4")}},
			oomsim.LoRA, oomsim.StackAuto, "transformers' defaults assumed; the software probe found vllm 0.6.4"},
		{"two training stacks leave it open", &probe.Software{Environments: []probe.PythonEnv{env(true, nil, "torch=2.5.1", "torchtune=0.4.0", "litgpt=0.5.3")}},
			oomsim.Training, oomsim.StackAuto, "transformers' defaults assumed"},
		{"the active environment decides", &probe.Software{Environments: []probe.PythonEnv{
			env(false, nil, "torch=2.5.1", "vllm=0.6.4"), env(true, nil, "torch=2.4.0", "torchtune=0.3.1")}},
			oomsim.LoRA, oomsim.StackTorchtune, "assumed from the software probe: torchtune 0.3.1"},
		{"ms-swift trains", &probe.Software{Environments: []probe.PythonEnv{env(true, nil, "torch=2.6.0", "transformers=4.51.3", "ms-swift=3.4.1")}},
			oomsim.LoRA, oomsim.StackMSSwift, "assumed from the software probe: ms-swift 3.4.1"},
		{"NeMo Automodel trains", &probe.Software{Environments: []probe.PythonEnv{env(true, nil, "torch=2.9.0", "nemo-automodel=0.2.0")}},
			oomsim.Training, oomsim.StackAutomodel, "assumed from the software probe: nemo-automodel 0.2.0"},
		{"llm-foundry trains", &probe.Software{Environments: []probe.PythonEnv{env(true, nil, "torch=2.7.0", "llm-foundry=0.20.0")}},
			oomsim.Training, oomsim.StackLLMFoundry, "assumed from the software probe: llm-foundry 0.20.0"},
		{"only transformers: nothing to assume", &probe.Software{Environments: []probe.PythonEnv{env(true, nil, "torch=2.5.1", "transformers=4.46.0")}},
			oomsim.Training, oomsim.StackAuto, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := StackFromSoftware(tt.sw, tt.mode)
			if got != tt.want || !strings.HasPrefix(why, tt.whyPrefix) || (tt.whyPrefix == "") != (why == "") {
				t.Errorf("StackFromSoftware = %q, %q; want %q, %q...", got, why, tt.want, tt.whyPrefix)
			}
		})
	}
}

func TestEagerCUDAModules(t *testing.T) {
	build := func(v, cuda string) *probe.Software {
		return &probe.Software{Environments: []probe.PythonEnv{env(true, &probe.FrameworkBuild{Version: v, Accelerator: "cuda", AcceleratorVersion: cuda}, "torch="+v)}}
	}
	for _, tt := range []struct {
		sw   *probe.Software
		want bool
	}{
		{build("1.12.1+cu113", "11.3"), true},
		{build("1.13.1+cu116", "11.6"), true}, // lazy loading needs CUDA 11.7 too
		{build("1.13.1+cu117", "11.7"), false},
		{build("2.5.1+cu124", "12.4"), false},
		{build("garbage", ""), false},
		{&probe.Software{Environments: []probe.PythonEnv{env(true, &probe.FrameworkBuild{Version: "1.12.0", Accelerator: "rocm"}, "torch=1.12.0")}}, false},
		{nil, false},
	} {
		if got, why := EagerCUDAModules(tt.sw); got != tt.want || got != (why != "") {
			t.Errorf("EagerCUDAModules(%+v) = %v, %q; want %v", tt.sw, got, why, tt.want)
		}
	}
}

// A plan on a machine whose torch loads modules eagerly counts the full
// CUDA context.
func TestEagerContextCounted(t *testing.T) {
	in := Input{Model: oomsim.Model{Name: "m", Params: 1_000_000_000}, Target: Target{Name: "gpu", Backend: "cuda", TotalBytes: 16 << 30, UsableBytes: 15 << 30, Support: capability.Support{FP16: true}}, RunSettings: RunSettings{Mode: oomsim.Inference, BatchSize: 1, SeqLen: 512}}
	lazy, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	in.EagerCUDAModules = true
	eager, err := Recommend(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := eager.Memory.OverheadBytes - lazy.Memory.OverheadBytes; d <= 800<<20 {
		t.Errorf("eager context adds %d bytes, want the difference between 1,343 MB and the lazy figure", d)
	}
}
