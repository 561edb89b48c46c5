package serve

import (
	"runtime"
	"runtime/debug"
	"time"
)

// The go_* families of --runtime-metrics: the names and types of
// prometheus/client_golang v1.25.0's default Go collector (recorded in
// testdata/runtime-client_golang-v1.25.0.prom) but go_gc_gogc_percent.
//
// They are read from runtime.ReadMemStats, whose fields the go_memstats_*
// names are named after, debug.ReadGCStats (pause quantiles), and
// runtime, not from runtime/metrics: that package's set-up (95 allocations,
// 15 KB, measured with GODEBUG=inittrace=1) would run at every devctl
// start, `devctl probe` included, to serve a flag few use. The price is a
// stop-the-world pause of ReadMemStats, microseconds on devctl's small
// heap, on each scrape with --runtime-metrics. GOGC has no read-only API
// outside runtime/metrics (debug.SetGCPercent changes it), so
// go_gc_gogc_percent is left out.
func runtimeFamilies() []*family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	threads, _ := runtime.ThreadCreateProfile(nil)

	g := func(name, help string, value float64) *family {
		f := newFamily(name, help, gauge)
		f.add(value)
		return f
	}
	c := func(name, help string, value float64) *family {
		f := newFamily(name, help, counter)
		f.add(value)
		return f
	}
	pauses := newFamily("go_gc_duration_seconds", "Stop-the-world pauses of garbage collection: minimum, quartiles and maximum of the last 256 (debug.ReadGCStats).", summary, "quantile")
	for i, q := range gc.PauseQuantiles {
		pauses.add(q.Seconds(), quantileLabel(i, len(gc.PauseQuantiles)))
	}
	pauses.sum, pauses.count = gc.PauseTotal.Seconds(), float64(gc.NumGC)
	info := newFamily("go_info", "The Go version devctl was built with; always 1.", gauge, "version")
	info.add(1, runtime.Version())

	fams := []*family{
		pauses,
		info,
		g("go_gc_gomemlimit_bytes", "GOMEMLIMIT, the Go runtime's memory limit (debug.SetMemoryLimit(-1)).", float64(debug.SetMemoryLimit(-1))),
		g("go_goroutines", "Goroutines that exist now.", float64(runtime.NumGoroutine())),
		g("go_threads", "Operating-system threads the Go runtime has created (runtime.ThreadCreateProfile).", float64(threads)),
		g("go_sched_gomaxprocs_threads", "GOMAXPROCS, the threads that run Go code at once.", float64(runtime.GOMAXPROCS(0))),
		g("go_memstats_alloc_bytes", "Bytes of heap objects in use (MemStats.Alloc).", float64(ms.Alloc)),
		c("go_memstats_alloc_bytes_total", "Bytes allocated on the heap since start, freed or not (MemStats.TotalAlloc).", float64(ms.TotalAlloc)),
		g("go_memstats_buck_hash_sys_bytes", "Bytes of the profiling bucket hash table (MemStats.BuckHashSys).", float64(ms.BuckHashSys)),
		c("go_memstats_frees_total", "Heap objects freed since start (MemStats.Frees).", float64(ms.Frees)),
		g("go_memstats_gc_sys_bytes", "Bytes of garbage collector metadata (MemStats.GCSys).", float64(ms.GCSys)),
		g("go_memstats_heap_alloc_bytes", "Bytes of heap objects in use, as go_memstats_alloc_bytes (MemStats.HeapAlloc).", float64(ms.HeapAlloc)),
		g("go_memstats_heap_idle_bytes", "Heap bytes in spans not in use (MemStats.HeapIdle).", float64(ms.HeapIdle)),
		g("go_memstats_heap_inuse_bytes", "Heap bytes in spans in use (MemStats.HeapInuse).", float64(ms.HeapInuse)),
		g("go_memstats_heap_objects", "Heap objects in use (MemStats.HeapObjects).", float64(ms.HeapObjects)),
		g("go_memstats_heap_released_bytes", "Heap bytes returned to the operating system (MemStats.HeapReleased).", float64(ms.HeapReleased)),
		g("go_memstats_heap_sys_bytes", "Heap bytes obtained from the operating system (MemStats.HeapSys).", float64(ms.HeapSys)),
		g("go_memstats_last_gc_time_seconds", "When the last garbage collection ended (Unix time; 0 before the first).", float64(ms.LastGC)/1e9),
		c("go_memstats_mallocs_total", "Heap objects allocated since start (MemStats.Mallocs).", float64(ms.Mallocs)),
		g("go_memstats_mcache_inuse_bytes", "Bytes of mcache structures in use (MemStats.MCacheInuse).", float64(ms.MCacheInuse)),
		g("go_memstats_mcache_sys_bytes", "Bytes of mcache structures obtained from the operating system (MemStats.MCacheSys).", float64(ms.MCacheSys)),
		g("go_memstats_mspan_inuse_bytes", "Bytes of mspan structures in use (MemStats.MSpanInuse).", float64(ms.MSpanInuse)),
		g("go_memstats_mspan_sys_bytes", "Bytes of mspan structures obtained from the operating system (MemStats.MSpanSys).", float64(ms.MSpanSys)),
		g("go_memstats_next_gc_bytes", "Heap size at which the next collection starts (MemStats.NextGC).", float64(ms.NextGC)),
		g("go_memstats_other_sys_bytes", "Bytes of other runtime allocations (MemStats.OtherSys).", float64(ms.OtherSys)),
		g("go_memstats_stack_inuse_bytes", "Bytes of goroutine stack spans in use (MemStats.StackInuse).", float64(ms.StackInuse)),
		g("go_memstats_stack_sys_bytes", "Bytes of stack memory obtained from the operating system (MemStats.StackSys).", float64(ms.StackSys)),
		g("go_memstats_sys_bytes", "Bytes the Go runtime obtained from the operating system (MemStats.Sys).", float64(ms.Sys)),
	}
	return append(fams, processFamilies()...)
}

// quantileLabel names the i-th of n evenly spaced quantiles: 0, 0.25, 0.5,
// 0.75 and 1 for n = 5, as debug.GCStats.PauseQuantiles holds them.
func quantileLabel(i, n int) string {
	return string(appendFloat(nil, float64(i)/float64(n-1)))
}
