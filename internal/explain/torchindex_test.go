package explain

import "testing"

func TestTorchInstall(t *testing.T) {
	tests := []struct {
		name, driver, want string
		ok                 bool
	}{
		{"a CUDA 11.4 driver gets the 11.3 build, not cu118", "11.4", "pip install torch==1.12.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113", true},
		{"an exact match is used", "11.8", "pip install torch --index-url https://download.pytorch.org/whl/cu118", true},
		{"a 12.2 driver gets cu121 (there is no cu122)", "12.2", "pip install torch --index-url https://download.pytorch.org/whl/cu121", true},
		{"a driver newer than every listed build gets the newest", "13.0", "pip install torch --index-url https://download.pytorch.org/whl/cu124", true},
		{"a major alone reads as .0: 12.0 is older than cu121", "12", "pip install torch --index-url https://download.pytorch.org/whl/cu118", true},
		{"a driver older than every listed build gets none", "10.1", "", false},
		{"garbage gets none", "abc", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TorchInstall(tc.driver)
			if got != tc.want || ok != tc.ok {
				t.Errorf("TorchInstall(%q) = %q, %v; want %q, %v", tc.driver, got, ok, tc.want, tc.ok)
			}
		})
	}
}
