// Package suggest finds the known names closest to a mistyped one, so that every "unknown
// knob", "unknown scenario" or "unknown spec key" error in redlock-sim offers the same,
// predictable fix.
package suggest

import (
	"slices"
	"strings"
)

// Closest returns up to n of known that are near name: within an edit distance of about a
// third of its length (at least 2), or sharing a substring of three letters or more with
// it; nearest first, ties in the order known lists them. The comparison ignores the case of
// name.
func Closest(name string, known []string, n int) []string {
	type cand struct {
		s    string
		d, i int
	}
	low := strings.ToLower(name)
	limit := max(2, len(low)/3)
	var cs []cand
	for i, k := range known {
		d := Distance(low, k)
		switch {
		case d <= limit:
		case len(low) >= 3 && (strings.Contains(k, low) || strings.Contains(low, k)):
			d = limit + 1
		default:
			continue
		}
		cs = append(cs, cand{k, d, i})
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return a.i - b.i
	})
	out := make([]string, 0, min(n, len(cs)))
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.s)
	}
	return out
}

// Distance is the Levenshtein distance between a and b, in bytes (names are ASCII).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
