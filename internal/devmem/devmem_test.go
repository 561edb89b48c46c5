package devmem

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatPPID(t *testing.T) {
	tests := []struct {
		name, stat string
		want       int
		ok         bool
	}{
		{"a plain command", "4242 (python3) S 4200 4242 4200 0 -1", 4200, true},
		{"a command with spaces and parentheses", "77 (pt_main (x) y) R 12 77 77 0", 12, true},
		{"a truncated line", "77 (python", 0, false},
		{"no parent field", "77 (python) S", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseStatPPID([]byte(tt.stat))
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseStatPPID(%q) = %d, %v; want %d, %v", tt.stat, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseStatPPID(f *testing.F) {
	f.Add([]byte("4242 (python3) S 4200 4242"))
	f.Add([]byte("1 ((()) S -1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, ok := ParseStatPPID(b); ok && p < 0 {
			t.Fatalf("negative parent %d", p)
		}
	})
}

// startTree starts `sh -c 'sleep 30 & sleep 30'`: a child and a grandchild
// of the test process, and returns them once both exist.
func startTree(t *testing.T) (child int, grandchildren []int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range grandchildren {
			if pr, err := os.FindProcess(p); err == nil {
				pr.Kill()
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	j := &Job{Proc: os.DirFS("/proc"), Root: cmd.Process.Pid}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if kids := j.PIDs(); len(kids) >= 2 {
			return cmd.Process.Pid, kids
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the shell's two sleeps did not appear")
	return 0, nil
}

// The job is the test process and everything below it; a process of
// another tree is not.
func TestJobOfRealProcesses(t *testing.T) {
	child, grand := startTree(t)
	j := &Job{Proc: os.DirFS("/proc"), Root: os.Getpid()}
	for _, p := range append([]int{child}, grand...) {
		if !j.Has(p) {
			t.Errorf("pid %d of the test's tree is not in the job", p)
		}
	}
	if j.Has(1) || j.Has(os.Getppid()) {
		t.Errorf("init or the test's parent is in the job")
	}
	kids := j.PIDs()
	for _, p := range append([]int{child}, grand...) {
		if !slices.Contains(kids, p) {
			t.Errorf("PIDs %v lacks %d", kids, p)
		}
	}
	// Without the kernel's children lists, a scan of /proc finds the same.
	scanned := j.scan()
	for _, p := range append([]int{child}, grand...) {
		if !slices.Contains(scanned, p) {
			t.Errorf("scan %v lacks %d", scanned, p)
		}
	}
}

type fakeSource struct{ readings [][]Reading }

func (f *fakeSource) Method() string { return "fake" }
func (f *fakeSource) Close() error   { return nil }
func (f *fakeSource) Read(context.Context) ([]Reading, error) {
	if len(f.readings) == 0 {
		return nil, nil
	}
	r := f.readings[0]
	f.readings = f.readings[1:]
	return r, nil
}

func TestSampleKeepsTheJobsPeak(t *testing.T) {
	const gib = 1 << 30
	src := &fakeSource{readings: [][]Reading{
		{{{PID: 10, Device: "0", Bytes: 2 * gib}, {PID: 99, Device: "0", Bytes: 70 * gib}}},
		{{{PID: 10, Device: "0", Bytes: 5 * gib}, {PID: 11, Device: "0", Bytes: gib}, {PID: 12, Device: "1", Bytes: 4 * gib}}},
		{{{PID: 10, Device: "0", Bytes: 3 * gib}}, {{PID: 12, Device: "1", Bytes: 7 * gib}}},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	m, err := Sample(ctx, src, func(pid int) bool { return pid != 99 }, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want := Measurement{PeakBytes: 7 * gib, TotalPeakBytes: 10 * gib, Devices: 2, Method: "fake", Samples: 4, IntervalMS: 10}
	if d := cmp.Diff(want, m); d != "" {
		t.Errorf("Sample (-want +got):\n%s", d)
	}
}

func TestParseSMILine(t *testing.T) {
	tests := []struct {
		name, line string
		stamp      string
		want       Usage
		ok         bool
	}{
		{"a process line", "2024/05/14 10:21:33.402, GPU-6c0a1b2c-0000-0000-0000-000000000000, 12345, 10240",
			"2024/05/14 10:21:33.402", Usage{PID: 12345, Device: "GPU-6c0a1b2c-0000-0000-0000-000000000000", Bytes: 10240 << 20}, true},
		{"memory the driver cannot attribute", "2024/05/14 10:21:33.402, GPU-x, 12345, [N/A]", "", Usage{}, false},
		{"a header line", "timestamp, gpu_uuid, pid, used_gpu_memory [MiB]", "", Usage{}, false},
		{"a blank line", "", "", Usage{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stamp, u, ok := ParseSMILine(tt.line)
			if stamp != tt.stamp || u != tt.want || ok != tt.ok {
				t.Errorf("ParseSMILine(%q) = %q, %+v, %v", tt.line, stamp, u, ok)
			}
		})
	}
}

func FuzzParseSMILine(f *testing.F) {
	f.Add("2024/05/14 10:21:33.402, GPU-x, 12345, 10240")
	f.Fuzz(func(t *testing.T, line string) {
		if _, u, ok := ParseSMILine(line); ok && (u.Bytes < 0 || u.PID <= 0) {
			t.Fatalf("%q gave %+v", line, u)
		}
	})
}

// A fake nvidia-smi (a real process) streams polls naming the test's own
// child and a stranger: the sampler keeps the child's peak.
func TestSMIStreamOfAFakeNvidiaSMI(t *testing.T) {
	child, _ := startTree(t)
	dir := t.TempDir()
	smi := filepath.Join(dir, "nvidia-smi")
	script := fmt.Sprintf(`#!/bin/sh
[ "$*" = "%s" ] || { echo "unexpected arguments: $*" >&2; exit 2; }
i=0
while :; do
  i=$((i+1))
  echo "2024/05/14 10:21:3$i.000, GPU-aaaa, %d, $((i * 1000))"
  echo "2024/05/14 10:21:3$i.000, GPU-aaaa, 1, 50000"
  sleep 0.05
done
`, strings.Join(SMIArgs(50*time.Millisecond), " "), child)
	if err := os.WriteFile(smi, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := StartSMI(smi, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	job := &Job{Proc: os.DirFS("/proc"), Root: os.Getpid()}
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	m, err := Sample(ctx, src, job.Has, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m.PeakBytes < 2000<<20 || m.PeakBytes >= 50000<<20 || m.Devices != 1 || m.Method != MethodSMI {
		t.Errorf("measurement %+v: want the child's growing figure, never init's", m)
	}
	if err := src.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestStartSMIWithoutTheProgram(t *testing.T) {
	if _, err := StartSMI(filepath.Join(t.TempDir(), "nvidia-smi"), time.Second); err == nil {
		t.Error("a missing nvidia-smi started")
	}
}

func TestParseDRMFdinfo(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		in   []byte
		want DRMStats
	}{
		{"xe's documented example counts drm-resident-vram0", read("fdinfo-xe-doc.txt"),
			DRMStats{Driver: "xe", PDev: "0000:03:00.0", ClientID: "3", VRAMBytes: 23992 << 10}},
		{"amdgpu's drm-memory-vram (the older key) counts", read("fdinfo-amdgpu-format.txt"),
			DRMStats{Driver: "amdgpu", PDev: "0000:c5:00.0", ClientID: "9", VRAMBytes: 524288 << 10}},
		{"resident wins over the legacy alias of the same region",
			[]byte("drm-pdev:\t0000:65:00.0\ndrm-memory-vram:\t4 MiB\ndrm-resident-vram:\t5 MiB\n"),
			DRMStats{PDev: "0000:65:00.0", VRAMBytes: 5 << 20}},
		{"two vram regions add up; gtt and system do not count",
			[]byte("drm-resident-vram0:\t1 MiB\ndrm-resident-vram1:\t2 MiB\ndrm-resident-gtt:\t9 MiB\ndrm-resident-system:\t9\n"),
			DRMStats{VRAMBytes: 3 << 20}},
		{"a value in bytes and a bad unit", []byte("drm-resident-vram:\t4096\ndrm-resident-vram1:\t7 GiB\n"), DRMStats{VRAMBytes: 4096}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, ParseDRMFdinfo(tt.in)); d != "" {
				t.Errorf("ParseDRMFdinfo (-want +got):\n%s", d)
			}
		})
	}
}

func FuzzParseDRMFdinfo(f *testing.F) {
	f.Add([]byte("drm-resident-vram:\t4 MiB\ndrm-client-id:\t3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if st := ParseDRMFdinfo(b); st.VRAMBytes < 0 {
			t.Fatalf("negative %d", st.VRAMBytes)
		}
	})
}

// A proc tree with a job of two processes: one holds two descriptors of
// the same DRM client (dup'd: counted once) and a file, the other an xe
// client; a stranger's DRM client is not the job's.
func TestFDInfoReadsTheJobsDRMClients(t *testing.T) {
	xe, _ := os.ReadFile(filepath.Join("testdata", "fdinfo-xe-doc.txt"))
	amd, _ := os.ReadFile(filepath.Join("testdata", "fdinfo-amdgpu-format.txt"))
	proc := fstest.MapFS{
		"100/stat":              {Data: []byte("100 (devctl) S 1 100 100")},
		"100/task/100/children": {Data: []byte("200 300 ")},
		"200/stat":              {Data: []byte("200 (python) S 100 200 100")},
		"200/task/200/children": {Data: []byte("")},
		"200/fd/3":              {Data: nil},
		"200/fd/4":              {Data: nil},
		"200/fd/5":              {Data: nil},
		"200/fdinfo/3":          {Data: amd},
		"200/fdinfo/4":          {Data: amd},
		"300/stat":              {Data: []byte("300 (worker) S 100 300 100")},
		"300/task/300/children": {Data: []byte("")},
		"300/fd/9":              {Data: nil},
		"300/fdinfo/9":          {Data: xe},
		"999/stat":              {Data: []byte("999 (other) S 1 999 999")},
		"999/task/999/children": {Data: []byte("")},
		"999/fd/3":              {Data: nil},
		"999/fdinfo/3":          {Data: amd},
	}
	links := map[string]string{"200/fd/3": "/dev/dri/renderD128", "200/fd/4": "/dev/dri/renderD128", "200/fd/5": "/home/u/data.bin", "300/fd/9": "/dev/dri/renderD129", "999/fd/3": "/dev/dri/renderD128"}
	src := &FDInfo{Job: &Job{Proc: proc, Root: 100}, Link: func(name string) (string, error) {
		if l, ok := links[name]; ok {
			return l, nil
		}
		return "", os.ErrNotExist
	}}
	rs, err := src.Read(context.Background())
	if err != nil || len(rs) != 1 {
		t.Fatalf("Read = %v, %v", rs, err)
	}
	want := Reading{{PID: 200, Device: "0000:c5:00.0", Bytes: 524288 << 10}, {PID: 300, Device: "0000:03:00.0", Bytes: 23992 << 10}}
	if d := cmp.Diff(want, rs[0]); d != "" {
		t.Errorf("reading (-want +got):\n%s", d)
	}
}
