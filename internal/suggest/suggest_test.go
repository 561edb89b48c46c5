package suggest

import "testing"

func TestClosest(t *testing.T) {
	checks := []string{"nvidia.nvml_init", "nvidia.driver_loaded", "env.visible_devices", "host.shm_size"}
	tests := []struct{ name, in, want string }{
		{"one letter dropped", "nvidia.nvml_int", "nvidia.nvml_init"},
		{"a prefix means the name that starts with it", "host.shm", "host.shm_size"},
		{"case is ignored", "ENV.VISIBLE_DEVICES", "env.visible_devices"},
		{"nothing close gives nothing", "kernel.panic", ""},
		{"a transposition", "gpu_cuont", "gpu_count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cands := checks
			if tc.want == "gpu_count" {
				cands = []string{"gpu_count", "device_count", "backend"}
			}
			if got := Closest(tc.in, cands); got != tc.want {
				t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzClosest(f *testing.F) {
	f.Add("nvidia.nvml_int")
	f.Fuzz(func(t *testing.T, s string) {
		if got := Closest(s, []string{"a", "probe", "doctor"}); got != "" && got != "a" && got != "probe" && got != "doctor" {
			t.Fatalf("Closest returned %q, not a candidate", got)
		}
	})
}

// The catalogue names recommend suggests: a device cut short gets the one
// that starts with it, not the nearest shorter one.
func TestClosestCatalogueNames(t *testing.T) {
	devices := []string{"t4", "a10g", "a100-40gb", "a100-80gb", "h100-80gb"}
	tests := []struct{ name, in, want string }{
		{"a typo gets the name one edit away", "a10x", "a10g"},
		{"a name cut short gets a name that starts with it, not the nearest shorter one", "a100", "a100-40gb"},
		{"prefix matching ignores case", "H100", "h100-80gb"},
		{"nothing close gets nothing", "quantum-computer", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Closest(tt.in, devices); got != tt.want {
				t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
