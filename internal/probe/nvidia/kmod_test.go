package nvidia

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseKernelModule(t *testing.T) {
	tests := []struct {
		name string
		file string
		want KernelModule
	}{
		{"the proprietary module names its version right after Kernel Module", "proprietary-384.98.txt", KernelModule{Version: "384.98"}},
		{"a recent proprietary module on TrueNAS", "proprietary-580.173.02-truenas.txt", KernelModule{Version: "580.173.02"}},
		{"the open module puts for x86_64 before the version", "open-565.57.01-ubuntu.txt", KernelModule{Version: "565.57.01", Open: true, Arch: "x86_64"}},
		{"an Arch build with trailing spaces", "open-525.60.11-arch.txt", KernelModule{Version: "525.60.11", Open: true, Arch: "x86_64"}},
		{"a Jetson reports its L4T version on aarch64", "open-aarch64-jetson-35.3.1.txt", KernelModule{Version: "35.3.1", Open: true, Arch: "aarch64"}},
		{"a localised build date does not matter", "open-555.58-gentoo.txt", KernelModule{Version: "555.58", Open: true, Arch: "x86_64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "nvidia", "proc", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseKernelModule(b)
			if err != nil {
				t.Fatalf("ParseKernelModule: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseKernelModuleRejects(t *testing.T) {
	for name, in := range map[string]string{
		"an empty file":                  "",
		"a file without an NVRM line":    "GCC version:  gcc version 13.3.0\n",
		"an NVRM line without a version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  Release Build\n",
		"an NVRM line of another shape":  "NVRM version: something else 1.2\n",
		"a version made of dots":         "NVRM version: NVIDIA UNIX x86_64 Kernel Module  ..  date\n",
	} {
		t.Run(name, func(t *testing.T) {
			if km, err := ParseKernelModule([]byte(in)); err == nil {
				t.Errorf("got %+v, want an error", km)
			}
		})
	}
}

func FuzzParseKernelModule(f *testing.F) {
	f.Add([]byte("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 ...\n"))
	f.Add([]byte("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  35.3.1  Release Build\n"))
	f.Add([]byte("NVRM version: Kernel Module for"))
	f.Fuzz(func(t *testing.T, b []byte) {
		km, err := ParseKernelModule(b)
		if err == nil && !isVersion(km.Version) {
			t.Errorf("accepted version %q", km.Version)
		}
	})
}
