// Package suggest finds the name a user most likely meant, for every "did
// you mean" devctl prints: commands' flags and environment variables,
// check ids, requirement fields, catalogued models and devices. It is a
// leaf package: no devctl imports, no I/O.
package suggest

import "strings"

// Closest returns the candidate nearest to name, or "" when nothing is
// reasonably close. A candidate that starts with name wins (a name cut
// short); otherwise the fewest edits, when at most about half the name
// differs. Case is ignored.
func Closest(name string, candidates []string) string {
	name = strings.ToLower(name)
	if len(name) >= 2 {
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), name) {
				return c
			}
		}
	}
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := distance(name, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > (len([]rune(name))+1)/2+1 {
		return ""
	}
	return best
}

// distance is the Levenshtein distance over runes; names longer than 256
// runes are far from everything.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 256 || len(rb) > 256 {
		return 1 << 20
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
