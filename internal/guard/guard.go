// Package guard runs code that may hang or panic (a probe driver, a doctor
// check, a vendor library call) so that it can do neither to its caller.
package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrPanic wraps the value of a recovered panic.
var ErrPanic = errors.New("panicked")

// Run calls fn in its own goroutine and returns its answer, or ctx's error
// when ctx ends first (with timeout > 0, after at most timeout), or an
// ErrPanic error when fn panics. A call that ignores ctx is abandoned, not
// waited for: a wedged driver cannot block the rest of a report.
func Run[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type answer struct {
		v   T
		err error
	}
	ch := make(chan answer, 1) // buffered: an abandoned call can still finish
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- answer{err: fmt.Errorf("%w: %v", ErrPanic, r)}
			}
		}()
		v, err := fn(ctx)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Each calls fn(i) for i in [0, n) concurrently and waits for all.
func Each(n int, fn func(i int)) {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			fn(i)
		}()
	}
	wg.Wait()
}
