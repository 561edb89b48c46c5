package recommend

import (
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/oomsim"
	"github.com/devctl/devctl/internal/probe"
)

// stackPackages maps the distributions the software probe finds to the
// stack they run, and the modes that stack is for.
var stackPackages = []struct {
	pkg   string
	stack oomsim.Stack
	modes []oomsim.Mode
}{
	{"vllm", oomsim.StackVLLM, []oomsim.Mode{oomsim.Inference}},
	{"sglang", oomsim.StackSGLang, []oomsim.Mode{oomsim.Inference}},
	{"text-generation-server", oomsim.StackTGI, []oomsim.Mode{oomsim.Inference}},
	{"lmdeploy", oomsim.StackLMDeploy, []oomsim.Mode{oomsim.Inference}},
	{"tensorrt-llm", oomsim.StackTRTLLM, []oomsim.Mode{oomsim.Inference}},
	{"torchtune", oomsim.StackTorchtune, []oomsim.Mode{oomsim.Training, oomsim.LoRA, oomsim.QLoRA}},
	{"litgpt", oomsim.StackLitGPT, []oomsim.Mode{oomsim.Training, oomsim.LoRA, oomsim.QLoRA}},
	{"unsloth", oomsim.StackUnsloth, []oomsim.Mode{oomsim.LoRA, oomsim.QLoRA}},
	{"axolotl", oomsim.StackAxolotl, []oomsim.Mode{oomsim.Training, oomsim.LoRA, oomsim.QLoRA}},
	{"llamafactory", oomsim.StackLlamaFactory, []oomsim.Mode{oomsim.Training, oomsim.LoRA, oomsim.QLoRA}},
	{"ms-swift", oomsim.StackMSSwift, []oomsim.Mode{oomsim.Training, oomsim.LoRA, oomsim.QLoRA}},
	{"nemo-automodel", oomsim.StackAutomodel, []oomsim.Mode{oomsim.Training, oomsim.LoRA, oomsim.QLoRA}},
	{"llm-foundry", oomsim.StackLLMFoundry, []oomsim.Mode{oomsim.Training, oomsim.LoRA, oomsim.QLoRA}},
	{"mlx-lm", oomsim.StackMLX, []oomsim.Mode{oomsim.Inference, oomsim.LoRA, oomsim.QLoRA}},
	{"exllamav2", oomsim.StackExLlama, []oomsim.Mode{oomsim.Inference}},
	{"exllamav3", oomsim.StackExLlamaV3, []oomsim.Mode{oomsim.Inference}},
}

// stackEnv is the environment whose packages say what runs: the active one
// (VIRTUAL_ENV, CONDA_PREFIX), else the first found with torch or mlx.
func stackEnv(sw *probe.Software) *probe.PythonEnv {
	if sw == nil {
		return nil
	}
	for i := range sw.Environments {
		if sw.Environments[i].Active {
			return &sw.Environments[i]
		}
	}
	for i := range sw.Environments {
		for _, p := range sw.Environments[i].Packages {
			if p.Name == "torch" || p.Name == "pytorch" || p.Name == "mlx" {
				return &sw.Environments[i]
			}
		}
	}
	return nil
}

// StackFromSoftware is the stack a plan for this machine assumes when none
// was named: the one stack-specific package for the mode installed in the
// environment that runs (stackEnv). Several candidates, or none, leave the
// choice open (transformers' defaults) and why says what was found.
func StackFromSoftware(sw *probe.Software, mode oomsim.Mode) (oomsim.Stack, string) {
	env := stackEnv(sw)
	if env == nil {
		return oomsim.StackAuto, ""
	}
	var found []string
	var match []oomsim.Stack
	var matchPkg string
	for _, sp := range stackPackages {
		for _, p := range env.Packages {
			if p.Name != sp.pkg {
				continue
			}
			found = append(found, p.Name+" "+p.Version)
			for _, m := range sp.modes {
				if m == mode {
					match = append(match, sp.stack)
					matchPkg = p.Name + " " + p.Version
				}
			}
		}
	}
	where := env.Prefix
	if env.Active {
		where += " (active)"
	}
	switch {
	case len(match) == 1:
		return match[0], fmt.Sprintf("assumed from the software probe: %s is installed in %s; --stack to name another", matchPkg, where)
	case len(found) > 0:
		return oomsim.StackAuto, fmt.Sprintf("transformers' defaults assumed; the software probe found %s in %s, none of them alone the stack for %s; --stack to name yours", strings.Join(found, ", "), where, mode)
	}
	return oomsim.StackAuto, ""
}

// StackVersionFromSoftware is the installed release of the stack's
// distribution (oomsim.Profile.Dist) in the environment that runs, ""
// when not found.
func StackVersionFromSoftware(sw *probe.Software, st oomsim.Stack) string {
	env := stackEnv(sw)
	if env == nil {
		return ""
	}
	dist := oomsim.ProfileOf(st).Dist
	for _, p := range env.Packages {
		if dist != "" && p.Name == dist {
			return p.Version
		}
	}
	return ""
}

// TorchVersionFromSoftware is the installed torch release in the
// environment that runs, "" when not found.
func TorchVersionFromSoftware(sw *probe.Software) string {
	env := stackEnv(sw)
	if env == nil || env.Torch == nil {
		return ""
	}
	return env.Torch.Version
}

// EagerCUDAModules reports whether the environment's torch loads every
// CUDA module at start-up: lazy loading is PyTorch's default from 1.13 with
// CUDA 11.7 (pytorch/pytorch#86509); an older torch, or one built for an
// older CUDA, pays the full context (1,343 MB on a V100, transformers'
// model_memory_anatomy). why names the build.
func EagerCUDAModules(sw *probe.Software) (bool, string) {
	env := stackEnv(sw)
	if env == nil || env.Torch == nil || env.Torch.Accelerator != "cuda" {
		return false, ""
	}
	t := env.Torch
	old := oomsim.VersionBelow(t.Version, 1, 13) || oomsim.VersionBelow(t.AcceleratorVersion, 11, 7)
	if !old {
		return false, ""
	}
	return true, fmt.Sprintf("torch %s built for CUDA %s loads every CUDA module at start-up (lazy loading needs torch >= 1.13 and CUDA >= 11.7): the context is taken as 1,343 MB", t.Version, t.AcceleratorVersion)
}
