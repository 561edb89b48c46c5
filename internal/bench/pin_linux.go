//go:build linux

package bench

import "golang.org/x/sys/unix"

// allowedCPUs lists the CPUs this process may run on, in order.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for i := 0; i < len(set)*64 && len(out) < set.Count(); i++ {
		if set.IsSet(i) {
			out = append(out, i)
		}
	}
	return out
}

// pin binds the calling OS thread (already locked to its goroutine) to one
// CPU. Failure is not fatal: the figure is then just less repeatable.
func pin(cpu int) bool {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set) == nil
}
