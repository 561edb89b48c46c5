// Package snapshot records what drivers read into a tar.gz and replays it.
// (Placeholder being replaced.)
package snapshot

import (
	"errors"

	"github.com/devctl/devctl/internal/host"
)

// Open replays a snapshot file as a Host.
func Open(path string) (*host.Host, error) {
	return nil, errors.New("snapshots are not implemented yet")
}
