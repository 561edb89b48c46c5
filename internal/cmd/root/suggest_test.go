package root

import "testing"

func TestDidYouMean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"cobra's block becomes one clause", "unknown command \"prob\" for \"devctl\"\n\nDid you mean this?\n\tprobe\n", `unknown command "prob" for "devctl": did you mean "probe"?`},
		{"two suggestions", "unknown command \"x\" for \"devctl\"\n\nDid you mean this?\n\trun\n\tbench\n", `unknown command "x" for "devctl": did you mean "run" or "bench"?`},
		{"no block is unchanged", `unknown command "zzz" for "devctl"`, `unknown command "zzz" for "devctl"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := OneLine(tc.in); got != tc.want {
				t.Errorf("OneLine = %q, want %q", got, tc.want)
			}
		})
	}
}
