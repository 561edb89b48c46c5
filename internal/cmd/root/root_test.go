package root

import (
	"strings"
	"testing"

	"github.com/devctl/devctl/internal/cmd/factory"
	"github.com/devctl/devctl/internal/iostreams"
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

// Main builds only the commands the arguments can reach: the named one
// (after global flags and their values), none for a bare --version, and
// all of them when a word needs the whole tree (help, completion, an
// unknown command's suggestions).
func TestReachable(t *testing.T) {
	tests := []struct {
		args []string
		want []string // nil: every command
	}{
		{[]string{"probe", "-o", "json"}, []string{"probe"}},
		{[]string{"--from", "x.tar.gz", "recommend", "--model", "gpt2"}, []string{"recommend"}},
		{[]string{"--timeout", "2s", "--no-color", "doctor"}, []string{"doctor"}},
		{[]string{"--timeout=2s", "snapshot"}, []string{"snapshot"}},
		{[]string{"--from", "probe", "history"}, []string{"history"}}, // a flag's value is not the command
		{[]string{"--version"}, []string{}},
		{[]string{}, nil},
		{[]string{"help", "probe"}, nil},
		{[]string{"prob"}, nil},
		{[]string{"__complete", "pro"}, nil},
		{[]string{"--", "probe"}, nil},
	}
	io, _, _, _ := iostreams.Test()
	global := NewCmdRoot(factory.New(io, func(string) (string, bool) { return "", false }, "dev")).PersistentFlags()
	for _, tt := range tests {
		got := reachable(tt.args, global)
		if (got == nil) != (tt.want == nil) || len(got) != len(tt.want) {
			t.Errorf("reachable(%q) = %v, want %v", tt.args, got, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !got[w] {
				t.Errorf("reachable(%q) = %v, want %v", tt.args, got, tt.want)
			}
		}
	}
}
