package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCPUExtraMap(t *testing.T) {
	tests := []struct {
		name string
		in   CPUExtra
		want map[string]any
	}{
		{"no known fact gives no extra object", CPUExtra{}, nil},
		{"known facts keep the report's key names", CPUExtra{OnlineCPUs: 4, CPUSet: "0-3", MaxFrequencySource: "cpufreq cpuinfo_max_freq"},
			map[string]any{"online_cpus": 4, "cpuset": "0-3", "max_frequency_source": "cpufreq cpuinfo_max_freq"}},
		{"hybrid core counts are listed", CPUExtra{PerformanceCores: 4, EfficiencyCores: 6},
			map[string]any{"performance_cores": 4, "efficiency_cores": 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.in.Map()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
