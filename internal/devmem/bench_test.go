package devmem

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// startSleepers starts n real `sleep` children of the test process: a job
// of n+1 processes (the test binary, with its threads, is the root).
func startSleepers(b *testing.B, n int) {
	b.Helper()
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	for range n {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Process.Kill(); c.Wait() })
	}
}

// One DRM fdinfo reading of a job of 17 processes on this machine: the
// tree walked through the kernel's children lists, every descriptor's
// link read once and remembered. At one reading a second, ns/op / 1e7 is
// the share of one CPU in percent (scripts/bench-devmem.sh prints it).
func BenchmarkFDInfoRead(b *testing.B) {
	startSleepers(b, 16)
	src := &FDInfo{Job: &Job{Proc: os.DirFS("/proc"), Root: os.Getpid()}, Link: func(name string) (string, error) { return os.Readlink("/proc/" + name) }}
	ctx := context.Background()
	src.Read(ctx) // the first reading reads every link
	b.ResetTimer()
	for range b.N {
		if _, err := src.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// One reading of a stream poll as the sampler sees it: 8 lines (the job's
// 2 processes, 6 strangers already known not to be the job's), matched
// against the job through /proc.
func BenchmarkSampleSMIPoll(b *testing.B) {
	startSleepers(b, 2)
	job := &Job{Proc: os.DirFS("/proc"), Root: os.Getpid()}
	kids := job.PIDs()
	var lines []string
	for i := range 8 {
		pid := 1
		if i < len(kids) {
			pid = kids[i]
		}
		lines = append(lines, fmt.Sprintf("2024/05/14 10:21:33.402, GPU-%d, %d, %d", i%2, pid, 1024*(i+1)))
	}
	var m Measurement
	b.ResetTimer()
	for range b.N {
		var r Reading
		for _, l := range lines {
			if _, u, ok := ParseSMILine(l); ok {
				r = append(r, u)
			}
		}
		m.add(r, job.Has)
	}
	if m.PeakBytes == 0 {
		b.Fatal("the job's processes were not found")
	}
}

func BenchmarkParseDRMFdinfo(b *testing.B) {
	data, err := os.ReadFile("testdata/fdinfo-xe-doc.txt")
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		if ParseDRMFdinfo(data).VRAMBytes == 0 {
			b.Fatal(strings.TrimSpace("no vram"))
		}
	}
}
