package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type rec struct{ N int }

// TestMain lets the test binary act as a separate writer process: the
// concurrency and kill tests re-run it with STATE_TEST_WRITER set.
func TestMain(m *testing.M) {
	if path := os.Getenv("STATE_TEST_WRITER"); path != "" {
		os.Exit(writerMain(path))
	}
	os.Exit(m.Run())
}

func writerMain(path string) int {
	n, _ := strconv.Atoi(os.Getenv("STATE_TEST_N"))
	id, _ := strconv.Atoi(os.Getenv("STATE_TEST_ID"))
	maxBytes, _ := strconv.ParseInt(os.Getenv("STATE_TEST_MAXBYTES"), 10, 64)
	for i := 0; n == 0 || i < n; i++ {
		if err := AppendWith(path, rec{id*100000 + i}, Limits{MaxBytes: maxBytes, LockWait: time.Minute}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func writerCmd(t *testing.T, path string, id, n int, maxBytes int64) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(),
		"STATE_TEST_WRITER="+path,
		"STATE_TEST_N="+strconv.Itoa(n),
		"STATE_TEST_ID="+strconv.Itoa(id),
		"STATE_TEST_MAXBYTES="+strconv.FormatInt(maxBytes, 10))
	cmd.Stderr = os.Stderr
	return cmd
}

func TestAppendKeepsTheNewestRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "h.jsonl")
	for i := 0; i < MaxRecords+5; i++ {
		if err := AppendWith(path, rec{i}, Limits{MaxBytes: 4 << 10}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxRecords || got[0].N != 5 || got[len(got)-1].N != MaxRecords+4 {
		t.Fatalf("got %d records from %v to %v", len(got), got[0], got[len(got)-1])
	}
}

func TestCompactionBoundsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	lim := Limits{MaxRecords: 10, MaxBytes: 200}
	for i := 0; i < 100; i++ {
		if err := AppendWith(path, rec{i}, lim); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 200+20 {
		t.Errorf("file is %d bytes, want at most about 200", st.Size())
	}
	got, _ := Read[rec](path)
	if len(got) == 0 || got[len(got)-1].N != 99 {
		t.Errorf("newest record lost: %v", got)
	}
}

func checkAllRecords(t *testing.T, path string, writers, each int) {
	t.Helper()
	got, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range got {
		seen[r.N] = true
	}
	var missing []int
	for w := 0; w < writers; w++ {
		for i := 0; i < each; i++ {
			if !seen[w*100000+i] {
				missing = append(missing, w*100000+i)
			}
		}
	}
	if len(got) != writers*each || len(missing) > 0 {
		t.Fatalf("%d writers x %d records: read %d, missing %d (first %v)", writers, each, len(got), len(missing), missing[:min(5, len(missing))])
	}
}

func TestFiftyConcurrentProcessesKeepEveryRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 50 processes")
	}
	for _, tc := range []struct {
		name     string
		maxBytes int64
	}{
		{"plain appends", 0},
		{"appends racing with compaction", 2 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			const writers, each = 50, 10
			cmds := make([]*exec.Cmd, writers)
			for i := range cmds {
				cmds[i] = writerCmd(t, path, i, each, tc.maxBytes)
				if err := cmds[i].Start(); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range cmds {
				if err := c.Wait(); err != nil {
					t.Fatalf("writer: %v", err)
				}
			}
			checkAllRecords(t, path, writers, each)
		})
	}
}

func TestFiftyConcurrentGoroutinesKeepEveryRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	const writers, each = 50, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				// Each call opens its own descriptors, as separate
				// processes would; flock locks are per open file.
				if err := AppendWith(path, rec{w*100000 + i}, Limits{MaxBytes: 4 << 10, LockWait: time.Minute}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkAllRecords(t, path, writers, each)
}

func TestAnOverlongLineIsSkippedAndTheRestKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	var b bytes.Buffer
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "{\"N\":%d}\n", i)
	}
	fmt.Fprintf(&b, "{\"N\":%q}\n", strings.Repeat("x", 100<<10))
	for i := 10; i < 500; i++ {
		fmt.Fprintf(&b, "{\"N\":%d}\n", i)
	}
	os.WriteFile(path, b.Bytes(), 0o600)
	got, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 500 {
		t.Fatalf("read %d records, want 500", len(got))
	}
	// The next write (compacting, as the file is over its bound) keeps all.
	if err := AppendWith(path, rec{500}, Limits{MaxBytes: 1}); err != nil {
		t.Fatal(err)
	}
	got, _ = Read[rec](path)
	if len(got) != 501 || got[500].N != 500 {
		t.Fatalf("after a write: %d records", len(got))
	}
}

func TestReadSkipsDamagedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	os.WriteFile(path, []byte("{\"N\":1}\nnot json\n{\"N\":2}\n"), 0o600)
	got, err := Read[rec](path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]rec{{1}, {2}}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestAPartialLastLineDoesNotSwallowTheNextRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	os.WriteFile(path, []byte("{\"N\":1}\n{\"N\":"), 0o600)
	if err := Append(path, rec{2}); err != nil {
		t.Fatal(err)
	}
	got, _ := Read[rec](path)
	if diff := cmp.Diff([]rec{{1}, {2}}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestDirPrefersXDGStateHome(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}
	d, err := Dir(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || d != "/s/devctl" {
		t.Fatalf("Dir = %q, %v", d, err)
	}
	delete(env, "XDG_STATE_HOME")
	d, _ = Dir(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if d != "/h/.local/state/devctl" {
		t.Fatalf("Dir = %q", d)
	}
	env["XDG_STATE_HOME"] = "rel"
	var bad *BadDirError
	if _, err := Dir(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); !errors.As(err, &bad) {
		t.Fatalf("relative XDG_STATE_HOME: err = %v", err)
	}
}

func FuzzScanLines(f *testing.F) {
	f.Add([]byte("{\"N\":1}\nnot json\n{\"N\":2}"), 3)
	f.Add([]byte("\n\n{}\r\n[1,2]\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, keep int) {
		keep = keep%50 + 1
		if keep <= 0 {
			keep = 1
		}
		lines, err := ScanLines(bytes.NewReader(data), keep)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) > keep {
			t.Fatalf("%d lines, keep %d", len(lines), keep)
		}
	})
}

func TestSecretShapedValuesNeverReachTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.jsonl")
	type run struct {
		Command []string          `json:"command"`
		Env     map[string]string `json:"env"`
		N       int               `json:"n"`
	}
	r := run{
		Command: []string{"python", "train.py", "--hf-token=PLANTEDflag", "https://u:PLANTEDpass@host/x"},
		Env:     map[string]string{"VIRTUAL_ENV": "/home/u/ghp_PLANTEDvenvAbCdEfGhIjKlMnOp"},
		N:       12345678901,
	}
	if err := Append(path, r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte("PLANTED")) {
		t.Fatalf("secret written: %s", b)
	}
	got, _ := Read[run](path)
	if len(got) != 1 || got[0].N != 12345678901 || got[0].Command[1] != "train.py" || got[0].Command[2] != "--hf-token=[withheld]" {
		t.Fatalf("record after scrubbing: %+v", got)
	}
}
