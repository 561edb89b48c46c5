package host

import (
	"runtime"
	"sync"
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
	e.once.Do(func() { e.val, e.err = fn() })
	v, _ := e.val.(T)
	return v, e.err
}

type memoEntry struct {
	once sync.Once
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
