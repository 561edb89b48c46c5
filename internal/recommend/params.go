package recommend

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// MaxParams bounds --model-params: a quadrillion parameters is far beyond
// any model and keeps every byte count inside int64.
const MaxParams = 1e15

// errParams is the one message every bad size gets.
var errParams = errors.New("want a positive number of parameters with an optional K, M, B or T suffix (e.g. 150M, 7B, 1.3e9, 350k, 6738415616)")

// ParseParams reads a parameter count: "150M", "7B", "1.3e9", "350k",
// "6738415616", "1.5T". Suffixes are decimal (K=1e3, M=1e6, B=1e9,
// T=1e12) and case-insensitive. Units ("150MB"), signs, zero, NaN,
// infinities, hex and anything above MaxParams are refused.
func ParseParams(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return 0, errParams
	}
	mult := 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		mult = 1e3
	case 'm', 'M':
		mult = 1e6
	case 'b', 'B':
		mult = 1e9
	case 't', 'T':
		mult = 1e12
	}
	num := s
	if mult != 1 {
		num = s[:len(s)-1]
	}
	if num == "" || num[0] == '+' || num[0] == '-' {
		return 0, errParams
	}
	for _, r := range num {
		if !(r >= '0' && r <= '9') && r != '.' && r != 'e' && r != 'E' && r != '+' && r != '-' {
			return 0, errParams
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errParams
	}
	f *= mult
	if !(f >= 1) || f > MaxParams {
		return 0, errParams
	}
	return int64(math.Round(f)), nil
}

// FormatParams renders a count the way model cards do: 124.4M, 6.74B.
func FormatParams(n int64) string {
	f := float64(n)
	switch {
	case f >= 1e12:
		return trim(f/1e12) + "T"
	case f >= 1e9:
		return trim(f/1e9) + "B"
	case f >= 1e6:
		return trim(f/1e6) + "M"
	case f >= 1e3:
		return trim(f/1e3) + "K"
	}
	return strconv.FormatInt(n, 10)
}

func trim(f float64) string {
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
