//go:build !linux

package serve

// processFamilies: the process_* metrics are read from /proc, which only
// Linux has.
func processFamilies() []*family { return nil }
