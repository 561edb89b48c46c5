package cpu

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
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

// BenchmarkParseCPUInfo128 parses the CI machine's processor block
// repeated as 128 processors: the size of /proc/cpuinfo on a two-socket
// server, where a parser that copies every line shows.
func BenchmarkParseCPUInfo128(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(hostsDir, "ci-vm-amd64", "proc", "cpuinfo"))
	if err != nil {
		b.Fatal(err)
	}
	block, _, _ := bytes.Cut(data, []byte("\n\n"))
	var big []byte
	for i := 0; i < 128; i++ {
		big = append(big, bytes.Replace(block, []byte("processor\t: 0"), []byte("processor\t: "+strconv.Itoa(i)), 1)...)
		big = append(big, "\n\n"...)
	}
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		if info := ParseCPUInfo(big); info.Processors != 128 {
			b.Fatalf("%d processors", info.Processors)
		}
	}
}
