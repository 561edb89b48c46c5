// Package state keeps devctl's small history files (doctor outcomes, bench
// runs) as bounded JSON-lines files in the user's state directory.
package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dir returns $XDG_STATE_HOME/devctl, or ~/.local/state/devctl.
func Dir(lookup func(string) (string, bool)) (string, error) {
	if d, ok := lookup("XDG_STATE_HOME"); ok && d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("XDG_STATE_HOME %q: want an absolute path", d)
		}
		return filepath.Join(d, "devctl"), nil
	}
	if h, ok := lookup("HOME"); ok && h != "" {
		return filepath.Join(h, ".local", "state", "devctl"), nil
	}
	return "", errors.New("neither XDG_STATE_HOME nor HOME is set")
}

// MaxRecords bounds each history file; older records are dropped first.
const MaxRecords = 1000

// maxLine bounds one record: a longer line in the file is skipped on read.
const maxLine = 64 << 10

// Append adds v as one JSON line to path, keeping at most MaxRecords lines.
// The file is rewritten atomically (temp file, rename) so a crash never
// leaves half a history.
func Append(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(line) > maxLine {
		return fmt.Errorf("record of %d bytes is larger than %d", len(line), maxLine)
	}
	lines, err := readLines(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	lines = append(lines, line)
	if len(lines) > MaxRecords {
		lines = lines[len(lines)-MaxRecords:]
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(tmp)
	for _, l := range lines {
		w.Write(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Read decodes every well-formed line of path into a new T, oldest first.
// Malformed lines are skipped: a damaged history must not stop a command.
func Read[T any](path string) ([]T, error) {
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(lines))
	for _, l := range lines {
		var v T
		if json.Unmarshal(l, &v) == nil {
			out = append(out, v)
		}
	}
	return out, nil
}

func readLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	for sc.Scan() {
		l := bytes.TrimSpace(sc.Bytes())
		if len(l) > 0 {
			lines = append(lines, append([]byte(nil), l...))
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return nil, err
	}
	return lines, nil
}
