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
