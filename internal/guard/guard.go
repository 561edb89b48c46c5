// Package guard runs code that may hang or panic (a probe driver, a doctor
// check, a vendor library call) so that it can do neither to its caller.
package guard

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrPanic wraps the value of a recovered panic.
var ErrPanic = errors.New("panicked")

// Run calls fn in its own goroutine and returns its answer, or ctx's error
// when ctx ends first (with timeout > 0, after at most timeout), or an
// ErrPanic error when fn panics. A call that ignores ctx is abandoned, not
// waited for: a wedged driver cannot block the rest of a report.
func Run[T any](ctx context.Context, timeout time.Duration, fn func(context.Context) (T, error)) (T, error) {
	a := All(ctx, timeout, 1, func(ctx context.Context, _ int) (T, error) { return fn(ctx) })[0]
	return a.Value, a.Err
}

// Answer is one call's result in All, with the time it took.
type Answer[T any] struct {
	Value T
	Err   error
	Took  time.Duration
}

// All calls fn(ctx, i) for i in [0, n), each in its own goroutine, and
// returns the answers in order once every call has answered or ctx has
// ended (with timeout > 0, after at most timeout). The calls start
// together, so one deadline is each call's deadline. A call still running
// then gets ctx's error and is abandoned, not waited for; a call that
// panics gets an ErrPanic error. One goroutine per call and one timer in
// all: devctl probe starts every driver this way, and each goroutine it
// does not start is start-up time saved.
func All[T any](ctx context.Context, timeout time.Duration, n int, fn func(context.Context, int) (T, error)) []Answer[T] {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type answered struct {
		i int
		a Answer[T]
	}
	ch := make(chan answered, n) // buffered: an abandoned call can still finish
	start := time.Now()
	for i := 0; i < n; i++ {
		go func() {
			var a Answer[T]
			defer func() {
				if r := recover(); r != nil {
					a = Answer[T]{Err: fmt.Errorf("%w: %v", ErrPanic, r)}
				}
				a.Took = time.Since(start)
				ch <- answered{i, a}
			}()
			a.Value, a.Err = fn(ctx, i)
		}()
	}
	out := make([]Answer[T], n)
	done := make([]bool, n)
	for left := n; left > 0; left-- {
		select {
		case r := <-ch:
			out[r.i], done[r.i] = r.a, true
		case <-ctx.Done():
			for i := range out {
				if !done[i] {
					out[i] = Answer[T]{Err: ctx.Err(), Took: time.Since(start)}
				}
			}
			return out
		}
	}
	return out
}
