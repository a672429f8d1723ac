package sweep

import (
	"errors"
	"fmt"

	"github.com/redlock-sim/redlock-sim/internal/yamltree"
	"github.com/redlock-sim/redlock-sim/sim"
)

// SpecError reports a problem in a sweep spec at a place in its file, so that the user can
// go straight to the line. It prints as "spec FILE:LINE: problem".
type SpecError struct {
	File string
	Line int // 1-based; 0 when the problem belongs to no single line
	Err  error
}

func (e *SpecError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("spec %s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("spec %s: %v", e.File, e.Err)
}

// Unwrap returns the underlying problem (often a *sim.ParamError from the world).
func (e *SpecError) Unwrap() error { return e.Err }

// UsageError reports a mistake in how a sweep or a merge was asked for (a bad option, a
// folder that already holds results, a resume that does not match, shards that do not fit
// together): the user's to fix, so a command-line interface exits with status 2. Nothing
// has been written when it is returned.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying problem.
func (e *UsageError) Unwrap() error { return e.Err }

// IsUsage reports whether err is the user's to fix (a *SpecError or a *UsageError
// anywhere in its chain), which a command-line interface maps to exit status 2.
func IsUsage(err error) bool {
	var se *SpecError
	var ue *UsageError
	return errors.As(err, &se) || errors.As(err, &ue)
}

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

func badParam(param string, value any, allowed string) error {
	return &UsageError{Err: sim.BadParam(param, value, allowed)}
}

// suggest returns a " (did you mean X?)" hint naming the option closest to name.
var suggest = yamltree.Suggest
