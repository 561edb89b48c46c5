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
