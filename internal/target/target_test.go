//go:build unix

package target

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOnePolicyForEveryTarget holds the policy for what can stand at a
// path (issue 22: --report and --nfd-file replaced a symlink or a FIFO
// with a regular file where snapshot -o refused, and --report into a
// missing directory only warned).
func TestOnePolicyForEveryTarget(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "old.json")
	mustWrite(t, regular, "old")
	victim := filepath.Join(dir, "victim.txt")
	mustWrite(t, victim, "keep")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	replace := Policy{Flag: "--report", Replace: true}
	noReplace := Policy{Flag: "-o", Hint: "pass --force to overwrite it"}
	tests := []struct {
		name   string
		p      Policy
		path   string
		kind   Kind
		refuse string
	}{
		{"a new file in an existing directory", replace, filepath.Join(dir, "new.json"), New, ""},
		{"a regular file the policy may replace", replace, regular, Regular, ""},
		{"a regular file the policy may not replace", noReplace, regular, 0, `invalid -o "` + regular + `": the file exists; pass --force to overwrite it`},
		{"a symbolic link to a file", replace, link, 0, "it is a symbolic link; devctl does not replace or follow links"},
		{"a dangling symbolic link", replace, dangling, 0, "it is a symbolic link"},
		{"a directory", replace, dir, 0, "it is a directory"},
		{"a device", replace, os.DevNull, 0, "it is a device or socket"},
		{"a socket", replace, sock, 0, "it is a device or socket"},
		{"a missing directory", replace, filepath.Join(dir, "nope", "r.json"), 0, "directory " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"a file where the directory should be", replace, filepath.Join(regular, "r.json"), 0, "is not a directory"},
		{"an empty path", replace, "", 0, "want a file path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, err := tt.p.Check(tt.path)
			if tt.refuse == "" {
				if err != nil || kind != tt.kind {
					t.Fatalf("Check = %v, %v; want %v", kind, err, tt.kind)
				}
				return
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.refuse) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Check error %v, want a one-line refusal containing %q", err, tt.refuse)
			}
			if werr := tt.p.Write(tt.path, []byte("new")); !errors.Is(werr, ErrRefused) {
				t.Fatalf("Write error %v, want the refusal", werr)
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}
	if err := replace.Write(regular, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(regular); string(b) != "new" {
		t.Errorf("the regular file holds %q", b)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*devctl-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestAPipeIsWrittenIntoNeverReplaced: a FIFO with a reader (and a link
// to one, as /dev/stdout is) gets the bytes and stays a FIFO; one with no
// reader is refused at once.
func TestAPipeIsWrittenIntoNeverReplaced(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	p := Policy{Flag: "--report", Replace: true}
	for _, path := range []string{fifo, link} {
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo) // blocks until the writer opens
			if err != nil {
				got <- err.Error()
				return
			}
			b := make([]byte, 64)
			n, _ := f.Read(b)
			f.Close()
			got <- string(b[:n])
		}()
		var err error
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if err = p.Write(path, []byte("{}\n")); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if s := <-got; s != "{}\n" {
			t.Errorf("%s: the reader got %q", path, s)
		}
		if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("the FIFO was replaced")
		}
	}
	start := time.Now()
	err := p.Write(fifo, []byte("x"))
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "a pipe with no reader") || time.Since(start) > pipeWait+time.Second {
		t.Errorf("a FIFO with no reader: %v after %v", err, time.Since(start))
	}
}

// TestCommitRefusesAPathThatChanged: what stands at the path is checked
// again just before the rename.
func TestCommitRefusesAPathThatChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	victim := filepath.Join(dir, "victim")
	mustWrite(t, victim, "keep")
	f, err := Policy{Flag: "--report", Replace: true}.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); !errors.Is(err, ErrRefused) {
		t.Fatalf("Commit: %v, want a refusal", err)
	}
	if st, _ := os.Lstat(path); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link planted meanwhile was replaced")
	}
}

// TestOpenRegularNeverFollowsALink: history.jsonl as a symbolic link was
// followed (issue 22); a FIFO is refused without waiting for a writer.
func TestOpenRegularNeverFollowsALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	mustWrite(t, victim, "keep\n")
	link := filepath.Join(dir, "history.jsonl")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenAppend(link, os.O_CREATE); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRegular(fifo, os.O_RDONLY); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a FIFO: %v", err)
	}
	f, err := OpenAppend(filepath.Join(dir, "new.jsonl"), os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the link's target changed: %q", b)
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
