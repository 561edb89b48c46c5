package rocm

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/hw/pci"
)

// These cases are synthetic: each sets only the facts one rule reads.
func TestInterpret(t *testing.T) {
	mi300x := &pci.Device{Address: "0000:0c:00.0", Vendor: pci.VendorAMD, Device: 0x74a1, Driver: "amdgpu", NUMANode: 0}
	type want struct {
		name, detail, memSource, partition string
		memMB                              int64
		partitions                         any
	}
	tests := []struct {
		name string
		raw  Raw
		want []want
	}{
		{
			name: "a catalogued id is named from the table and its gfx comes from gfx_target_version",
			raw: Raw{DevKFD: true, GroupsOK: true, Nodes: []Node{{ID: 1, Bus: mi300x.Address, Function: mi300x,
				Properties: Properties{"simd_count": 1216, "gfx_target_version": 90402}, VRAMBytes: 192 << 30}}},
			want: []want{{name: "AMD Instinct MI300X", detail: "1 GPU(s) (gfx942)", memSource: "kfd mem_banks", memMB: 192 << 10}},
		},
		{
			name: "an unknown id takes sysfs product_name and DRM's VRAM when KFD has no frame buffer",
			raw: Raw{DevKFD: true, GroupsOK: true, Nodes: []Node{{ID: 1, Bus: "0000:03:00.0",
				Properties: Properties{"simd_count": 64, "device_id": 0x1234}, ProductName: "Radeon Pro X", DRMVRAMBytes: 8 << 30}}},
			want: []want{{name: "Radeon Pro X", detail: "1 GPU(s)", memSource: "drm mem_info_vram_total", memMB: 8 << 10}},
		},
		{
			name: "an unknown id without product_name is named by its device id, and a missing /dev/kfd is noted",
			raw:  Raw{Nodes: []Node{{ID: 1, Bus: "0000:03:00.0", Properties: Properties{"simd_count": 64, "device_id": 0x1234}}}},
			want: []want{{name: "AMD GPU 1234", detail: "1 GPU(s); /dev/kfd missing"}},
		},
		{
			name: "two nodes sharing a unique_id are partitions of one GPU and carry its compute partition",
			raw: Raw{DevKFD: true, GroupsOK: false, Nodes: []Node{
				{ID: 2, Bus: mi300x.Address, Function: mi300x, Properties: Properties{"simd_count": 304, "unique_id": 7}, ComputePartition: "CPX"},
				{ID: 3, Bus: mi300x.Address, Function: mi300x, Properties: Properties{"simd_count": 304, "unique_id": 7}, ComputePartition: "CPX"},
			}},
			want: []want{
				{name: "AMD Instinct MI300X", detail: "2 GPU(s) (gfx942); not in the render/video group", partition: "CPX", partitions: 2},
				{name: "AMD Instinct MI300X", detail: "2 GPU(s) (gfx942); not in the render/video group", partition: "CPX", partitions: 2},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := Interpret(tc.raw)
			var got []want
			for _, d := range res.Devices {
				w := want{name: d.Name, detail: res.Detail, partitions: d.Extra["partitions"]}
				w.memSource, _ = d.Extra["memory_source"].(string)
				w.partition, _ = d.Extra["compute_partition"].(string)
				if d.TotalMemoryMB != nil {
					w.memMB = *d.TotalMemoryMB
				}
				got = append(got, w)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Interpret (-want +got):\n%s", diff)
			}
		})
	}
}
