//go:build !linux

package bench

// allowedCPUs is unknown off Linux: threads are locked to OS threads but
// the scheduler places them.
func allowedCPUs() []int { return nil }

func pin(int) bool { return false }
