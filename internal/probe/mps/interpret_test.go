package mps_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/devctl/devctl/internal/probe/mps"
)

// Synthetic facts: each case sets only what one rule reads.
func TestInterpret(t *testing.T) {
	type want struct {
		Name, Vendor, Detail string
		TotalMB              int64
		Estimated            bool
		BF16                 bool
	}
	tests := []struct {
		name  string
		facts mps.Facts
		want  want
	}{
		{
			name:  "Apple silicon without a wired limit estimates the working set from unified memory",
			facts: mps.Facts{MacOS: "14.5", Chip: "Apple M2 Max", AppleSilicon: true, MemBytes: 32 << 30, GPUCores: 38},
			want:  want{Name: "Apple M2 Max", Vendor: "Apple", Detail: "Apple M2 Max, macOS 14.5, 38 GPU cores", TotalMB: (32 << 30) / 100 * 67 >> 20, Estimated: true, BF16: true},
		},
		{
			name:  "a wired limit set with sysctl is the budget, not an estimate",
			facts: mps.Facts{MacOS: "13.6", Chip: "Apple M1", AppleSilicon: true, MemBytes: 16 << 30, WiredLimitMB: 12288, Rosetta: true},
			want:  want{Name: "Apple M1", Vendor: "Apple", Detail: "Apple M1, macOS 13.6, running under Rosetta 2", TotalMB: 12288},
		},
		{
			name:  "an Intel Mac's AMD GPU brings its own VRAM",
			facts: mps.Facts{MacOS: "12.7", Chip: "Intel(R) Core(TM) i9", AMD: true, GPUModel: "AMD Radeon Pro 5500M", VRAMMiB: 8192},
			want:  want{Name: "AMD Radeon Pro 5500M", Vendor: "AMD", Detail: "AMD Radeon Pro 5500M, macOS 12.7", TotalMB: 8192},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mps.Interpret(tc.facts)
			d := res.Devices[0]
			got := want{Name: d.Name, Vendor: d.Vendor, Detail: res.Detail, BF16: d.SupportsBF16}
			got.Estimated, _ = d.Extra["gpu_budget_estimated"].(bool)
			if d.TotalMemoryMB != nil {
				got.TotalMB = *d.TotalMemoryMB
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Interpret (-want +got):\n%s", diff)
			}
		})
	}
}
