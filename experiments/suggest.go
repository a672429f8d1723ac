package experiments

import (
	"slices"
	"strings"
)

// UnknownError reports a name that is not a knob (or not a scenario), with the known
// names closest to it, so a typo on the command line or in a sweep spec is one look away
// from its fix.
type UnknownError struct {
	What        string   // "knob" or "scenario"
	Name        string   // as given
	Suggestions []string // close matches, best first; may be empty
}

func (e *UnknownError) Error() string {
	msg := "unknown " + e.What + " " + quote(e.Name)
	if len(e.Suggestions) > 0 {
		msg += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	}
	switch e.What {
	case "knob":
		msg += " (`redlock-sim params` lists every knob)"
	case "scenario":
		msg += " (`redlock-sim scenarios` lists every scenario)"
	}
	return msg
}

func quote(s string) string { return `"` + s + `"` }

func unknown(what, name string, known []string) *UnknownError {
	return &UnknownError{What: what, Name: name, Suggestions: closest(name, known, 3)}
}

// closest returns up to n of known that are near name: within an edit distance of about a
// third of its length (at least 2), or sharing a prefix or substring of three letters or
// more; nearest first, ties in the order known lists them.
func closest(name string, known []string, n int) []string {
	type cand struct {
		s    string
		d, i int
	}
	low := strings.ToLower(name)
	limit := max(2, len(low)/3)
	var cs []cand
	for i, k := range known {
		d := editDistance(low, k)
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
	var out []string
	for _, c := range cs {
		if len(out) == n {
			break
		}
		out = append(out, c.s)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
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
