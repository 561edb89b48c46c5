package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/devctl/devctl/internal/host"
)

// memFS serves absolute machine paths from an in-memory tree: the extra
// files a fixture machine needs beside (or instead of) a tree on disk, such
// as NVIDIA device nodes, which a git checkout cannot hold.
type memFS struct{ m fstest.MapFS }

func rel(name string) (string, error) {
	if !strings.HasPrefix(name, "/") {
		return "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	p := strings.TrimPrefix(path.Clean(name), "/")
	if p == "" {
		p = "."
	}
	return p, nil
}

// withPath names the machine path in an error, as an os error would.
func withPath(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

func (f memFS) ReadFile(name string) ([]byte, error) {
	p, err := rel(name)
	if err != nil {
		return nil, err
	}
	b, err := fs.ReadFile(f.m, p)
	return b, withPath(name, err)
}

func (f memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := rel(name)
	if err != nil {
		return nil, err
	}
	es, err := fs.ReadDir(f.m, p)
	return es, withPath(name, err)
}

func (f memFS) Stat(name string) (fs.FileInfo, error) {
	p, err := rel(name)
	if err != nil {
		return nil, err
	}
	fi, err := fs.Stat(f.m, p)
	return fi, withPath(name, err)
}

func (f memFS) Readlink(name string) (string, error) {
	p, err := rel(name)
	if err != nil {
		return "", err
	}
	t, err := fs.ReadLink(f.m, p)
	return t, withPath(name, err)
}

// layerFS answers from the first layer that has a path; directory
// listings are the union of every layer's (first layer wins a name). It
// lets a machine be a real fixture tree plus a few files the tree lacks.
type layerFS []host.FS

func (l layerFS) ReadFile(name string) ([]byte, error) {
	var err error
	for _, x := range l {
		var b []byte
		if b, err = x.ReadFile(name); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return b, err
		}
	}
	return nil, err
}

func (l layerFS) Stat(name string) (fs.FileInfo, error) {
	var err error
	for _, x := range l {
		var fi fs.FileInfo
		if fi, err = x.Stat(name); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return fi, err
		}
	}
	return nil, err
}

func (l layerFS) Readlink(name string) (string, error) {
	var err error
	for _, x := range l {
		var t string
		if t, err = x.Readlink(name); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return t, err
		}
	}
	return "", err
}

func (l layerFS) ReadDir(name string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	seen := map[string]bool{}
	found := false
	var lastErr error
	for _, x := range l {
		es, err := x.ReadDir(name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			lastErr = err
			continue
		}
		found = true
		for _, e := range es {
			if !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e)
			}
		}
	}
	if !found {
		return nil, lastErr
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// ParseSysctlText reads recorded `sysctl` answers, one "name: value" per
// line (the format of `sysctl -a` and of testdata/accel/mac/sysctl-*.txt).
// Blank lines and lines starting with # are skipped; the first answer for
// a name wins.
func ParseSysctlText(b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("line %d: want \"name: value\", got %q", n, line)
		}
		if _, dup := out[k]; !dup {
			out[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading sysctl answers: %w", err)
	}
	return out, nil
}

// mapSysctl answers sysctl names from recorded answers; a name that was not
// recorded does not exist, as on a Mac without that key.
type mapSysctl map[string]string

func (s mapSysctl) Get(name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("sysctl %s: %w", name, host.ErrNotFound)
}

// exitStatus prints like *exec.ExitError, so a recorded failure reads as
// the real runner's would.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// answer is one program's recorded output.
type answer struct {
	file string // under the fixtures directory
	exit int    // non-zero: the program failed with this status
}

// fileRunner answers allowlisted programs from fixture files, keyed by
// "name arg arg ..." (or "name *" for any arguments). Programs it has no
// answer for are not installed.
type fileRunner struct {
	fixtures string
	answers  map[string]answer
	paths    map[string]string // LookPath answers
}

func (r *fileRunner) LookPath(name string) (string, error) {
	if p, ok := r.paths[name]; ok {
		return p, nil
	}
	return "", fmt.Errorf("%s: %w", name, host.ErrNotFound)
}

func (r *fileRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a, ok := r.answers[strings.Join(append([]string{name}, args...), " ")]
	if !ok {
		a, ok = r.answers[name+" *"]
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, host.ErrNotFound)
	}
	out, err := os.ReadFile(fixturePath(r.fixtures, a.file))
	if err != nil {
		return nil, fmt.Errorf("fixture for %s: %w", name, err)
	}
	if a.exit != 0 {
		// host.ExecRunner's message: name, status, then the output's text.
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return out, fmt.Errorf("%s: %w: %s", name, exitStatus(a.exit), msg)
	}
	return out, nil
}

// fileNVML answers the NVML query with a recorded raw answer
// (testdata/nvidia/raw/*.json, the nvidia driver's own format).
type fileNVML struct{ data []byte }

func (n fileNVML) Query(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return bytes.Clone(n.data), nil
}

func fixturePath(fixtures, rel string) string {
	return filepath.Join(fixtures, filepath.FromSlash(rel))
}
