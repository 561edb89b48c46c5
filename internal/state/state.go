// Package state keeps devctl's small history files (doctor outcomes, bench
// runs, job runs) as bounded, append-only JSON-lines logs in the user's state
// directory.
//
// The guarantees (docs/guarantees.md says how each is tested):
//   - Nothing is lost to concurrency: a record is appended with one write(2)
//     on an O_APPEND descriptor while holding an exclusive lock on a sibling
//     "<file>.lock", so any number of processes may append at once.
//   - Nothing is lost to a bad line: a line longer than MaxLine or not JSON is
//     skipped on read; the lines after it are read as usual.
//   - Nothing is left behind: the only temporary file is the one compaction
//     writes under the lock; a compaction killed half-way leaves a
//     ".tmp-<file>-*" that the next locked writer removes.
//   - Nothing leaked: every string in a record passes through secret.Scrub
//     (tokens, URL userinfo, key=value with a secret-looking key) before it
//     is written.
//   - Bounded: once the file grows past Limits.MaxBytes, the writer holding
//     the lock rewrites it atomically (temp file + rename) with only the
//     newest Limits.MaxRecords records.
//   - Nothing reached through a link: the file and its lock are opened by
//     target.OpenRegular, so a symbolic link, FIFO or device at either path
//     is refused, never followed or waited on.
package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/devctl/devctl/internal/secret"
	"github.com/devctl/devctl/internal/target"
)

// Dir returns $XDG_STATE_HOME/devctl, or ~/.local/state/devctl.
func Dir(lookup func(string) (string, bool)) (string, error) {
	if d, ok := lookup("XDG_STATE_HOME"); ok && d != "" {
		if !filepath.IsAbs(d) {
			return "", &BadDirError{Value: d}
		}
		return filepath.Join(d, "devctl"), nil
	}
	if h, ok := lookup("HOME"); ok && h != "" {
		return filepath.Join(h, ".local", "state", "devctl"), nil
	}
	return "", errors.New("neither XDG_STATE_HOME nor HOME is set")
}

// BadDirError is a relative XDG_STATE_HOME: a usage error (exit 2), since
// the XDG spec says such a value is invalid and must be ignored, and
// silently writing somewhere else would surprise the user more.
type BadDirError struct{ Value string }

func (e *BadDirError) Error() string {
	return fmt.Sprintf("XDG_STATE_HOME %q: want an absolute path", e.Value)
}

// MaxRecords bounds each history file; older records are dropped first.
const MaxRecords = 1000

// MaxLine bounds one record: a longer line is refused on write and skipped
// on read.
const MaxLine = 64 << 10

// MaxBytes is the size past which a writer compacts the file. At ~200
// bytes a record, 1000 records fit well within it.
const MaxBytes = 1 << 20

// Limits bound one log. The zero value means the package defaults.
type Limits struct {
	// MaxRecords is how many of the newest records compaction keeps.
	MaxRecords int
	// MaxBytes is the file size that triggers compaction.
	MaxBytes int64
	// LockWait is how long a writer waits for the lock before giving up.
	LockWait time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxRecords <= 0 {
		l.MaxRecords = MaxRecords
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = MaxBytes
	}
	if l.LockWait <= 0 {
		l.LockWait = 10 * time.Second
	}
	return l
}

// ErrLocked says another process held the lock for longer than
// Limits.LockWait.
var ErrLocked = errors.New("state file is locked by another process")

// ErrNotRegular says the state path is not a regular file (a FIFO, a device,
// a directory); devctl neither reads nor writes such a path, nor follows a
// symbolic link there (target.OpenRegular).
var ErrNotRegular = target.ErrNotRegular

// Append adds v as one JSON line to path with the default Limits.
func Append(path string, v any) error { return AppendWith(path, v, Limits{}) }

// AppendWith adds v as one JSON line to path. The record is written with a
// single write on an O_APPEND descriptor while holding the file's lock, so
// concurrent writers never lose each other's records; when the file has
// grown past lim.MaxBytes the same writer compacts it.
func AppendWith(path string, v any, lim Limits) error {
	lim = lim.withDefaults()
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	line = secret.ScrubJSON(line)
	if len(line) > MaxLine {
		return fmt.Errorf("record of %d bytes is larger than %d", len(line), MaxLine)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	unlock, err := lock(path+".lock", lim.LockWait)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unlock()
	removeStaleTemps(path)

	f, err := openRegular(path, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	rec := make([]byte, 0, len(line)+2)
	if st.Size() > 0 && !endsWithNewline(f, st.Size()) {
		// A writer killed mid-record (or a hand edit) left a partial line:
		// start ours on a fresh line so it is not glued to the debris.
		rec = append(rec, '\n')
	}
	rec = append(rec, line...)
	rec = append(rec, '\n')
	if _, err := f.Write(rec); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if st.Size()+int64(len(rec)) > lim.MaxBytes {
		return compact(path, lim.MaxRecords)
	}
	return nil
}

func endsWithNewline(f *os.File, size int64) bool {
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return true
	}
	return b[0] == '\n'
}

// compact rewrites path with its newest keep valid lines. The caller holds
// the lock.
func compact(path string, keep int) error {
	lines, err := readLines(path, keep)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	fail := func(err error) error {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	w := bufio.NewWriter(tmp)
	for _, l := range lines {
		w.Write(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

func tempPrefix(path string) string { return ".tmp-" + filepath.Base(path) + "-" }

// removeStaleTemps deletes temporary files a killed compaction left. Only a
// lock holder creates them, so while we hold the lock every one is stale.
// Files of the old unlocked writer (".tmp-<digits>") are removed once they
// are an hour old.
func removeStaleTemps(path string) {
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	own := tempPrefix(path)
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, own):
			os.Remove(filepath.Join(dir, name))
		case strings.HasPrefix(name, ".tmp-") && isDigits(name[len(".tmp-"):]):
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
}

func isDigits(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// lock takes an exclusive lock on the lock file at path, retrying until
// wait has passed, so a writer stuck elsewhere delays others but never
// blocks them for good.
func lock(path string, wait time.Duration) (unlock func(), err error) {
	f, err := openRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		held, release, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if held {
			return func() { release(); f.Close() }, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, ErrLocked
		}
		time.Sleep(delay)
	}
}

// Clear empties the log at path under its lock, so a writer appending at
// the same moment lands either before (and is cleared) or after (and is
// kept), never into a removed file. A missing file is already clear.
func Clear(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := lock(path+".lock", Limits{}.withDefaults().LockWait)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unlock()
	f, err := openRegular(path, os.O_RDWR)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Read decodes the newest MaxRecords well-formed lines of path into T,
// oldest first. Malformed and over-long lines are skipped: a damaged history
// must not stop a command, nor hide the records after the damage.
func Read[T any](path string) ([]T, error) {
	lines, err := readLines(path, MaxRecords)
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

// readLines returns the newest keep lines of path that are valid JSON.
func readLines(path string, keep int) ([][]byte, error) {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ScanLines(f, keep)
}

// ScanLines reads JSON lines from r and returns the newest keep of them that
// are valid JSON, oldest first. A line longer than MaxLine is skipped whole,
// never truncating what follows.
func ScanLines(r io.Reader, keep int) ([][]byte, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var lines [][]byte
	var cur []byte
	tooLong := false
	flush := func() {
		l := bytes.TrimSpace(cur)
		if !tooLong && len(l) > 0 && json.Valid(l) {
			lines = append(lines, append([]byte(nil), l...))
			if len(lines) > 2*keep {
				lines = append(lines[:0], lines[len(lines)-keep:]...)
			}
		}
		cur, tooLong = cur[:0], false
	}
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(cur)+len(chunk) > MaxLine+1 {
				tooLong, cur = true, cur[:0]
			} else {
				cur = append(cur, chunk...)
			}
		}
		switch {
		case err == nil:
			flush()
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			flush()
			if len(lines) > keep {
				lines = lines[len(lines)-keep:]
			}
			return lines, nil
		default:
			return nil, err
		}
	}
}

// openRegular opens path without blocking on a FIFO, never through a
// symbolic link, and refuses anything but a regular file (target's policy
// for devctl's own files).
func openRegular(path string, flag int) (*os.File, error) {
	return target.OpenRegular(path, flag)
}
