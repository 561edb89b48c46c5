// Package devmem measures the device memory a supervised job uses while it
// runs, so that `devctl run` can put the peak beside the plan's estimate
// and `devctl history` and `recommend` can say how plans compared with
// reality.
//
// A Source reads, once per call, how much device memory each process
// holds on each device: NVML's per-process list (nvmlDeviceGetCompute-
// RunningProcesses, through go-nvml in internal/probe/nvidia), a long-lived
// `nvidia-smi --query-compute-apps ... -lms N` stream (SMI), or the
// kernel's DRM client statistics in /proc/<pid>/fdinfo (amdgpu and xe:
// FDInfo). Sample calls a Source every interval, keeps the samples of the
// job's processes only (Job: the descendants of a process, read from
// /proc) and returns the peak.
//
// Sampling is built to cost well under 1% of a CPU at one sample a second
// (scripts/bench-devmem.sh measures it): NVML is initialised once, the
// nvidia-smi stream is one process doing its own polling, and a pid is
// matched against the job by walking its parents in /proc only the first
// time it is seen.
//
// The package never prints and never reads the process environment.
package devmem
