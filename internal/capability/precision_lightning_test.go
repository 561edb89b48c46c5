package capability

import "testing"

func TestLightningPrecisionNames(t *testing.T) {
	for in, want := range map[string]struct {
		p      Precision
		regime string
	}{
		"bf16-true": {BF16, "pure"}, "bf16-mixed": {BF16, "amp"}, "16-mixed": {FP16, "amp"}, "16-true": {FP16, "pure"},
		"32-true": {FP32, ""}, "bf16": {BF16, ""},
	} {
		p, err := ParsePrecision(in)
		if err != nil || p != want.p || TrainingRegime(in) != want.regime {
			t.Errorf("%q: %q %v, regime %q; want %q, %q", in, p, err, TrainingRegime(in), want.p, want.regime)
		}
	}
}
