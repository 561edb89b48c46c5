//go:build unix && !linux

package supervisetest

func osMode([]string) (int, bool) { return 0, false }
