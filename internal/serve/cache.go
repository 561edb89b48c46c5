// Package serve is devctl's metrics and JSON endpoint (`devctl serve`):
// the probe and the doctor checks of one machine, cached, in Prometheus
// format on /metrics and as JSON on /v1/probe and /v1/doctor.
//
// However many clients ask, the machine is probed at most once per
// interval: one refresh runs at a time (singleflight), its result is
// cached, and a stale result is served while the next refresh runs. The
// package never prints and never reads flags or the environment; the
// command gives it a Refresh function.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/devctl/devctl/internal/bench"
	"github.com/devctl/devctl/internal/doctor"
	"github.com/devctl/devctl/internal/probe"
)

// Snapshot is what one refresh learned about the machine.
type Snapshot struct {
	Time     time.Time
	Duration time.Duration
	Probe    *probe.Report
	Doctor   *doctor.Report
	// Bench is the last benchmark run recorded on this host, nil if none.
	Bench *bench.Run
	// Err is why the refresh failed; Probe and Doctor may still be set.
	Err error

	// The JSON answers, encoded once per snapshot.
	probeJSON, doctorJSON lazyJSON
}

type lazyJSON struct {
	once sync.Once
	b    []byte
	err  error
}

func (l *lazyJSON) get(v any) ([]byte, error) {
	l.once.Do(func() {
		l.b, l.err = json.MarshalIndent(v, "", "  ")
		l.b = append(l.b, '\n')
	})
	return l.b, l.err
}

// RefreshFunc probes the machine afresh. It must not reuse cached reads of
// an earlier call: each call describes the machine as it is now.
type RefreshFunc func(ctx context.Context) *Snapshot

// ErrNotReady is the answer before the first refresh has finished.
var ErrNotReady = errors.New("the first probe has not finished yet")

// Cache holds the latest snapshot and refreshes it at most once per
// interval.
type Cache struct {
	refresh  RefreshFunc
	interval time.Duration
	timeout  time.Duration
	now      func() time.Time

	group singleflight.Group
	mu    sync.RWMutex
	snap  *Snapshot
	runs  atomic.Int64
	fails atomic.Int64
	// done is closed when the first refresh finishes.
	done     chan struct{}
	doneOnce sync.Once
}

// NewCache returns a cache that calls refresh at most once per interval,
// giving each call at most timeout.
func NewCache(refresh RefreshFunc, interval, timeout time.Duration, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{refresh: refresh, interval: interval, timeout: timeout, now: now, done: make(chan struct{})}
}

// Runs is how many refreshes have run (the probe count).
func (c *Cache) Runs() int64 { return c.runs.Load() }

// Failures is how many refreshes failed.
func (c *Cache) Failures() int64 { return c.fails.Load() }

// Latest returns the cached snapshot without refreshing (nil before the
// first refresh).
func (c *Cache) Latest() *Snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap
}

// Get returns a snapshot no older than the interval when one can be had
// without waiting: a stale snapshot is returned at once while a refresh
// starts in the background. Only before the first snapshot does Get wait,
// for the first refresh or until ctx ends.
func (c *Cache) Get(ctx context.Context) (*Snapshot, error) {
	snap := c.Latest()
	if snap != nil && c.now().Sub(snap.Time) < c.interval {
		return snap, nil
	}
	ch := c.group.DoChan("refresh", c.run)
	if snap != nil {
		return snap, nil // stale: the refresh above replaces it
	}
	select {
	case r := <-ch:
		return r.Val.(*Snapshot), nil
	case <-ctx.Done():
		return nil, ErrNotReady
	}
}

// Ready is closed when the first refresh has finished.
func (c *Cache) Ready() <-chan struct{} { return c.done }

func (c *Cache) run() (any, error) {
	// Another flight may have refreshed while this one was queued.
	if snap := c.Latest(); snap != nil && c.now().Sub(snap.Time) < c.interval {
		return snap, nil
	}
	// The refresh is shared by every waiting client: no one client's
	// cancellation may cut it short.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	c.runs.Add(1)
	start := c.now()
	snap := c.refresh(ctx)
	if snap == nil {
		snap = &Snapshot{Err: errors.New("the refresh returned nothing")}
	}
	snap.Time, snap.Duration = start, c.now().Sub(start)
	if snap.Err != nil {
		c.fails.Add(1)
	}
	c.mu.Lock()
	c.snap = snap
	c.mu.Unlock()
	c.doneOnce.Do(func() { close(c.done) })
	return snap, nil
}
