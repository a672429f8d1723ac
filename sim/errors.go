package sim

import (
	"errors"
	"fmt"
)

// ParamError reports a parameter given a value outside what it allows. Every package
// returns it for bad user input, so the message always names the parameter, the value and
// the allowed range the same way, and callers can recover it with errors.As.
type ParamError struct {
	Param   string // snake_case name, as the user wrote it or will find it in `redlock-sim params`
	Value   any    // the offending value
	Allowed string // the allowed range or set, e.g. "[0, 1]" or "(-500000, 500000)"
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s = %v: out of range, allowed %s", e.Param, e.Value, e.Allowed)
}

// BadParam returns a *ParamError; it keeps call sites on one line.
func BadParam(param string, value any, allowed string) error {
	return &ParamError{Param: param, Value: value, Allowed: allowed}
}

// ErrFull is returned when an event would exceed the queue's limit on pending events:
// a runaway world is stopped with an explanation instead of eating all memory.
var ErrFull = errors.New("sim: event queue full")
