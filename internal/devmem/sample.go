package devmem

import (
	"context"
	"errors"
	"time"
)

// Usage is one process's memory on one device at one reading.
type Usage struct {
	PID int
	// Device names the device within one Source: an NVML index, a GPU
	// UUID, a PCI address.
	Device string
	Bytes  int64
}

// Reading is what one poll of a Source saw: every process it lists, the
// job's and others'.
type Reading []Usage

// Source reads the device memory of processes. Read returns the readings
// taken since the last call (one for a source polled on demand, several
// or none for a stream); returning a reading twice is harmless, since only
// the peak is kept.
type Source interface {
	Method() string
	Read(ctx context.Context) ([]Reading, error)
	Close() error
}

// ErrUnavailable says a source cannot run on this machine or build (no
// NVML without cgo, no nvidia-smi on PATH).
var ErrUnavailable = errors.New("not available")

// Sample polls src every interval until ctx ends and returns the peak of
// the processes isJob accepts. It reads once more when ctx ends, so a job
// shorter than the interval is still seen if it held memory at its end.
// Samples is 0 when no reading was taken.
func Sample(ctx context.Context, src Source, isJob func(pid int) bool, interval time.Duration) (Measurement, error) {
	m := Measurement{Method: src.Method(), IntervalMS: interval.Milliseconds()}
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastErr error
	read := func(rctx context.Context) {
		rs, err := src.Read(rctx)
		if err != nil {
			lastErr = err
			return
		}
		for _, r := range rs {
			m.add(r, isJob)
		}
	}
	for {
		select {
		case <-ctx.Done():
			// One last look with a short deadline of its own.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), interval)
			read(rctx)
			cancel()
			if m.Samples == 0 && lastErr != nil {
				return m, lastErr
			}
			return m, nil
		case <-t.C:
			read(ctx)
		}
	}
}

// add folds one reading into the peak: the job's bytes per device, the
// busiest device and the sum over devices.
func (m *Measurement) add(r Reading, isJob func(pid int) bool) {
	m.Samples++
	per := map[string]int64{}
	var total int64
	for _, u := range r {
		if u.Bytes <= 0 || !isJob(u.PID) {
			continue
		}
		per[u.Device] += u.Bytes
		total += u.Bytes
	}
	for _, b := range per {
		m.PeakBytes = max(m.PeakBytes, b)
	}
	m.TotalPeakBytes = max(m.TotalPeakBytes, total)
	m.Devices = max(m.Devices, len(per))
}
