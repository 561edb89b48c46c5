package recommend

import (
	"testing"
)

func TestParseParams(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"150M", 150_000_000, true},
		{"7B", 7_000_000_000, true},
		{"7b", 7_000_000_000, true},
		{"1.3e9", 1_300_000_000, true},
		{"350k", 350_000, true},
		{"350K", 350_000, true},
		{"6738415616", 6_738_415_616, true},
		{"1.5T", 1_500_000_000_000, true},
		{" 2.5m ", 2_500_000, true},
		{"150MB", 0, false},
		{"-5", 0, false},
		{"0", 0, false},
		{"abc", 0, false},
		{"1e400", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"+Inf", 0, false},
		{"0x1p3", 0, false},
		{"", 0, false},
		{"M", 0, false},
		{"0.5", 0, false},
		{"1e16", 0, false},
		{"1_000", 0, false},
		{"7 B", 0, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseParams(c.in)
			if (err == nil) != c.ok || got != c.want {
				t.Errorf("ParseParams(%q) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
			}
		})
	}
}

func FuzzParseParams(f *testing.F) {
	for _, s := range []string{"150M", "7B", "1.3e9", "350k", "6738415616", "1.5T", "150MB", "-5", "0", "abc", "1e400", "NaN", "Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseParams(s)
		if err != nil {
			return
		}
		if n < 1 || n > MaxParams {
			t.Fatalf("ParseParams(%q) = %d outside [1, MaxParams]", s, n)
		}
	})
}

func TestFormatParams(t *testing.T) {
	for in, want := range map[int64]string{124_439_808: "124.44M", 6_738_415_616: "6.74B", 350_000: "350K", 7: "7", 1_500_000_000_000: "1.5T"} {
		if got := FormatParams(in); got != want {
			t.Errorf("FormatParams(%d) = %q, want %q", in, got, want)
		}
	}
}

// Regression: 99,999,999 parameters printed as "100M parameters is under
// 100M"; a count that rounds onto a threshold is shown exactly.
func TestParamsNearAThresholdIsExact(t *testing.T) {
	for _, c := range []struct {
		p    int64
		want string
	}{
		{99_999_999, "99999999"},
		{100_000_001, "100000001"},
		{100_000_000, "100M"},
		{124_439_808, "124.44M"},
	} {
		if got := paramsNear(c.p, 100_000_000); got != c.want {
			t.Errorf("paramsNear(%d) = %q, want %q", c.p, got, c.want)
		}
	}
}
