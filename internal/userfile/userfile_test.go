package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(small, []byte("device: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 101)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		want    string
		wantErr error
		errText string
	}{
		{name: "a small regular file is read whole", path: small, want: "device: {}\n"},
		{name: "a file over the limit is refused", path: big, errText: "larger than 100 bytes"},
		{name: "a directory is refused", path: dir, wantErr: ErrDirectory, errText: "is a directory"},
		{name: "a missing file names the system's reason without the path", path: filepath.Join(dir, "nope"), wantErr: fs.ErrNotExist, errText: "no such file or directory"},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, struct {
			name    string
			path    string
			want    string
			wantErr error
			errText string
		}{name: "a device is refused before it is read", path: "/dev/zero", wantErr: ErrDevice, errText: "it is a device or socket"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(tc.path, 100)
			if tc.errText == "" {
				if err != nil || string(got) != tc.want {
					t.Fatalf("Read = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil || err.Error() != tc.errText {
				t.Fatalf("Read error = %v, want %q", err, tc.errText)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Read error %v is not %v", err, tc.wantErr)
			}
		})
	}
}

// TestAFileOverTheLimitIsRefusedFromItsSize: a 178 MB index cost 178 MB
// and 2 s to be refused (issue 22). A regular file whose size is over the
// limit is refused before a byte is read; the file here is sparse, 64 MiB
// + 1 byte of holes, the size of the first index over hfhub's limit.
func TestAFileOverTheLimitIsRefusedFromItsSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors.index.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const limit = 64 << 20
	if err := f.Truncate(limit + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReadAs(path, limit, "a model.safetensors.index.json")
	runtime.ReadMemStats(&after)
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != "larger than 67108864 bytes: not a model.safetensors.index.json" {
		t.Fatalf("err = %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing it allocated %d bytes", alloc)
	}
	// A file within the limit is read in one allocation of its size.
	if err := os.Truncate(path, limit); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&before)
	data, err := ReadAs(path, limit, "")
	runtime.ReadMemStats(&after)
	if err != nil || len(data) != limit {
		t.Fatalf("%d bytes, %v", len(data), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit+(1<<20) {
		t.Errorf("reading %d bytes allocated %d", limit, alloc)
	}
}
