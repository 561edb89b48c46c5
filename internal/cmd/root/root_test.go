package root

import (
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	long := strings.Repeat("x", 100000)
	tests := []struct{ name, in, want string }{
		{"a short message is unchanged", `invalid --device "gpu": want one of auto, cuda`, `invalid --device "gpu": want one of auto, cuda`},
		{"line breaks become semicolons", "file.yaml: line 3: a\n  line 5: b\n", "file.yaml: line 3: a; line 5: b"},
		{"a huge quoted value is cut and its size given", `device.preferred "` + long + `" (from flag --device): want one of auto`,
			`device.preferred "` + strings.Repeat("x", maxQuoted) + `..." (100000 bytes) (from flag --device): want one of auto`},
		{"an unbalanced quote is left alone", `odd " quote`, `odd " quote`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OneLine(tt.in); got != tt.want {
				t.Errorf("OneLine = %q, want %q", got, tt.want)
			}
		})
	}
}
