package recommend

import (
	"testing"

	"github.com/devctl/devctl/internal/oomsim"
	"github.com/google/go-cmp/cmp"
)

func TestSetStrategy(t *testing.T) {
	type got struct {
		Strategy oomsim.Strategy
		Source   string
		Fraction float64
	}
	tests := []struct {
		name                       string
		strategy                   oomsim.Strategy
		fraction                   float64
		strategySource, fracSource string
		want                       got
	}{
		{name: "nothing set leaves the choice to the model size", strategy: "balanced", fraction: 0.75,
			strategySource: "default", fracSource: "default", want: got{}},
		{name: "a strategy set in the environment is taken with its source", strategy: "aggressive", fraction: 0.9,
			strategySource: "env DEVCTL_MEMORY_STRATEGY", fracSource: "default", want: got{Strategy: "aggressive", Source: "env DEVCTL_MEMORY_STRATEGY", Fraction: 0.9}},
		{name: "a custom strategy names the fraction's source when the user set the fraction", strategy: "custom", fraction: 0.5,
			strategySource: "file c.yaml", fracSource: "flag --memory-fraction", want: got{Strategy: "custom", Source: "flag --memory-fraction", Fraction: 0.5}},
		{name: "a custom default strategy is taken even when nothing was set", strategy: "custom", fraction: 0.8,
			strategySource: "default", fracSource: "default", want: got{Strategy: "custom", Source: "default", Fraction: 0.8}},
		{name: "a fraction set alone makes the configured strategy count", strategy: "balanced", fraction: 0.7,
			strategySource: "default", fracSource: "flag --memory-fraction", want: got{Strategy: "balanced", Source: "default", Fraction: 0.7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in Input
			in.SetStrategy(tc.strategy, tc.fraction, tc.strategySource, tc.fracSource)
			if diff := cmp.Diff(tc.want, got{in.Strategy, in.StrategySource, in.Fraction}); diff != "" {
				t.Errorf("SetStrategy (-want +got):\n%s", diff)
			}
		})
	}
}

// The allocator's expandable segments are read from the variable PyTorch
// reads: PYTORCH_ALLOC_CONF before PYTORCH_CUDA_ALLOC_CONF, options
// separated by commas, "True" only.
func TestExpandableFromEnv(t *testing.T) {
	cases := []struct {
		env  map[string]string
		on   bool
		from string
	}{
		{map[string]string{}, false, ""},
		{map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, true, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"},
		{map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:128, expandable_segments:True"}, true, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"},
		{map[string]string{"PYTORCH_ALLOC_CONF": "expandable_segments:True", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False"}, true, "PYTORCH_ALLOC_CONF=expandable_segments:True"},
		{map[string]string{"PYTORCH_ALLOC_CONF": "max_split_size_mb:128", "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}, false, ""},
		{map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False"}, false, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False"},
		{map[string]string{"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments=True"}, false, ""},
	}
	for _, c := range cases {
		on, from := ExpandableFromEnv(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if on != c.on || from != c.from {
			t.Errorf("%v: got %v %q, want %v %q", c.env, on, from, c.on, c.from)
		}
	}
}
