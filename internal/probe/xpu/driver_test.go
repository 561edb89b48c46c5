package xpu_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe"
	"github.com/devctl/devctl/internal/probe/xpu"
	"github.com/devctl/devctl/internal/testutil/fakehost"
)

func TestFamily(t *testing.T) {
	tests := []struct {
		id   uint16
		want string
	}{
		{0x0bd5, "max"}, {0x0bd0, "max"}, {0x0b69, "max"}, {0x0be5, "max"},
		{0x56a0, "arc"}, {0x5690, "arc"}, {0x56bf, "arc"}, {0x56b3, "arc"},
		{0x56c0, "flex"}, {0x56c1, "flex"},
		{0xe20b, "battlemage"}, {0xe202, "battlemage"}, {0xe223, "battlemage"},
		{0x4680, ""}, {0x7d55, ""}, {0x9a49, ""}, {0x56a7, ""},
	}
	for _, tt := range tests {
		if got := xpu.Family(tt.id); got != tt.want {
			t.Errorf("Family(%#04x) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestProbeArcBattlemageAndIGPU(t *testing.T) {
	h := fakehost.RootHost(t, filepath.Join("..", "..", "..", "testdata", "accel", "xpu-arc-bmg-igpu"), nil)
	res, err := xpu.New().Probe(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID, Name, Pytorch, Source string
		Mem                       int64
	}
	var got []row
	for _, d := range res.Devices {
		got = append(got, row{d.ID, d.Name, d.PytorchDevice, d.Extra["memory_source"].(string), *d.TotalMemoryMB})
	}
	want := []row{
		{"xpu:0", "Intel Arc A-series", "xpu:0", "i915 lmem_total_bytes", 16288},
		{"xpu:1", "Intel Arc B-series", "xpu:1", "xe physical_vram_size_bytes", 12288},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.Detail, "1 integrated or unbound not listed") {
		t.Errorf("detail %q does not count the integrated GPU left out", res.Detail)
	}
	if l := res.Devices[0].Link; l == nil || *l.GenCurrent != 1 || *l.WidthCurrent != 1 {
		t.Errorf("the Arc's x1 gen1 link was not reported: %+v", l)
	}
}

func TestProbeAbsence(t *testing.T) {
	tests := []struct {
		name  string
		files fakehost.Files
		want  string
	}{
		{"only an integrated GPU", fakehost.PCIFunction("0000:00:02.0", 0x8086, 0x4680, 0x8086, 0, 0x030000, "i915", "Unknown", 0),
			"no Intel discrete GPU (1 integrated GPU(s) not listed): absent"},
		{"an Arc with no driver bound", fakehost.PCIFunction("0000:03:00.0", 0x8086, 0x56a0, 0x8086, 0, 0x030000, "", "16.0 GT/s PCIe", 16),
			"1 Intel discrete GPU(s) without the i915 or xe driver bound: absent"},
		{"an Intel NIC only", fakehost.PCIFunction("0000:05:00.0", 0x8086, 0x15f3, 0x1043, 0x87d2, 0x020000, "igc", "5.0 GT/s PCIe", 1),
			"no Intel GPU on the PCI bus: absent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := xpu.New().Probe(context.Background(), fakehost.Host(t, tt.files, nil))
			if !errors.Is(err, probe.ErrAbsent) || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
