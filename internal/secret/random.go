package secret

import "math"

// Random thresholds: a word is a generated token when it is at least
// randomMinLen letters and digits long, holds upper case, lower case and
// digits, changes character class (upper, lower, digit) between at least
// randomMinChanges of its neighbouring characters, and carries at least
// randomMinBits bits of entropy per character. Measured on the test's
// examples: generated tokens change class between 44-100% of neighbours
// at 4.3-5.3 bits; camel-case names and modalias strings (the longest
// mixed words a machine's files hold) change at 22-50% at 2.9-4.4 bits,
// never both above the bars.
const (
	randomMinLen     = 24
	randomMinChanges = 0.4
	randomMinBits    = 4.0
)

// Random reports whether word looks like a generated credential by its
// letters alone (see the thresholds above).
func Random(word []byte) bool {
	if len(word) < randomMinLen {
		return false
	}
	var counts [128]int
	var upper, lower, digit bool
	changes := 0
	prev := -1
	for _, c := range word {
		if c >= 128 || !alnum(c) {
			return false
		}
		counts[c]++
		cl := class(c)
		switch cl {
		case 0:
			upper = true
		case 1:
			lower = true
		default:
			digit = true
		}
		if prev >= 0 && cl != prev {
			changes++
		}
		prev = cl
	}
	if !upper || !lower || !digit || float64(changes) < randomMinChanges*float64(len(word)-1) {
		return false
	}
	bits := 0.0
	n := float64(len(word))
	for _, k := range counts {
		if k > 0 {
			p := float64(k) / n
			bits -= p * math.Log2(p)
		}
	}
	return bits >= randomMinBits
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

func class(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return 0
	case c >= 'a' && c <= 'z':
		return 1
	}
	return 2
}

// maskRandom replaces every maximal run of letters and digits that Random
// calls generated: a value, a path segment, a URL part or a word, wherever
// it stands.
func maskRandom(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if !alnum(b[i]) {
			i++
			continue
		}
		j := i
		for j < len(b) && alnum(b[j]) {
			j++
		}
		if j-i >= randomMinLen && Random(b[i:j]) {
			out = append(out, b[last:i]...)
			out = append(out, withheld...)
			last = j
		}
		i = j
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
