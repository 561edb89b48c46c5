package root

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvTypos(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  []string
	}{
		{"a misspelt variable names the known one", []string{"DEVCTL_PRECISSION"},
			[]string{"DEVCTL_PRECISSION is not a devctl variable and is ignored; did you mean DEVCTL_PRECISION?"}},
		{"a known variable is quiet", []string{"DEVCTL_PRECISION", "DEVCTL_DEVICE", "DEVCTL_SYSROOT"}, nil},
		{"a DEVCTL_ name close to nothing is left alone", []string{"DEVCTL_RUN_TEST_MAIN", "DEVCTL_"}, nil},
		{"other variables are not looked at", []string{"PRECISSION", "HF_TOKEN"}, nil},
		{"a dropped letter in another name", []string{"DEVCTL_FALBACK_ENABLED"},
			[]string{"DEVCTL_FALBACK_ENABLED is not a devctl variable and is ignored; did you mean DEVCTL_FALLBACK_ENABLED?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, EnvTypos(tt.names)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
