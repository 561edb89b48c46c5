//go:build !windows

package nfd

import (
	"fmt"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// Write replaces the feature file at path atomically: the data goes to a
// dot-file in the same directory (nfd-worker skips dot-files), which is
// synced and renamed over path, so NFD never reads half a file.
func Write(path string, data []byte) error {
	if len(data) >= MaxSize {
		return fmt.Errorf("%s: %d bytes; NFD ignores feature files of %d bytes or more", path, len(data), MaxSize)
	}
	// 0644 whatever the old file had: nfd-worker may run as another user.
	t, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithStaticPermissions(0o644))
	if err != nil {
		return fmt.Errorf("writing the NFD feature file: %w", err)
	}
	defer func() { _ = t.Cleanup() }()
	if _, err := t.Write(data); err != nil {
		return fmt.Errorf("writing the NFD feature file: %w", err)
	}
	if err := t.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("writing the NFD feature file: %w", err)
	}
	return nil
}
