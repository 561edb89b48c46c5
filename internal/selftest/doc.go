// Package selftest asks the frameworks, not only the kernel, what a device
// really does: it runs the user's own Python interpreter on a small script
// devctl carries (selftest.py, embedded) that, for each framework installed
// (torch, jax, tensorflow) and each device the framework exposes,
// allocates, copies host<->device, runs matmul, conv1d, linear, layernorm
// and a tiny backward pass in each precision the probe claims for the
// device, and reports timings and the first error of each operation. The
// errors are read by devctl's log classifier (internal/explain).
//
// The interpreter runs in bounded children, one per framework, side by
// side: a shared time limit, a process group each that is killed on every
// exit path (SIGKILL; the child also dies with devctl through Pdeathsig on
// Linux), an address-space limit the script sets on itself before it
// imports anything (RLIMIT_AS; the caller leaves it off where CUDA's
// address-space reservations would break it), no proxies and the Hugging
// Face libraries offline, and on Linux a network namespace of its own when
// the kernel grants one. Output is bounded: a child that prints more than
// MaxOutput bytes is killed. A missing interpreter, a framework that hangs
// on import or crashes, a device that wedges: each is a finding in the
// Outcome, never a hang of devctl.
package selftest
