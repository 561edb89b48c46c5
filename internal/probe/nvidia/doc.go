// Package nvidia is the probe driver for NVIDIA GPUs.
//
// It works in two layers so that a snapshot can carry NVML's answers to a
// machine that has no NVML (macOS, a cgo-free build, CI):
//
//   - Collection (nvml_cgo.go, linux && cgo only) asks go-nvml through its
//     nvml.Interface and writes every answer, with its NVML return code, into
//     a plain JSON-serialisable Raw value. host.NVML.Query returns that JSON.
//   - Interpretation (everything else, pure Go on every platform) decodes Raw
//     and turns it into devctl's devices and platform. The nvidia-smi fallback
//     and /proc/driver/nvidia/version parsing live here too.
//
// The doctor command reads the same Raw (probe.Result.Raw is a *Raw) and uses
// Return.Name/Meaning, so nothing outside this package imports go-nvml.
package nvidia
