package doctor

import (
	"context"
	"strconv"
	"strings"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/probe"
)

// gpuFamilies counts the GPUs of each framework family on this machine:
// the probe's devices (usable or not) when there is a report, else the PCI
// walk. Only NVIDIA (cuda) and AMD (rocm) GPUs matter to a torch build.
func (e *Env) gpuFamilies() map[string]int {
	n := map[string]int{}
	if e.Report != nil {
		for _, d := range e.Report.Devices {
			switch d.Backend {
			case backend.CUDA:
				n["cuda"]++
			case backend.ROCm:
				n["rocm"]++
			}
		}
		if len(n) > 0 {
			return n
		}
	}
	for _, d := range e.PCI() {
		switch {
		case d.Vendor == VendorNVIDIA && d.IsDisplay():
			n["cuda"]++
		case d.Vendor == VendorAMD && d.IsGPULike():
			n["rocm"]++
		}
	}
	return n
}

var familyVendor = map[string]string{"cuda": "NVIDIA", "rocm": "AMD"}

var checkTorchBuild = &Check{
	ID:  "software.torch_build",
	Run: runTorchBuild,
}

// runTorchBuild compares the accelerator torch was built for with the GPUs
// the machine has: a CPU-only wheel on a GPU machine, or a CUDA wheel on an
// AMD machine, runs on the CPU without a word.
func runTorchBuild(ctx context.Context, e *Env) Finding {
	var torch *probe.FrameworkBuild
	prefix := ""
	for _, env := range environments(ctx, e) {
		if env.Torch != nil {
			torch, prefix = env.Torch, env.Prefix
			break
		}
	}
	if torch == nil {
		return skip("skip_no_torch", nil)
	}
	fams := e.gpuFamilies()
	if len(fams) == 0 {
		return skip("skip_no_gpu", Args{"pkg": "torch " + torch.Version})
	}
	have := ""
	for _, f := range []string{"cuda", "rocm"} {
		if fams[f] > 0 {
			have = f
			break
		}
	}
	args := Args{"pkg": "torch " + torch.Version, "env": prefix, "count": strconv.Itoa(fams[have]), "vendor": familyVendor[have],
		"build": strings.TrimSpace(torch.Accelerator + " " + torch.AcceleratorVersion)}
	ev := []Evidence{{torch.Source, args["build"]}, {"GPUs on this machine", args["count"] + " " + args["vendor"]}}
	switch {
	case torch.Accelerator == "unknown":
		return Finding{Status: Skip, Msg: "skip_unknown", Args: args, Evidence: ev}
	case torch.Accelerator == "cpu":
		return Finding{Status: Warn, Msg: "cpu_only", Args: args, Evidence: ev}
	case fams[torch.Accelerator] == 0:
		return Finding{Status: Warn, Msg: "wrong_family", Args: args, Evidence: ev}
	}
	return Finding{Status: Pass, Msg: "pass", Args: args, Evidence: ev}
}

var checkJAXPlugin = &Check{
	ID:  "software.jax_plugin",
	Run: runJAXPlugin,
}

// jaxPluginPrefix is the distribution-name prefix of JAX's GPU plugins per
// family: jax[cuda12] installs jax-cuda12-plugin and jax-cuda12-pjrt (the
// JAX installation guide, https://docs.jax.dev/en/latest/installation.html;
// jax-ml/jax#29068 lists them), ROCm has jax-rocm*-plugin and -pjrt.
var jaxPluginPrefix = map[string]string{"cuda": "jax-cuda", "rocm": "jax-rocm"}

// runJAXPlugin finds jax installed without the plugin for this machine's
// GPUs: jax then falls back to the CPU with only a warning ("An NVIDIA GPU
// may be present on this machine, but a CUDA-enabled jaxlib is not
// installed. Falling back to cpu."), one of seed 002's four causes of "no
// GPU detected" (JAX not built with CUDA support).
func runJAXPlugin(ctx context.Context, e *Env) Finding {
	var env *probe.PythonEnv
	var jax probe.Package
	for _, en := range environments(ctx, e) {
		for _, p := range en.Packages {
			if p.Name == "jax" || (p.Name == "jaxlib" && jax.Name == "") {
				jax = p
			}
		}
		if jax.Name != "" {
			en := en
			env = &en
			break
		}
	}
	if env == nil {
		return skip("skip_no_jax", nil)
	}
	fams := e.gpuFamilies()
	have := ""
	for _, f := range []string{"cuda", "rocm"} {
		if fams[f] > 0 {
			have = f
			break
		}
	}
	args := Args{"pkg": jax.Name + " " + jax.Version, "env": env.Prefix}
	if have == "" {
		return skip("skip_no_gpu", args)
	}
	args["count"], args["vendor"] = strconv.Itoa(fams[have]), familyVendor[have]
	var mine, other []string
	for _, p := range env.Packages {
		for f, prefix := range jaxPluginPrefix {
			if !strings.HasPrefix(p.Name, prefix) {
				continue
			}
			if f == have {
				mine = append(mine, p.Name+" "+p.Version)
			} else {
				other = append(other, p.Name+" "+p.Version)
			}
		}
		// jaxlib wheels before the plugins (jaxlib 0.4.16 and older from the
		// jax-releases index) carried CUDA in their local version tag
		// ("0.4.13+cuda12.cudnn89"); conda-forge's CUDA builds say cuda in
		// their build string.
		if p.Name == "jaxlib" && have == "cuda" && (strings.Contains(p.Version, "+cuda") || strings.Contains(p.Build, "cuda")) {
			mine = append(mine, p.Name+" "+p.Version+" "+p.Build)
		}
	}
	ev := []Evidence{{env.Prefix, args["pkg"]}, {"GPUs on this machine", args["count"] + " " + args["vendor"]}}
	switch {
	case len(mine) > 0:
		args["plugins"] = strings.TrimSpace(strings.Join(mine, ", "))
		return Finding{Status: Pass, Msg: "pass", Args: args, Evidence: ev}
	case len(other) > 0:
		args["plugins"] = strings.Join(other, ", ")
		return Finding{Status: Warn, Msg: "wrong_family", Args: args, Evidence: ev}
	case have == "rocm":
		return Finding{Status: Warn, Msg: "no_rocm_plugin", Args: args, Evidence: ev}
	}
	return Finding{Status: Warn, Msg: "no_cuda_plugin", Args: args, Evidence: ev}
}
