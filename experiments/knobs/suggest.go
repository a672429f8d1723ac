package knobs

import (
	"strings"

	"github.com/redlock-sim/redlock-sim/internal/suggest"
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

// Unknown returns the error for name, not among known, with the closest known names.
func Unknown(what, name string, known []string) *UnknownError {
	return &UnknownError{What: what, Name: name, Suggestions: suggest.Closest(name, known, 3)}
}
