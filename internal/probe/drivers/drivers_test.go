package drivers

import (
	"strings"
	"testing"
)

func TestSelect(t *testing.T) {
	tests := []struct {
		name    string
		only    []string
		want    int // drivers returned, system included
		wantErr string
	}{
		{"no --only runs every driver", nil, len(All()), ""},
		{"names are trimmed, lower-cased and deduplicated", []string{" CPU", "cpu", "memory"}, 3, ""},
		{"an unknown name is refused with the accepted ones", []string{"gpu"}, 0, `unknown driver "gpu" in --only: want any of cpu`},
		{"only blanks is refused, not silently run as system alone", []string{" ", ""}, 0, "empty --only: want any of cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Select(tt.only)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Errorf("got %d drivers, want %d", len(got), tt.want)
			}
		})
	}
}
