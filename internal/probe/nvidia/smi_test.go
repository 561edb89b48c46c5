package nvidia

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readFixture(t testing.TB, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "..", "testdata", "nvidia"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseQueryGPU(t *testing.T) {
	quadro := readFixture(t, "smi", "query-535.129.03-quadro-rtx4000-x2.csv")
	q, err := ParseQueryGPU(quadro, QueryFields)
	if err != nil {
		t.Fatal(err)
	}
	want := GPU{
		Index:             1,
		Name:              Ok("Quadro RTX 4000"),
		UUID:              Ok("GPU-d6de6afc-bdfe-75c4-5273-0544439153fc"),
		PCI:               Ok(PCIInfo{BusID: "00000000:07:00.0"}),
		Memory:            Ok(Memory{Total: 8192 << 20, Used: 1 << 20, Free: 7965 << 20}),
		ComputeCapability: Ok(ComputeCapability{Major: 7, Minor: 5}),
		PCIeGenCurrent:    Ok(1),
		PCIeGenMax:        Ok(3),
		PCIeWidthCurrent:  Ok(16),
		PCIeWidthMax:      Ok(16),
	}
	if len(q.GPUs) != 2 {
		t.Fatalf("got %d GPUs, want 2", len(q.GPUs))
	}
	if diff := cmp.Diff(want, q.GPUs[1]); diff != "" {
		t.Errorf("second GPU (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Ok("535.129.03"), q.DriverVersion); diff != "" {
		t.Errorf("driver (-want +got):\n%s", diff)
	}
}

func TestParseQueryGPULegacyFields(t *testing.T) {
	q, err := ParseQueryGPU(readFixture(t, "smi", "query-legacy-470.103.01-a100-sxm4-80gb.csv"), QueryFieldsLegacy)
	if err != nil {
		t.Fatal(err)
	}
	g := q.GPUs[0]
	if g.ComputeCapability != nil {
		t.Errorf("compute capability = %+v, want unasked without the compute_cap field", g.ComputeCapability)
	}
	if m, _ := g.Memory.Get(); m.Total != 81920<<20 {
		t.Errorf("total = %d", m.Total)
	}
}

func TestParseQueryGPUEdgeCases(t *testing.T) {
	q, err := ParseQueryGPU(readFixture(t, "smi", "query-edge-cases.csv"), QueryFields)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.GPUs) != 3 {
		t.Fatalf("got %d GPUs, want 3 (blank lines skipped)", len(q.GPUs))
	}
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"[N/A] becomes not supported", q.GPUs[0].PCIeGenCurrent, Fail[int](ErrNotSupported)},
		{"a value next to [N/A] still parses", q.GPUs[0].PCIeGenMax, Ok(4)},
		{"a comma inside the name is folded back", q.GPUs[1].Name, Ok("NVIDIA RTX A6000, Ada Generation")},
		{"columns after a comma in the name stay aligned", q.GPUs[1].ComputeCapability, Ok(ComputeCapability{Major: 8, Minor: 9})},
		{"[Unknown Error] becomes ERROR_UNKNOWN", q.GPUs[2].Name, Fail[string](ErrUnknown)},
		{"[GPU is lost] becomes ERROR_GPU_IS_LOST", q.GPUs[2].Memory, Fail[Memory](ErrGPUIsLost)},
		{"[GPU is lost] marks the GPU lost", q.GPUs[2].Lost, true},
		{"[Not Supported] becomes not supported", q.GPUs[2].ComputeCapability, Fail[ComputeCapability](ErrNotSupported)},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestParseQueryGPURejects(t *testing.T) {
	tests := map[string]string{
		"too few columns":                                      "0, Tesla T4, GPU-1\n",
		"a memory size that is text":                           "0, Tesla T4, GPU-1, 00000000:00:1E.0, lots, 0, 0, 550.54.15, 7.5, 1, 3, 16, 16\n",
		"a bad compute capability":                             "0, Tesla T4, GPU-1, 00000000:00:1E.0, 15360, 0, 15360, 550.54.15, seven, 1, 3, 16, 16\n",
		"a negative width":                                     "0, Tesla T4, GPU-1, 00000000:00:1E.0, 15360, 0, 15360, 550.54.15, 7.5, 1, 3, -16, 16\n",
		"a memory size that would wrap when turned into bytes": "0, Tesla T4, GPU-1, 00000000:00:1E.0, 9223372036854775807, 0, 15360, 550.54.15, 7.5, 1, 3, 16, 16\n",
		"a memory size far above any GPU":                      "0, Tesla T4, GPU-1, 00000000:00:1E.0, 8796093022208, 0, 15360, 550.54.15, 7.5, 1, 3, 16, 16\n",
	}
	many := strings.Repeat("0, Tesla T4, GPU-1, 00000000:00:1E.0, 15360, 0, 15360, 550.54.15, 7.5, 1, 3, 16, 16\n", maxGPUs+1)
	if _, err := ParseQueryGPU([]byte(many), QueryFields); err == nil || !strings.Contains(err.Error(), "more than 1024 GPUs") {
		t.Errorf("%d GPUs: err = %v, want more than %d GPUs", maxGPUs+1, err, maxGPUs)
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseQueryGPU([]byte(in), QueryFields)
			if err == nil || !strings.Contains(err.Error(), "line 1") {
				t.Errorf("err = %v, want an error naming line 1", err)
			}
		})
	}
}

func FuzzParseQueryGPU(f *testing.F) {
	f.Add([]byte("0, Quadro RTX 4000, GPU-c7b57be0, 00000000:06:00.0, 8192, 1, 7965, 535.129.03, 7.5, 1, 3, 16, 16\n"))
	f.Add([]byte("2, [Unknown Error], a, b, c, d, [GPU is lost], e, [N/A], 1.2.3, , , ,,,\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseQueryGPU(b, QueryFields)
		if err != nil {
			return
		}
		for _, g := range q.GPUs {
			if m, ok := g.Memory.Get(); ok && m.Total%(1<<20) != 0 {
				t.Errorf("memory %d not whole MiB", m.Total)
			}
		}
		_ = Devices(&Raw{GPUs: q.GPUs})
	})
}

func TestParseCUDAVersion(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		want   int
		wantOK bool
	}{
		{"nvidia-smi -q on a 450 driver says 11.0", "q-450.66-gtx780.txt", 11000, true},
		{"nvidia-smi -a on an A100 says 11.4", "q-470.103.01-a100-sxm4-80gb.txt", 11040, true},
		{"an excerpt starting at the timestamp still has the line", "q-450.203.03-a100-sxm4-40gb-x8.txt", 11000, true},
		{"the 410 driver's narrower columns", "q-410.72-gtx960m.txt", 10000, true},
		{"nvidia-smi -q -d COMPUTE keeps the header", "q-d-compute-535.129.03-a100-pcie.txt", 12020, true},
		{"the banner of plain nvidia-smi", "banner-535.129.03-quadro-rtx4000.txt", 12020, true},
		{"drivers before 410 print no CUDA line", "q-396.54-gtx1080-no-cuda-line.txt", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseCUDAVersion(readFixture(t, "smi", tt.file))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got %d %v, want %d %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	if _, ok := ParseCUDAVersion([]byte("CUDA Version : N/A\n")); ok {
		t.Error("N/A parsed as a version")
	}
}

func FuzzParseCUDAVersion(f *testing.F) {
	f.Add([]byte("CUDA Version                              : 12.4\n"))
	f.Add([]byte("| NVIDIA-SMI 535.129.03   Driver Version: 535.129.03   CUDA Version: 12.2     |"))
	f.Add([]byte("CUDA Version:"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := ParseCUDAVersion(b)
		if ok && (v < 0 || CUDAVersionString(v) == "" && v != 0) {
			t.Errorf("bad version %d", v)
		}
	})
}
