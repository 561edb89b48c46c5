package host

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"
)

// Once runs fn the first time any caller asks for key on h and gives every
// caller, concurrent or later, that same answer. Drivers run concurrently
// and several read the same tables (the PCI bus, the mount table, cgroup
// limits); Once lets them share one read per probe without a package-level
// cache that would outlive the Host. Entries are dropped when h is
// garbage-collected.
func Once[T any](h *Host, key string, fn func() (T, error)) (T, error) {
	m := memoFor(h)
	m.mu.Lock()
	e, ok := m.entries[key]
	if !ok {
		e = &memoEntry{}
		m.entries[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() {
		e.val, e.err = fn()
		e.done.Store(true)
	})
	v, _ := e.val.(T)
	return v, e.err
}

// Done gives the answer Once computed for key on h, if it has finished;
// ok is false when nobody asked or the computation is still running. It
// never waits, so a reader of a driver's answers (doctor) is not held by
// a driver that hung past its deadline.
func Done[T any](h *Host, key string) (v T, err error, ok bool) {
	m := memoFor(h)
	m.mu.Lock()
	e := m.entries[key]
	m.mu.Unlock()
	if e == nil || !e.done.Load() {
		return v, nil, false
	}
	v, _ = e.val.(T)
	return v, e.err, true
}

type memoEntry struct {
	once sync.Once
	done atomic.Bool
	val  any
	err  error
}

type hostMemo struct {
	mu      sync.Mutex
	entries map[string]*memoEntry
}

// memos maps a weak pointer to a Host onto its memo table: weak keys let a
// Host (a test's, a replay's) be collected, and the cleanup drops its table.
var memos sync.Map // weak.Pointer[Host] -> *hostMemo

func memoFor(h *Host) *hostMemo {
	key := weak.Make(h)
	v, loaded := memos.LoadOrStore(key, &hostMemo{entries: map[string]*memoEntry{}})
	if !loaded {
		runtime.AddCleanup(h, func(k weak.Pointer[Host]) { memos.Delete(k) }, key)
	}
	return v.(*hostMemo)
}
