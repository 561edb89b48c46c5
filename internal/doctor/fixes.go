package doctor

import (
	"strconv"
	"strings"
)

// sameFix groups fixes that prescribe one action in different words: a
// check finding's fix, named by its message id ("nvidia.version_match.mismatch"),
// and the general fixes of a log explanation, named by the explanation's
// message id and the fix's index ("cuda_driver_mismatch.nvml#0"; the index
// is the same in every language, which messages_test checks). When a log
// report would list several members of a group, it keeps only the first
// check finding of the group that is present, which quotes this machine's
// state, and drops the rest; with no check's finding present, the
// explanation's fixes all stay.
var sameFix = [][]string{
	// Kernel module and libraries disagree: reboot, or reload the modules.
	{"nvidia.version_match.mismatch", "nvidia.nvml_init.LIB_RM_VERSION_MISMATCH", "cuda_driver_mismatch.nvml#0", "cuda_driver_mismatch.nvml#1"},
	// The framework's CUDA is newer than the driver's: upgrade the driver or
	// install a build for the driver's CUDA.
	{"cuda.framework_runtime.major", "cuda.framework_runtime.minor", "cuda_driver_mismatch#0", "cuda_driver_mismatch#1"},
	// No driver loaded: load or install it.
	{"nvidia.driver_loaded.no_driver", "no_gpu_found#0"},
	// A visibility variable hides or misnames the GPUs.
	{"env.visible_devices.hidden", "env.visible_devices.bad_entry", "env.visible_devices.out_of_range", "env.visible_devices.unknown_uuid", "no_gpu_found#1"},
	// A container started without the NVIDIA runtime.
	{"container.gpu_access.not_passed", "no_gpu_found#2"},
	// nvidia_uvm not loaded / /dev/nvidia-uvm missing.
	{"nvidia.device_nodes.missing_uvm", "no_gpu_found.cuda_unknown#0", "no_gpu_found.cuda_unknown#1"},
	// Other processes hold the GPU's memory.
	{"gpu.memory_in_use.busy", "out_of_memory#3"},
	// An x86_64 Python under Rosetta, or a macOS too old for MPS.
	{"apple.rosetta.translated", "no_gpu_found.mps#0"},
	{"apple.macos_version.no_mps", "no_gpu_found.mps#1"},
}

// fix is one line of a log report's fixes with the identity sameFix uses.
type fix struct{ id, text string }

// messageFixID names fix i of the explanation message id.
func messageFixID(id string, i int) string { return id + "#" + strconv.Itoa(i) }

// distinctFixes drops the fixes a group keeps another member of, and any
// text already listed (two checks broken the same way say the same thing).
func distinctFixes(fixes []fix) []string {
	present := map[string]bool{}
	for _, f := range fixes {
		present[f.id] = true
	}
	drop := map[string]bool{}
	for _, g := range sameFix {
		// Groups list the checks' findings first; an explanation's fixes
		// are distinct steps among themselves, dropped only for a check's.
		kept := ""
		for _, id := range g {
			switch {
			case !present[id]:
			case kept == "":
				kept = id
			case !strings.Contains(kept, "#"):
				drop[id] = true
			}
		}
	}
	out := []string{}
	seen := map[string]bool{}
	for _, f := range fixes {
		if drop[f.id] || seen[f.text] {
			continue
		}
		seen[f.text] = true
		out = append(out, f.text)
	}
	return out
}

// runsDoctor reports whether a general fix only says to run devctl doctor:
// pointless once the related checks have run.
func runsDoctor(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "devctl doctor")
}
