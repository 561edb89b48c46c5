// Package units gives byte sizes a type and one way to print them, so a
// figure read in MiB from sysfs, compared in bytes by recommend and shown
// in GiB by a table cannot be misread between packages.
package units

import (
	"fmt"
	"strconv"
	"strings"
)

// Bytes is a size in bytes. devctl's memory figures are binary (a GPU's
// "80 GB" is 80 GiB), so the units below are powers of 1024.
type Bytes int64

// Binary units.
const (
	B   Bytes = 1
	KiB Bytes = 1 << 10
	MiB Bytes = 1 << 20
	GiB Bytes = 1 << 30
	TiB Bytes = 1 << 40
)

// FromMiB converts a MiB count, the unit of the report's *_mb fields.
func FromMiB(n int64) Bytes { return Bytes(n) * MiB }

// MiB returns the size in whole MiB, rounded down (the report's *_mb).
func (b Bytes) MiB() int64 { return int64(b / MiB) }

// In returns the size as a count of unit.
func (b Bytes) In(unit Bytes) float64 { return float64(b) / float64(unit) }

func (u Bytes) name() string {
	switch u {
	case KiB:
		return "KiB"
	case MiB:
		return "MiB"
	case GiB:
		return "GiB"
	case TiB:
		return "TiB"
	}
	return "B"
}

// Number prints the size as a count of unit with prec decimals and no unit
// name ("12.55" GiB). With prec 0 it counts whole units, rounded down, as
// a MiB field does.
func (b Bytes) Number(unit Bytes, prec int) string {
	if prec <= 0 {
		return strconv.FormatInt(int64(b/unit), 10)
	}
	return strconv.FormatFloat(b.In(unit), 'f', prec, 64)
}

// Format prints the size in unit with prec decimals and the unit's name:
// Format(GiB, 2) gives "14.75 GiB", Format(MiB, 0) "512 MiB".
func (b Bytes) Format(unit Bytes, prec int) string {
	return b.Number(unit, prec) + " " + unit.name()
}

// String prints the size the way the frameworks do, in the largest binary
// unit that keeps the number at least 1: "512 B", "20.0 MiB", "14.75 GiB"
// (one decimal below a GiB, two from there).
func (b Bytes) String() string {
	sign, f := "", float64(b)
	if b < 0 {
		sign, f = "-", -f // float: -math.MinInt64 does not overflow
	}
	num := func(unit Bytes, prec int) string {
		return sign + strconv.FormatFloat(f/float64(unit), 'f', prec, 64) + " " + unit.name()
	}
	switch {
	case f < float64(KiB):
		return num(B, 0)
	case f < float64(MiB):
		return num(KiB, 1)
	case f < float64(GiB):
		return num(MiB, 1)
	case f < float64(TiB):
		return num(GiB, 2)
	}
	return num(TiB, 2)
}

// Short prints a memory size the way a table shows it: whole MiB below a
// GiB, GiB with one decimal from there ("512 MiB", "23.5 GiB"). It starts
// from the whole MiB, as the report's *_mb fields hold them, so a size
// prints the same whether it came in bytes or in MiB.
func (b Bytes) Short() string {
	m := FromMiB(b.MiB())
	if m >= GiB {
		return m.Format(GiB, 1)
	}
	return m.Format(MiB, 0)
}

// ParseDeviceMemory reads a device's memory as people write it: 24GiB,
// 24 GB, 24G, 16384MiB, 0.5TiB. GPU makers' "GB" are binary (an "80 GB"
// A100 has 81,920 MiB; a "24 GB" RTX 4090 24,564 MiB), so GB, G and GiB
// all mean 2^30 bytes here, and likewise MB/MiB and TB/TiB.
func ParseDeviceMemory(s string) (Bytes, error) {
	t := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	var unit Bytes
	for _, u := range []struct {
		suffix string
		b      Bytes
	}{{"tib", TiB}, {"tb", TiB}, {"t", TiB}, {"gib", GiB}, {"gb", GiB}, {"g", GiB}, {"mib", MiB}, {"mb", MiB}, {"m", MiB}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, unit = rest, u.b
			break
		}
	}
	if unit == 0 {
		return 0, fmt.Errorf("%q has no unit: want a size such as 24GiB, 16GB or 16384MiB", s)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f != f || f <= 0 || f*float64(unit) > 1<<50 {
		return 0, fmt.Errorf("%q is not a device memory size: want a positive size up to 1 PiB, such as 24GiB, 16GB or 16384MiB", s)
	}
	return Bytes(f * float64(unit)), nil
}
