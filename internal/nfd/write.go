package nfd

import (
	"fmt"
	"time"

	"github.com/devctl/devctl/internal/target"
)

// Write replaces the feature file at path atomically under the one output
// policy (target.NFDFile): the data goes to a dot-file in the same
// directory (nfd-worker skips dot-files), which is synced and renamed over
// path, so NFD never reads half a file. A symbolic link, device, socket or
// directory at path, or a missing directory, is refused (exit 2); a FIFO
// is written into.
func Write(path string, data []byte) error {
	if len(data) >= MaxSize {
		return fmt.Errorf("%s: %d bytes; NFD ignores feature files of %d bytes or more", path, len(data), MaxSize)
	}
	return target.NFDFile.Write(path, data)
}

// MinExpiry is the shortest lifetime devctl gives its labels. nfd-worker
// re-reads feature files once per core.sleepInterval, 60s by default
// (https://kubernetes-sigs.github.io/node-feature-discovery/v0.19/reference/worker-configuration-reference),
// and the expiry-time directive has whole seconds (RFC 3339): labels that
// expire within a minute of the write may be gone before the worker's next
// pass publishes them, and --nfd-expiry 1ns wrote labels already expired.
const MinExpiry = time.Minute

// CheckExpiry checks a label lifetime: 0 (never expire) or at least
// MinExpiry.
func CheckExpiry(d time.Duration) error {
	if d == 0 || d >= MinExpiry {
		return nil
	}
	return fmt.Errorf("want 0 (labels never expire) or at least %s (nfd-worker re-reads feature files every 60s by default), such as 1h", MinExpiry)
}
