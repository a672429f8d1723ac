package knobs

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/redlock-sim/redlock-sim/internal/suggest"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// ValueError reports a knob value that cannot be used, in the user's words: the knob and
// the value as written, what is wrong with it ("not a number", "a duration needs a unit",
// "out of range"), what the knob allows, and a corrected value to try when one is obvious.
// "out of range" is said only of a value that parsed; a value that did not parse says why.
//
// It unwraps to a *sim.ParamError, so callers that only ask "is this a bad knob value?"
// (the CLI's exit status 2) need not know the finer kinds.
type ValueError struct {
	Knob    string // as in `redlock-sim params`
	Value   string // as the user wrote it
	Problem string // what is wrong, e.g. "not a number"
	Allowed string // what the knob accepts
	Hint    string // a value to try instead, or ""
}

func (e *ValueError) Error() string {
	msg := fmt.Sprintf("%s = %s: %s", e.Knob, quoteValue(e.Value), e.Problem)
	if e.Hint != "" {
		msg += "; did you mean " + e.Hint + "?"
	}
	if e.Allowed != "" {
		msg += " (allowed: " + e.Allowed + ")"
	}
	return msg
}

// Unwrap returns the same complaint as a *sim.ParamError.
func (e *ValueError) Unwrap() error {
	return &sim.ParamError{Param: e.Knob, Value: e.Value, Allowed: e.Allowed}
}

// quoteValue quotes a value only when it needs it (empty, spaces, or characters a reader
// could miss), so that `nodes = 100` reads naturally and `nodes = ""` is still visible.
func quoteValue(v string) string {
	if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsGraphic(r) || r == ' ' }) {
		return strconv.Quote(v)
	}
	return v
}

// outOfRange is the one "out of range" error: the value parsed, and is outside allowed.
func outOfRange(knob, value, allowed string) error {
	return &ValueError{Knob: knob, Value: value, Problem: "out of range", Allowed: allowed}
}

// problem is a parse failure in the user's words, before the knob's name is known.
type problem struct {
	what string // "not a number"
	hint string // a corrected value, or ""
}

func (p *problem) Error() string { return p.what }

// asValueError dresses a parser's complaint as a ValueError for knob; errors that are
// already about a knob pass through.
func asValueError(knob, value, allowed string, err error) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		return err
	}
	var p *problem
	if errors.As(err, &p) {
		return &ValueError{Knob: knob, Value: value, Problem: p.what, Allowed: allowed, Hint: p.hint}
	}
	return &ValueError{Knob: knob, Value: value, Problem: err.Error(), Allowed: allowed}
}

// decimal is the number syntax knobs accept: ASCII digits, an optional sign, fraction and
// exponent. strconv.ParseFloat also takes hex (0x1p4), inf, NaN and 1_000; a knob value
// written that way is more likely a slip than a wish.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// notNumber says why s is not a plain decimal number.
func notNumber(s, want string) *problem {
	switch {
	case s == "":
		return &problem{what: "empty value: want " + want}
	case nonFinite(s):
		return &problem{what: "not a finite number: want " + want}
	case strings.ContainsFunc(s, func(r rune) bool { return r > unicode.MaxASCII && unicode.IsDigit(r) }):
		return &problem{what: "not a number: write it with the digits 0-9, want " + want}
	case strings.HasPrefix(strings.TrimLeft(s, "+-"), "0x") || strings.HasPrefix(strings.TrimLeft(s, "+-"), "0X"):
		return &problem{what: "not a number: hexadecimal is not accepted, want " + want}
	}
	return &problem{what: "not a number: want " + want}
}

// nonFinite reports whether s spells NaN or an infinity as strconv.ParseFloat or YAML
// read them ("NaN", "-Inf", "+infinity", ".inf"), with or without a rate's unit ("inf%"):
// a value no knob can take, which deserves a plainer word than "not a number".
func nonFinite(s string) bool {
	num, _ := redlock.FactorUnit(s)
	switch strings.ToLower(strings.TrimPrefix(strings.TrimLeft(num, "+-"), ".")) {
	case "nan", "inf", "infinity":
		return true
	}
	return false
}

// parseNumber parses a plain decimal number.
func parseNumber(s string) (float64, error) {
	if !decimal.MatchString(s) {
		return 0, notNumber(s, "a decimal number such as 0.5 or 1e-3")
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil { // only ErrRange is left: 1e999
		return 0, &problem{what: "number too large: want a finite decimal number such as 0.5 or 1e-3"}
	}
	return f, nil
}

// parseFactor checks the spelling of a dimensionless rate: a decimal number, or one with
// the unit clock drift is quoted in ("400ppm", "1%"; redlock.FactorUnit), so that a typo
// gets the knob layer's message. The redlock layer converts it.
func parseFactor(s string) error {
	num, _ := redlock.FactorUnit(s)
	if !decimal.MatchString(num) {
		return notNumber(s, "a decimal number such as 0.01, or with a unit: 1% or 10000ppm")
	}
	if _, err := strconv.ParseFloat(num, 64); err != nil { // only ErrRange is left: 1e999
		return &problem{what: "number too large: want a finite decimal number such as 0.01, or with a unit: 1% or 10000ppm"}
	}
	return nil
}

// parseWhole parses a whole number written in decimal digits.
func parseWhole(s string) (int, error) {
	const want = "a whole number such as 5"
	if !decimal.MatchString(s) {
		return 0, notNumber(s, want)
	}
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) {
		return 0, &problem{what: "number too large"}
	}
	if err != nil {
		p := &problem{what: "not a whole number: want " + want}
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f == float64(int64(f)) {
			p.hint = strconv.FormatInt(int64(f), 10) // 1e3 → 1000
		}
		return 0, p
	}
	return n, nil
}

// durationUnits is what time.ParseDuration accepts, for messages.
const durationUnits = "ns, us, µs, ms, s, m or h"

// parseDur parses a Go duration, saying what is wrong in the user's words: a bare number
// is missing its unit (and 10 suggests 10s), an unknown unit is named.
func parseDur(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if decimal.MatchString(s) {
		return 0, &problem{what: "a duration needs a unit (" + durationUnits + ")", hint: s + "s"}
	}
	num := strings.TrimLeft(s, "+-")
	i := strings.IndexFunc(num, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	switch {
	case s == "":
		return 0, &problem{what: "empty value: want a duration such as 250ms or 1.5s"}
	case strings.ContainsFunc(s, func(r rune) bool { return r > unicode.MaxASCII && unicode.IsDigit(r) }):
		return 0, &problem{what: "not a duration: write the number with the digits 0-9, e.g. 250ms"}
	case i > 0 && strings.Contains(err.Error(), "unknown unit"):
		unit := strings.TrimSpace(num[i:])
		p := &problem{what: fmt.Sprintf("unknown unit %q: want one of %s", unit, durationUnits)}
		if u, ok := unitWords[strings.ToLower(unit)]; ok {
			p.hint = s[:len(s)-len(num)] + num[:i] + u
		}
		return 0, p
	}
	return 0, &problem{what: "not a duration: want a number and a unit such as 250ms or 1.5s"}
}

// unitWords maps the unit spellings people write to Go's, for the hint.
var unitWords = map[string]string{
	"nsec": "ns", "nanos": "ns", "nanosecond": "ns", "nanoseconds": "ns",
	"usec": "us", "micros": "us", "microsecond": "us", "microseconds": "us",
	"msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms", "milliseconds": "ms",
	"sec": "s", "secs": "s", "second": "s", "seconds": "s",
	"ns": "ns", "us": "us", "µs": "µs", "ms": "ms", "s": "s", "m": "m", "h": "h", // 10MS, 10S
	"min": "m", "mins": "m", "minute": "m", "minutes": "m",
	"hr": "h", "hrs": "h", "hour": "h", "hours": "h",
}

// parseBoolValue parses true or false (and the spellings strconv.ParseBool accepts).
func parseBoolValue(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, &problem{what: "not true or false"}
	}
	return b, nil
}

// unknownChoice is the problem for an enum value that is none of names.
func unknownChoice(s string, names []string) *problem {
	p := &problem{what: "not a known value"}
	if s == "" {
		p.what = "empty value"
	}
	if c := suggest.Closest(s, names, 1); len(c) == 1 {
		p.hint = c[0]
	}
	return p
}

// Duration parses s as a Go duration for field (a scenario file's field or parameter),
// with the errors a knob value gets: a missing unit, an unknown one, not a duration.
func Duration(field, s, allowed string) (time.Duration, error) {
	d, err := parseDur(s)
	if err != nil {
		return 0, asValueError(field, s, allowed, err)
	}
	return d, nil
}

// Number parses s as a plain decimal number for field (a scenario file's field), with the
// errors a knob value gets: NaN, the infinities, hexadecimal and a number too large for a
// float64 are refused, so a finite number is all it returns.
func Number(field, s, allowed string) (float64, error) {
	f, err := parseNumber(s)
	if err != nil {
		return 0, asValueError(field, s, allowed, err)
	}
	return f, nil
}

// Whole parses s as a whole number for field, with the errors a knob value gets.
func Whole(field, s, allowed string) (int, error) {
	n, err := parseWhole(s)
	if err != nil {
		return 0, asValueError(field, s, allowed, err)
	}
	return n, nil
}
