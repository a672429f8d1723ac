package search

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/internal/suggest"
)

// InputError is a problem with what the user asked for (an assumption, a fault kind, a
// bound): it names the flag, the value as typed and what is allowed, so the command line
// exits with status 2.
type InputError struct {
	Flag  string // "--assume", "--faults", ...
	Value string // as the user wrote it
	Msg   string // what is wrong and what is allowed
	Err   error  // the knob's own complaint, when there is one
}

func (e *InputError) Error() string {
	msg := fmt.Sprintf("%s %s: %s", e.Flag, e.Value, e.Msg)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the knob's own complaint.
func (e *InputError) Unwrap() error { return e.Err }

// Op is how an assumption bounds its knob.
type Op uint8

// The assumption forms.
const (
	OpEq    Op = iota + 1 // NAME=VALUE: fixed
	OpLE                  // NAME<=VALUE
	OpGE                  // NAME>=VALUE
	OpRange               // NAME=LO..HI
)

// Assumption bounds one knob: fixed to a value, or a range the search draws from. A
// fault-length knob (pause_len, node_down, ...) bounds the lengths of the scheduled faults
// of its kind instead of the knob's own random faults.
type Assumption struct {
	Knob   string
	Op     Op
	Value  string // OpEq: the canonical value
	Lo, Hi string // ranges: canonical bounds, Lo <= Hi
	Text   string // as written
}

// lengthKnobs are the knobs whose bound is the length of a scheduled fault, by the fault
// kinds they bound: a pause_len<=500ms keeps every pause_client step at most 500ms.
var lengthKnobs = map[string][]string{
	"pause_len":       {"pause_client"},
	"client_down":     {"crash_client"},
	"node_down":       {"crash_node", "kill_node", "shutdown_node"},
	"node_pause_len":  {"pause_node"},
	"partition_len":   {"isolate", "block", "partition"},
	"clog_len":        {"clog", "slow_link"},
	"node_clock_jump": {"clock_step", "clock_slew"},
}

// numericUnits are the knob units a range may bound.
var numericUnits = []string{"duration", "count", "ppm", "number", "factor", "probability", "1/s"}

// ParseAssumption reads NAME=VALUE, NAME<=VALUE, NAME>=VALUE or NAME=LO..HI. An unknown
// knob, a value the knob refuses or a range on a knob that has none is an *InputError.
func ParseAssumption(text string) (Assumption, error) {
	bad := func(msg string, err error) (Assumption, error) {
		return Assumption{}, &InputError{Flag: "--assume", Value: text, Msg: msg, Err: err}
	}
	a := Assumption{Text: text}
	var value string
	switch {
	case strings.Contains(text, "<="):
		a.Knob, value, _ = strings.Cut(text, "<=")
		a.Op = OpLE
	case strings.Contains(text, ">="):
		a.Knob, value, _ = strings.Cut(text, ">=")
		a.Op = OpGE
	case strings.Contains(text, "="):
		a.Knob, value, _ = strings.Cut(text, "=")
		a.Op = OpEq
		if strings.Contains(value, "..") {
			a.Op = OpRange
		}
	default:
		return bad("want NAME=VALUE, NAME<=VALUE, NAME>=VALUE or NAME=LO..HI, e.g. pause_len<=500ms", nil)
	}
	a.Knob, value = strings.TrimSpace(a.Knob), strings.TrimSpace(value)
	p, err := knobs.LookupParam(a.Knob)
	if err != nil {
		return bad("not a knob", err)
	}
	if a.Knob == "client" {
		return bad("the client profile is --client NAME", nil)
	}
	if a.Op == OpEq {
		if a.Value, err = knobs.Canonical(a.Knob, value); err != nil {
			return bad("the knob refuses the value", err)
		}
		return a, nil
	}
	_, isLength := lengthKnobs[a.Knob]
	if !isLength && !slices.Contains(numericUnits, p.Unit) {
		return bad(fmt.Sprintf("%s is a %s: only NAME=VALUE fixes it; a range needs a number, a duration or a fault length (%s)",
			a.Knob, p.Unit, strings.Join(sortedKeys(lengthKnobs), ", ")), nil)
	}
	check := func(v string) (string, error) {
		if isLength {
			d, err := knobs.Duration(a.Knob, v, "a duration from 0s")
			if err == nil && d < 0 {
				err = fmt.Errorf("%s = %s: a fault length is at least 0s", a.Knob, v)
			}
			return d.String(), err
		}
		return knobs.Canonical(a.Knob, v)
	}
	switch a.Op {
	case OpRange:
		lo, hi, _ := strings.Cut(value, "..")
		if a.Lo, err = check(strings.TrimSpace(lo)); err != nil {
			return bad("the knob refuses the lower bound", err)
		}
		if a.Hi, err = check(strings.TrimSpace(hi)); err != nil {
			return bad("the knob refuses the upper bound", err)
		}
	case OpLE:
		if a.Hi, err = check(value); err != nil {
			return bad("the knob refuses the bound", err)
		}
		if a.Lo, err = lowest(a.Knob, p.Unit, isLength); err != nil {
			return bad("the knob has no lower end to draw from", err)
		}
	case OpGE:
		if a.Lo, err = check(value); err != nil {
			return bad("the knob refuses the bound", err)
		}
		// Up to twice the bound, or the default when it is larger: a range to draw from
		// that the bound alone does not give.
		a.Hi = a.Lo
		if up, err := scale(a.Knob, p.Unit, isLength, a.Lo, 2); err == nil {
			a.Hi = up
		}
		if def, err := knobs.Canonical(a.Knob, p.Default); err == nil && !isLength {
			d, err1 := number(p.Unit, false, def)
			hi, err2 := number(p.Unit, false, a.Hi)
			if err1 == nil && err2 == nil && d > hi {
				a.Hi = def
			}
		}
	}
	lo, err1 := number(p.Unit, isLength, a.Lo)
	hi, err2 := number(p.Unit, isLength, a.Hi)
	if err := errors.Join(err1, err2); err != nil {
		return bad("not a number", err)
	}
	if lo > hi {
		return bad(fmt.Sprintf("the lower bound %s is above the upper bound %s", a.Lo, a.Hi), nil)
	}
	return a, nil
}

// lowest is the smallest value the knob takes, the lower end of NAME<=VALUE.
func lowest(name, unit string, isLength bool) (string, error) {
	if isLength {
		return "1ms", nil
	}
	var err error
	for _, v := range []string{"0", "0s", "1ms", "1"} {
		var c string
		if c, err = knobs.Canonical(name, v); err == nil {
			return c, nil
		}
	}
	return "", err
}

// scale returns v times f, canonical, for NAME>=VALUE's upper end.
func scale(name, unit string, isLength bool, v string, f float64) (string, error) {
	x, err := number(unit, isLength, v)
	if err != nil {
		return "", err
	}
	return format(name, unit, isLength, x*f)
}

// number reads a canonical value as a float: durations in nanoseconds.
func number(unit string, isLength bool, v string) (float64, error) {
	if isLength || unit == "duration" {
		d, err := time.ParseDuration(v)
		return float64(d), err
	}
	return strconv.ParseFloat(strings.TrimSuffix(v, "ppm"), 64)
}

// format writes x as the knob's canonical value, rounded to what a person would write:
// whole milliseconds, whole counts, two significant digits otherwise.
func format(name, unit string, isLength bool, x float64) (string, error) {
	switch {
	case isLength || unit == "duration":
		d := roundDuration(time.Duration(x))
		if isLength {
			return d.String(), nil
		}
		return knobs.Canonical(name, d.String())
	case unit == "count":
		return knobs.Canonical(name, strconv.Itoa(int(math.Round(x))))
	}
	return knobs.Canonical(name, strconv.FormatFloat(roundSig(x, 2), 'g', -1, 64))
}

// roundDuration rounds d to two significant digits, at least whole milliseconds: 1234ms
// is 1.2s, 57.3ms is 57ms; a round number reads as a story, an exact one as noise.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return time.Millisecond
	}
	unit := time.Millisecond
	for d/unit >= 100 {
		unit *= 10
	}
	return (d + unit/2) / unit * unit
}

// roundSig rounds x to d significant digits.
func roundSig(x float64, d int) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	p := math.Pow(10, float64(d)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// ParseFaults reads the fault kinds a search may draw: scenario actions, comma-separated;
// "all" (or nothing) is every one, "none" none (the assumptions alone break the lock). An
// unknown kind is an *InputError naming it.
func ParseFaults(list []string) ([]string, error) {
	all := scenarios.ActionNames()
	if len(list) == 1 && list[0] == "none" {
		return []string{}, nil
	}
	var out []string
	for _, item := range list {
		for _, k := range strings.Split(item, ",") {
			k = strings.TrimSpace(k)
			switch {
			case k == "":
				continue
			case k == "all":
				out = append(out, all...)
				continue
			case !slices.Contains(all, k):
				msg := "not a fault kind"
				if s := suggest.Closest(k, all, 1); len(s) > 0 {
					msg += fmt.Sprintf(" (did you mean %s?)", s[0])
				}
				return nil, &InputError{Flag: "--faults", Value: k, Msg: msg + "; allowed: all, none, " + strings.Join(all, ", ")}
			}
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		out = all
	}
	// The scenario language's order, each once: the order the generator asks about them.
	return slices.DeleteFunc(slices.Clone(all), func(k string) bool { return !slices.Contains(out, k) }), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
