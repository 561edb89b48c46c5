// Package procgroup starts programs in a process group of their own and
// ends the whole group, so that a timed-out program's children (a hung
// nvidia-smi wrapper's `sleep`, a helper it forked) do not outlive it,
// reparented to init, one per devctl run.
package procgroup
