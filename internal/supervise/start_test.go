//go:build unix

package supervise

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A program that is not there is 127 however it is named; one that is
// there but cannot be executed is 126 (bash's rule: ENOENT from execve is
// 127, any other error 126). Nothing is started for either.
func TestStartErrorsHaveTheShellsExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain.txt", "not a program\n", 0o644)
	garbage := write("garbage", "\x01\x02\x03 not an executable format", 0o755)
	noInterp := write("no-interpreter", "#!/nonexistent/interpreter\n", 0o755)
	for _, tc := range []struct {
		name, path, dir string
		want            int
	}{
		{"a name not in PATH is 127", "devctl-test-no-such-program", "", 127},
		{"a relative path to nothing is 127", "./nope", dir, 127},
		{"an absolute path to nothing is 127", filepath.Join(dir, "nope"), "", 127},
		{"a script whose interpreter is missing is 127", noInterp, "", 127},
		{"a file without execute permission is 126", plain, "", 126},
		{"a directory is 126", dir, "", 126},
		{"a path through a file is 126", filepath.Join(plain, "x"), "", 126},
		{"an executable in no known format is 126", garbage, "", 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), Spec{Path: tc.path, Dir: tc.dir})
			var se *StartError
			if !errors.As(err, &se) || !errors.Is(err, ErrStart) {
				t.Fatalf("err = %v, want a *StartError", err)
			}
			if se.Code != tc.want {
				t.Errorf("code %d (%v), want %d", se.Code, err, tc.want)
			}
		})
	}
}

// A context cancelled before the start starts nothing.
func TestCancelledContextStartsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, childSpec(t, "touch", marker))
	if !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrCanceled wrapping context.Canceled", err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("the child ran")
	}
}
