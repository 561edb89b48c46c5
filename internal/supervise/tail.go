package supervise

import "sync"

// DefaultTailBytes bounds the output kept for diagnosis: the classifier
// reads at most this much of a log's end (explain.MaxTail) anyway.
const DefaultTailBytes = 32 << 20

// tail keeps the end of the output without copying the bulk of it: a
// large read stays in the buffer it was read into, which joins the tail
// as it is; small reads are packed into a shared buffer. Buffers that fall
// out of the tail are reused for the next reads. Memory is bounded by max
// (counted by buffer capacity), and the tail holds at least (max-bufLen)/2
// bytes once that much was written (every kept buffer but the newest is at
// least half full): 15.5 MiB of the default 32 MiB with 1 MiB reads. A
// fast stream costs one copy fewer than a ring would.
type tail struct {
	mu     sync.Mutex
	max    int
	chunks [][]byte // oldest first
	held   int      // sum of cap(chunks)
	free   [][]byte
	total  int64
	bufLen int
}

func newTail(max, bufLen int) *tail { return &tail{max: max, bufLen: bufLen} }

// buffer returns a buffer of bufLen bytes to read into.
func (t *tail) buffer() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bufferLocked()
}

func (t *tail) bufferLocked() []byte {
	if n := len(t.free); n > 0 {
		b := t.free[n-1]
		t.free = t.free[:n-1]
		return b[:t.bufLen]
	}
	return make([]byte, t.bufLen)
}

// keep adds p, the start of a buffer from buffer(), to the tail. It
// returns the buffer to read into next: a fresh one when p's buffer was
// kept whole, the same one when p was copied.
func (t *tail) keep(p []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if t.max <= 0 {
		return p[:cap(p)]
	}
	if len(p) >= cap(p)/2 {
		t.push(p)
		return t.bufferLocked()
	}
	// A small read: pack it into the newest chunk when it has room.
	if n := len(t.chunks); n > 0 {
		last := t.chunks[n-1]
		if cap(last)-len(last) >= len(p) {
			t.chunks[n-1] = append(last, p...)
			return p[:cap(p)]
		}
	}
	b := make([]byte, 0, max(t.bufLen, len(p)))
	if n := len(t.free); n > 0 {
		b = t.free[n-1][:0]
		t.free = t.free[:n-1]
	}
	t.push(append(b, p...))
	return p[:cap(p)]
}

func (t *tail) push(c []byte) {
	t.chunks = append(t.chunks, c)
	t.held += cap(c)
	for t.held > t.max && len(t.chunks) > 1 {
		old := t.chunks[0]
		t.chunks = t.chunks[1:]
		t.held -= cap(old)
		if cap(old) == t.bufLen && len(t.free) < 4 {
			t.free = append(t.free, old[:0])
		}
	}
}

// Write adds a copy of p (for callers that own no tail buffer).
func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		b := t.buffer()
		k := copy(b, p)
		p = p[k:]
		t.keep(b[:k])
	}
	return n, nil
}

// Bytes returns the kept tail, oldest byte first, at most max bytes, and
// whether older output was dropped.
func (t *tail) Bytes() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.chunks {
		n += len(c)
	}
	out := make([]byte, 0, n)
	for _, c := range t.chunks {
		out = append(out, c...)
	}
	if t.max > 0 && len(out) > t.max {
		out = out[len(out)-t.max:]
	}
	return out, t.total > int64(len(out))
}
