package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/devctl/devctl/internal/probe"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestCacheProbesOncePerInterval(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	var calls atomic.Int64
	release := make(chan struct{})
	c := NewCache(func(ctx context.Context) *Snapshot {
		calls.Add(1)
		<-release
		return &Snapshot{Probe: &probe.Report{}}
	}, 30*time.Second, time.Minute, clk.now)

	// 200 clients ask at once before the first probe: one probe, all wait for it.
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s, err := c.Get(context.Background()); err != nil || s.Probe == nil {
				t.Errorf("Get = %v, %v", s, err)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("200 concurrent clients ran %d probes, want 1", n)
	}
	// Within the interval: cached.
	clk.add(29 * time.Second)
	for range 1000 {
		_, _ = c.Get(context.Background())
	}
	if n := c.Runs(); n != 1 {
		t.Fatalf("within the interval %d probes ran, want 1", n)
	}
	// After it: the stale snapshot is served at once and one refresh runs.
	first := c.Latest()
	clk.add(2 * time.Second)
	for range 100 {
		if s, _ := c.Get(context.Background()); s == nil {
			t.Fatal("a stale snapshot must still be served")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Latest() == first && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("after the interval %d probes ran, want 2", n)
	}
}

func TestCacheGetBeforeFirstProbeHonoursContext(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	c := NewCache(func(ctx context.Context) *Snapshot { <-block; return &Snapshot{} }, time.Second, time.Minute, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Get = %v, want ErrNotReady while the first probe runs", err)
	}
}

func TestCacheCountsFailures(t *testing.T) {
	c := NewCache(func(ctx context.Context) *Snapshot { return &Snapshot{Err: errors.New("nvml hung")} }, time.Second, time.Minute, nil)
	s, err := c.Get(context.Background())
	if err != nil || s.Err == nil || c.Failures() != 1 {
		t.Fatalf("Get = %v, %v; failures %d", s, err, c.Failures())
	}
}
