package supervise

import "sync"

// DefaultTailBytes bounds the output kept for diagnosis: the classifier
// reads at most this much of a log's end (explain.MaxTail) anyway.
const DefaultTailBytes = 32 << 20

// tail keeps the last max bytes written to it. Memory grows with the
// output, up to max, so a short run costs a short buffer.
type tail struct {
	mu    sync.Mutex
	max   int
	buf   []byte // len(buf) <= max; once full, a ring starting at start
	start int
	total int64
}

func newTail(max int) *tail { return &tail{max: max} }

// Write never fails: the tail is a side copy of the passthrough.
func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if t.max <= 0 {
		return n, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(n)
	if len(p) >= t.max {
		p = p[len(p)-t.max:]
		t.buf = append(t.buf[:0], p...)
		t.start = 0
		return n, nil
	}
	if room := t.max - len(t.buf); room > 0 {
		k := min(room, len(p))
		t.buf = append(t.buf, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // full: overwrite the oldest bytes
		k := copy(t.buf[t.start:], p)
		p = p[k:]
		t.start = (t.start + k) % len(t.buf)
	}
	return n, nil
}

// Bytes returns the kept tail, oldest byte first, and whether older output
// was dropped.
func (t *tail) Bytes() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.start:]...)
	out = append(out, t.buf[:t.start]...)
	return out, t.total > int64(len(out))
}
