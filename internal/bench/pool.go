package bench

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// pool is a set of worker goroutines, each locked to its own OS thread and,
// on Linux, pinned to one CPU, so that a figure measures n CPUs working
// rather than the scheduler moving threads about. A job starts on every
// worker at once (after all have received it) and its time runs until the
// last one finishes.
type pool struct {
	jobs   []chan job
	pinned bool
}

type job struct {
	f     func(worker int)
	start <-chan struct{}
	ready *sync.WaitGroup
	done  *sync.WaitGroup
}

func newPool(n int) *pool {
	cpus := allowedCPUs()
	p := &pool{jobs: make([]chan job, n)}
	var up sync.WaitGroup
	var pinnedAll atomic.Bool
	pinnedAll.Store(len(cpus) > 0)
	for i := range p.jobs {
		ch := make(chan job)
		p.jobs[i] = ch
		up.Add(1)
		go func(i int) {
			// Never unlocked: when the goroutine ends, its thread ends with
			// it, and so does the affinity set below.
			runtime.LockOSThread()
			if len(cpus) == 0 || !pin(cpus[i%len(cpus)]) {
				pinnedAll.Store(false)
			}
			up.Done()
			for j := range ch {
				j.ready.Done()
				<-j.start
				j.f(i)
				j.done.Done()
			}
		}(i)
	}
	up.Wait()
	p.pinned = pinnedAll.Load()
	return p
}

// run runs f on every worker at once and returns the wall time from the
// common start to the last worker's end.
func (p *pool) run(f func(worker int)) time.Duration {
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	ready.Add(len(p.jobs))
	done.Add(len(p.jobs))
	for _, ch := range p.jobs {
		ch <- job{f: f, start: start, ready: &ready, done: &done}
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	done.Wait()
	return time.Since(t0)
}

func (p *pool) close() {
	for _, ch := range p.jobs {
		close(ch)
	}
}
