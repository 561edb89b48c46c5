// Package procgroup starts programs in a process group of their own and
// ends the whole group, so that a timed-out program's children (a hung
// nvidia-smi wrapper's `sleep`, a helper it forked) do not outlive it,
// reparented to init, one per devctl run.
package procgroup

import (
	"os"
	"sync"
)

// live are the groups started through Track and not yet released: what
// KillAll ends when devctl stops early (a signal, an error, any return
// path of root.Main).
var live = struct {
	sync.Mutex
	procs map[*os.Process]bool
}{procs: map[*os.Process]bool{}}

// armHook is what Starting calls: interrupt.Watch's handler installer.
var armHook struct {
	sync.Mutex
	f func()
}

// SetArmHook sets the function Starting calls (nil: none).
func SetArmHook(f func()) {
	armHook.Lock()
	armHook.f = f
	armHook.Unlock()
}

// Starting is called just before devctl starts a program: from then on a
// signal must reach devctl's handler, which ends the program's group, not
// end devctl at once and leave the program behind (interrupt.Watch).
func Starting() {
	armHook.Lock()
	f := armHook.f
	armHook.Unlock()
	if f != nil {
		f()
	}
}

// Track records p's group as live until the returned release is called.
func Track(p *os.Process) (release func()) {
	live.Lock()
	live.procs[p] = true
	live.Unlock()
	return func() {
		live.Lock()
		delete(live.procs, p)
		live.Unlock()
	}
}

// KillAll sends SIGKILL to every group still tracked. It is safe to call
// at any time, more than once, and from a signal handler's goroutine.
func KillAll() {
	live.Lock()
	procs := make([]*os.Process, 0, len(live.procs))
	for p := range live.procs {
		procs = append(procs, p)
	}
	live.Unlock()
	for _, p := range procs {
		_ = Kill(p)
	}
}
