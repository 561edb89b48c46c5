package serve

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The go_* families of --runtime-metrics. Their names and types are those
// of prometheus/client_golang v1.25.0's default Go collector (recorded in
// testdata/runtime-client_golang-v1.25.0.prom, whose help texts also name
// the runtime/metrics each one is the sum of); the values are read the same
// way: runtime/metrics, which does not stop the world (runtime.ReadMemStats
// does), plus debug.ReadGCStats for the pause quantiles and the last GC
// and runtime.ThreadCreateProfile for the thread count.

// The runtime/metrics read on each scrape, by index.
const (
	rmHeapObjectsBytes = iota
	rmHeapAllocsBytes
	rmProfilingBuckets
	rmHeapFreesObjects
	rmTinyAllocs
	rmMetadataOther
	rmHeapFree
	rmHeapReleased
	rmHeapUnused
	rmHeapObjects
	rmHeapAllocsObjects
	rmMcacheInuse
	rmMcacheFree
	rmMspanInuse
	rmMspanFree
	rmHeapGoal
	rmOther
	rmHeapStacks
	rmOSStacks
	rmTotal
	rmGoroutines
	rmGOGC
	rmGOMEMLIMIT
	rmGOMAXPROCS
	rmCount
)

var runtimeMetricNames = [rmCount]string{
	rmHeapObjectsBytes:  "/memory/classes/heap/objects:bytes",
	rmHeapAllocsBytes:   "/gc/heap/allocs:bytes",
	rmProfilingBuckets:  "/memory/classes/profiling/buckets:bytes",
	rmHeapFreesObjects:  "/gc/heap/frees:objects",
	rmTinyAllocs:        "/gc/heap/tiny/allocs:objects",
	rmMetadataOther:     "/memory/classes/metadata/other:bytes",
	rmHeapFree:          "/memory/classes/heap/free:bytes",
	rmHeapReleased:      "/memory/classes/heap/released:bytes",
	rmHeapUnused:        "/memory/classes/heap/unused:bytes",
	rmHeapObjects:       "/gc/heap/objects:objects",
	rmHeapAllocsObjects: "/gc/heap/allocs:objects",
	rmMcacheInuse:       "/memory/classes/metadata/mcache/inuse:bytes",
	rmMcacheFree:        "/memory/classes/metadata/mcache/free:bytes",
	rmMspanInuse:        "/memory/classes/metadata/mspan/inuse:bytes",
	rmMspanFree:         "/memory/classes/metadata/mspan/free:bytes",
	rmHeapGoal:          "/gc/heap/goal:bytes",
	rmOther:             "/memory/classes/other:bytes",
	rmHeapStacks:        "/memory/classes/heap/stacks:bytes",
	rmOSStacks:          "/memory/classes/os-stacks:bytes",
	rmTotal:             "/memory/classes/total:bytes",
	rmGoroutines:        "/sched/goroutines:goroutines",
	rmGOGC:              "/gc/gogc:percent",
	rmGOMEMLIMIT:        "/gc/gomemlimit:bytes",
	rmGOMAXPROCS:        "/sched/gomaxprocs:threads",
}

// runtimeFamilies reads the Go runtime's and the process's figures now.
func runtimeFamilies() []*family {
	var s [rmCount]metrics.Sample
	for i := range s {
		s[i].Name = runtimeMetricNames[i]
	}
	metrics.Read(s[:])
	v := func(idx ...int) float64 {
		var sum float64
		for _, i := range idx {
			switch s[i].Value.Kind() {
			case metrics.KindUint64:
				sum += float64(s[i].Value.Uint64())
			case metrics.KindFloat64:
				sum += s[i].Value.Float64()
			}
		}
		return sum
	}
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

	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	pauses := newFamily("go_gc_duration_seconds", "Stop-the-world pauses of garbage collection: minimum, quartiles and maximum of the last 256 (debug.ReadGCStats).", summary, "quantile")
	for i, q := range gc.PauseQuantiles {
		pauses.add(q.Seconds(), quantileLabel(i, len(gc.PauseQuantiles)))
	}
	pauses.sum, pauses.count = gc.PauseTotal.Seconds(), float64(gc.NumGC)
	info := newFamily("go_info", "The Go version devctl was built with; always 1.", gauge, "version")
	info.add(1, runtime.Version())
	threads, _ := runtime.ThreadCreateProfile(nil)

	fams := []*family{
		pauses,
		info,
		g("go_gc_gogc_percent", "GOGC, the heap growth percentage that triggers a collection (/gc/gogc:percent).", v(rmGOGC)),
		g("go_gc_gomemlimit_bytes", "GOMEMLIMIT, the Go runtime's memory limit (/gc/gomemlimit:bytes).", v(rmGOMEMLIMIT)),
		g("go_goroutines", "Goroutines that exist now (/sched/goroutines:goroutines).", v(rmGoroutines)),
		g("go_threads", "Operating-system threads the Go runtime has created (runtime.ThreadCreateProfile).", float64(threads)),
		g("go_sched_gomaxprocs_threads", "GOMAXPROCS, the threads that run Go code at once (/sched/gomaxprocs:threads).", v(rmGOMAXPROCS)),
		g("go_memstats_alloc_bytes", "Bytes of heap objects in use (/memory/classes/heap/objects:bytes).", v(rmHeapObjectsBytes)),
		c("go_memstats_alloc_bytes_total", "Bytes allocated on the heap since start, freed or not (/gc/heap/allocs:bytes).", v(rmHeapAllocsBytes)),
		g("go_memstats_buck_hash_sys_bytes", "Bytes of the profiling bucket hash table (/memory/classes/profiling/buckets:bytes).", v(rmProfilingBuckets)),
		c("go_memstats_frees_total", "Heap objects freed since start (/gc/heap/frees:objects + /gc/heap/tiny/allocs:objects).", v(rmHeapFreesObjects, rmTinyAllocs)),
		g("go_memstats_gc_sys_bytes", "Bytes of garbage collector metadata (/memory/classes/metadata/other:bytes).", v(rmMetadataOther)),
		g("go_memstats_heap_alloc_bytes", "Bytes of heap objects in use, as go_memstats_alloc_bytes (/memory/classes/heap/objects:bytes).", v(rmHeapObjectsBytes)),
		g("go_memstats_heap_idle_bytes", "Heap bytes not in use (/memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes).", v(rmHeapReleased, rmHeapFree)),
		g("go_memstats_heap_inuse_bytes", "Heap bytes in spans in use (/memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes).", v(rmHeapObjectsBytes, rmHeapUnused)),
		g("go_memstats_heap_objects", "Heap objects in use (/gc/heap/objects:objects).", v(rmHeapObjects)),
		g("go_memstats_heap_released_bytes", "Heap bytes returned to the operating system (/memory/classes/heap/released:bytes).", v(rmHeapReleased)),
		g("go_memstats_heap_sys_bytes", "Heap bytes obtained from the operating system (/memory/classes/heap/objects, unused, released and free:bytes).", v(rmHeapObjectsBytes, rmHeapUnused, rmHeapReleased, rmHeapFree)),
		g("go_memstats_last_gc_time_seconds", "When the last garbage collection ended (Unix time; 0 before the first).", float64(gc.LastGC.UnixNano())/1e9),
		c("go_memstats_mallocs_total", "Heap objects allocated since start (/gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects).", v(rmHeapAllocsObjects, rmTinyAllocs)),
		g("go_memstats_mcache_inuse_bytes", "Bytes of mcache structures in use (/memory/classes/metadata/mcache/inuse:bytes).", v(rmMcacheInuse)),
		g("go_memstats_mcache_sys_bytes", "Bytes of mcache structures obtained from the operating system (/memory/classes/metadata/mcache/inuse + free:bytes).", v(rmMcacheInuse, rmMcacheFree)),
		g("go_memstats_mspan_inuse_bytes", "Bytes of mspan structures in use (/memory/classes/metadata/mspan/inuse:bytes).", v(rmMspanInuse)),
		g("go_memstats_mspan_sys_bytes", "Bytes of mspan structures obtained from the operating system (/memory/classes/metadata/mspan/inuse + free:bytes).", v(rmMspanInuse, rmMspanFree)),
		g("go_memstats_next_gc_bytes", "Heap size at which the next collection starts (/gc/heap/goal:bytes).", v(rmHeapGoal)),
		g("go_memstats_other_sys_bytes", "Bytes of other runtime allocations (/memory/classes/other:bytes).", v(rmOther)),
		g("go_memstats_stack_inuse_bytes", "Bytes of goroutine stacks in heap memory (/memory/classes/heap/stacks:bytes).", v(rmHeapStacks)),
		g("go_memstats_stack_sys_bytes", "Bytes of stack memory obtained from the operating system (/memory/classes/heap/stacks + os-stacks:bytes).", v(rmHeapStacks, rmOSStacks)),
		g("go_memstats_sys_bytes", "Bytes the Go runtime obtained from the operating system (/memory/classes/total:bytes).", v(rmTotal)),
	}
	return append(fams, processFamilies()...)
}

// quantileLabel names the i-th of n evenly spaced quantiles: 0, 0.25,
// 0.5, 0.75 and 1 for n = 5, as debug.GCStats.PauseQuantiles holds them.
func quantileLabel(i, n int) string {
	return string(appendFloat(nil, float64(i)/float64(n-1)))
}
