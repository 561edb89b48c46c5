package guard

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	if v, err := Run(ctx, time.Second, func(context.Context) (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Errorf("answer: %d, %v", v, err)
	}
	boom := errors.New("boom")
	if _, err := Run(ctx, time.Second, func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("error: %v", err)
	}
	_, err := Run(ctx, time.Second, func(context.Context) (int, error) {
		var m map[string]int
		m["x"]++
		return 0, nil
	})
	if !errors.Is(err, ErrPanic) || err.Error() != "panicked: assignment to entry in nil map" {
		t.Errorf("panic: %v", err)
	}
	start := time.Now()
	_, err = Run(ctx, 50*time.Millisecond, func(context.Context) (int, error) {
		time.Sleep(5 * time.Second) // ignores ctx, like a wedged driver
		return 0, nil
	})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("hang: %v after %s", err, time.Since(start))
	}
}

func TestEachRunsEveryIndexOnce(t *testing.T) {
	var seen [50]atomic.Int32
	Each(len(seen), func(i int) { seen[i].Add(1) })
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("index %d ran %d times", i, seen[i].Load())
		}
	}
}
