package nfd

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes the feature file through a dot-file and a rename, as on
// other systems (NFD runs on Linux nodes; this keeps the command usable).
func Write(path string, data []byte) error {
	if len(data) >= MaxSize {
		return fmt.Errorf("%s: %d bytes; NFD ignores feature files of %d bytes or more", path, len(data), MaxSize)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("writing the NFD feature file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing the NFD feature file: %w", err)
	}
	return nil
}
