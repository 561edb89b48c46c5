package units_test

import (
	"math"
	"testing"

	"github.com/devctl/devctl/internal/units"
)

func TestFormatting(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"a few bytes print as bytes", units.Bytes(512).String(), "512 B"},
		{"KiB get one decimal", units.Bytes(1536).String(), "1.5 KiB"},
		{"MiB get one decimal", (20 * units.MiB).String(), "20.0 MiB"},
		{"GiB get two decimals", units.Bytes(15837691904).String(), "14.75 GiB"},
		{"TiB get two decimals", (3 * units.TiB / 2).String(), "1.50 TiB"},
		{"a negative size keeps its sign", (-2 * units.GiB).String(), "-2.00 GiB"},
		{"the most negative size does not overflow", units.Bytes(math.MinInt64).String(), "-8388608.00 TiB"},
		{"Format uses the unit asked for", (3 * units.GiB).Format(units.MiB, 0), "3072 MiB"},
		{"whole units round down", (units.MiB*2 - 1).Format(units.MiB, 0), "1 MiB"},
		{"Number has no unit name", (units.GiB + units.GiB/4).Number(units.GiB, 2), "1.25"},
		{"Short shows MiB below a GiB", units.FromMiB(1023).Short(), "1023 MiB"},
		{"Short shows GiB with one decimal", units.FromMiB(24064).Short(), "23.5 GiB"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestMiBRoundTrips(t *testing.T) {
	if got := units.FromMiB(81920).MiB(); got != 81920 {
		t.Errorf("FromMiB(81920).MiB() = %d", got)
	}
}

func FuzzString(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, n int64) {
		if s := units.Bytes(n).String(); s == "" {
			t.Errorf("Bytes(%d).String() is empty", n)
		}
	})
}

func TestParseDeviceMemory(t *testing.T) {
	for in, want := range map[string]units.Bytes{"24GiB": 24 * units.GiB, "24 GB": 24 * units.GiB, "24g": 24 * units.GiB, "16384MiB": 16 * units.GiB, "0.5TiB": units.TiB / 2, "80GB": 80 * units.GiB} {
		if got, err := units.ParseDeviceMemory(in); err != nil || got != want {
			t.Errorf("units.ParseDeviceMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "24", "GiB", "-1GiB", "0GB", "NaNGiB", "1e9TiB", "24 apples"} {
		if _, err := units.ParseDeviceMemory(bad); err == nil {
			t.Errorf("units.ParseDeviceMemory(%q) accepted", bad)
		}
	}
}

func FuzzParseDeviceMemory(f *testing.F) {
	f.Add("24GiB")
	f.Add("16 GB")
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := units.ParseDeviceMemory(s); err == nil && (b <= 0 || b > 1<<50) {
			t.Errorf("units.ParseDeviceMemory(%q) = %d", s, b)
		}
	})
}
