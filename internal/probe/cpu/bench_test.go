package cpu

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/devctl/devctl/internal/host"
)

// BenchmarkProbe measures the driver on the CI machine's real tree, so a
// change that reads a file twice or walks sysfs needlessly shows up.
func BenchmarkProbe(b *testing.B) {
	h, err := host.Local(host.LocalOptions{Sysroot: filepath.Join(hostsDir, "ci-vm-amd64")})
	if err != nil {
		b.Fatal(err)
	}
	d := New()
	for b.Loop() {
		if _, err := d.Probe(context.Background(), h); err != nil {
			b.Fatal(err)
		}
	}
}
