package serve

import (
	"math"
	"os"
	"sync"
)

// bootTime is the btime line of /proc/stat, read once: the machine's boot
// time does not change.
var bootTime struct {
	once sync.Once
	t    float64
}

// processFamilies reads /proc/self now. The process is devctl itself, so
// this is the real /proc, never --sysroot's.
func processFamilies() []*family {
	stat, _ := os.ReadFile("/proc/self/stat")
	limits, _ := os.ReadFile("/proc/self/limits")
	bootTime.once.Do(func() {
		bootTime.t = math.NaN()
		if b, err := os.ReadFile("/proc/stat"); err == nil {
			if t, err := parseBootTime(b); err == nil {
				bootTime.t = float64(t)
			}
		}
	})
	p := procFactsFrom(stat, limits, bootTime.t, os.Getpagesize())
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, err := d.Readdirnames(-1)
		_ = d.Close()
		if err == nil {
			p.openFDs = float64(len(names))
		}
	}
	return p.families()
}
