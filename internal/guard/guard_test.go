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

func TestAllAnswersEveryIndexOnceInOrder(t *testing.T) {
	var seen [50]atomic.Int32
	got := All(context.Background(), time.Second, len(seen), func(_ context.Context, i int) (int, error) {
		seen[i].Add(1)
		return i * 2, nil
	})
	for i := range seen {
		if seen[i].Load() != 1 || got[i].Value != i*2 || got[i].Err != nil {
			t.Fatalf("index %d ran %d times, answered %+v", i, seen[i].Load(), got[i])
		}
	}
}

func TestAllIsolatesPanicsAndHangs(t *testing.T) {
	boom := errors.New("boom")
	start := time.Now()
	got := All(context.Background(), 50*time.Millisecond, 4, func(ctx context.Context, i int) (string, error) {
		switch i {
		case 0:
			return "ok", nil
		case 1:
			return "partial", boom
		case 2:
			var m map[string]int
			m["x"]++ // panics
			return "never", nil
		default:
			time.Sleep(5 * time.Second) // ignores ctx, like a wedged driver
			return "late", nil
		}
	})
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("All waited %s for a hung call", took)
	}
	if got[0].Value != "ok" || got[0].Err != nil {
		t.Errorf("answer: %+v", got[0])
	}
	if got[1].Value != "partial" || !errors.Is(got[1].Err, boom) {
		t.Errorf("error: %+v", got[1])
	}
	if got[2].Value != "" || !errors.Is(got[2].Err, ErrPanic) || got[2].Err.Error() != "panicked: assignment to entry in nil map" {
		t.Errorf("panic: %+v", got[2])
	}
	if got[3].Value != "" || !errors.Is(got[3].Err, context.DeadlineExceeded) || got[3].Took < 50*time.Millisecond {
		t.Errorf("hang: %+v", got[3])
	}
}

func TestAllWithNoCalls(t *testing.T) {
	if got := All(context.Background(), time.Second, 0, func(context.Context, int) (int, error) { return 0, nil }); len(got) != 0 {
		t.Errorf("got %v", got)
	}
}
