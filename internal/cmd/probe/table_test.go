package probe

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got)\n%s", name, diff)
	}
}

func TestProbeTableGolden(t *testing.T) {
	p := probe.Ptr[int]
	rep := &probe.Report{
		Host: probe.HostInfo{OS: "linux", Arch: "amd64", Kernel: probe.Ptr("6.1.0-18-amd64"), Container: "none", MemoryTotalMB: probe.Ptr(int64(515703)), CPUQuota: probe.Ptr(16.0)},
		Summary: probe.Summary{
			Backend: "cuda", DeviceType: "gpu", DeviceCount: 2, GPUCount: 2, DefaultDevice: "cuda:0",
			ComputeCapability: probe.Ptr("8.0"), CUDAVersion: probe.Ptr("12.4"), DriverVersion: probe.Ptr("550.90.07"),
			SupportsFP16: true, SupportsBF16: true, Supports8Bit: true, MemoryStrategy: "balanced", MemoryFraction: 0.75,
		},
		Devices: []probe.Device{
			{ID: "cuda:0", Name: "NVIDIA A100-SXM4-40GB", TotalMemoryMB: probe.Ptr(int64(40960)), FreeMemoryMB: probe.Ptr(int64(40326)), ComputeCapability: probe.Ptr("8.0"), Architecture: probe.Ptr("Ampere"), SupportsFP16: true, SupportsBF16: true, Supports8Bit: true, Link: &probe.PCIeLink{GenCurrent: p(4), GenMax: p(4), WidthCurrent: p(8), WidthMax: p(16)}},
			{ID: "cuda:1", Name: "NVIDIA A100-SXM4-40GB", TotalMemoryMB: probe.Ptr(int64(40960)), ComputeCapability: probe.Ptr("8.0"), Architecture: probe.Ptr("Ampere"), SupportsFP16: true, SupportsBF16: true, Supports8Bit: true},
			{ID: "cpu", Name: "AMD EPYC 7742 64-Core Processor", TotalMemoryMB: probe.Ptr(int64(515703))},
		},
		Drivers: []probe.DriverStatus{
			{Name: "cpu", Status: "ok"}, {Name: "rocm", Status: "absent", Detail: "no /sys/class/kfd"},
			{Name: "xpu", Status: "timeout", Detail: "no answer within 5s"},
		},
	}
	var buf bytes.Buffer
	if err := Table(&buf, rep, report.NewStyle(&buf, false)); err != nil {
		t.Fatal(err)
	}
	golden(t, "probe.golden", buf.Bytes())
	if bytes.Contains(buf.Bytes(), []byte("\x1b[")) {
		t.Error("plain output must carry no escape codes")
	}
}

func TestProbeTableNeutralisesControlCharacters(t *testing.T) {
	name := "EVIL\x1b]0;pwned\x07\x1b[2J name\r\nX"
	kernel := "6.1\x1b[31m"
	rep := &probe.Report{
		Host:    probe.HostInfo{OS: "linux", Arch: "amd64", Kernel: &kernel, Container: "none"},
		Summary: probe.Summary{Backend: "cpu", DeviceType: "cpu", DefaultDevice: "cpu"},
		Devices: []probe.Device{{ID: "cpu", Backend: "cpu", Name: name}},
		Drivers: []probe.DriverStatus{{Name: "cpu", Status: "error", Detail: "bad\x1b[2Jdetail"}},
	}
	var b bytes.Buffer
	if err := Table(&b, rep, report.NewStyle(&b, false)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"\x1b", "\x07", "\r"} {
		if bytes.Contains(b.Bytes(), []byte(c)) {
			t.Errorf("output holds control character %q:\n%s", c, b.String())
		}
	}
	if !bytes.Contains(b.Bytes(), []byte("EVIL?]0;pwned??[2J name??X")) {
		t.Errorf("name not shown with ? for control characters:\n%s", b.String())
	}
}

// The README's sample is real output of this table; it must show every
// part the table prints for a CPU-only machine with Python environments
// (it once lacked the Software section).
func TestReadmeSampleShowsEveryPart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sample, ok := bytes.Cut(readme, []byte("```\n$ devctl probe\n"))
	if !ok {
		t.Fatal("README has no `$ devctl probe` sample")
	}
	sample, _, _ = bytes.Cut(sample, []byte("```"))
	rep := &probe.Report{
		Host:     probe.HostInfo{OS: "linux", Arch: "amd64", Container: "docker"},
		Summary:  probe.Summary{Backend: "cpu", DeviceType: "cpu", DeviceCount: 1, DefaultDevice: "cpu", MemoryStrategy: "balanced", MemoryFraction: 0.75},
		Devices:  []probe.Device{{ID: "cpu", Backend: "cpu", DeviceType: "cpu", Name: "CPU", TotalMemoryMB: probe.Ptr(int64(1024))}},
		Software: &probe.Software{Environments: []probe.PythonEnv{{Kind: "system", Prefix: "/usr", PythonVersion: "3.11"}}},
	}
	var buf bytes.Buffer
	if err := Table(&buf, rep, report.NewStyle(&buf, false)); err != nil {
		t.Fatal(err)
	}
	labels := func(b []byte) []string {
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if k, _, ok := strings.Cut(l, ":"); ok && k != "" && k[0] >= 'A' && k[0] <= 'Z' && !strings.ContainsAny(k, "|+") {
				out = append(out, k)
			}
		}
		return out
	}
	if diff := cmp.Diff(labels(buf.Bytes()), labels(sample)); diff != "" {
		t.Errorf("README sample's parts differ from the table's (-table +README)\n%s", diff)
	}
}
