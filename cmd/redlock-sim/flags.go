package main

import (
	"errors"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
)

// finiteFloat is a float64 flag's value that takes only finite decimal numbers, as a knob
// does: pflag's own Float64 accepts NaN and the infinities, and NaN slips through every
// range check written as "x < lo || x > hi" (--until-ci NaN once turned adaptive
// replication off without a word). Its error says what is wrong and what to write;
// pflag puts the flag's name and the value before it.
type finiteFloat struct{ p *float64 }

// Set parses s with the knobs' number syntax (decimal digits, an optional sign, fraction
// and exponent): NaN, infinities, hexadecimal and a number beyond float64 are refused.
func (f finiteFloat) Set(s string) error {
	x, err := knobs.Number("", strings.TrimSpace(s), "")
	if err != nil {
		var ve *knobs.ValueError
		if errors.As(err, &ve) {
			return errors.New(ve.Problem)
		}
		return err
	}
	*f.p = x
	return nil
}

// String prints the value as pflag's Float64 does, so defaults read the same in --help.
func (f finiteFloat) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

// Type is float64, so that usage lines show the value as a number (X) as before.
func (f finiteFloat) Type() string { return "float64" }

// finiteFloatVar defines a float64 flag on fs, like fs.Float64Var, that refuses NaN and the
// infinities. Every float flag of the CLI is defined through it or finiteFloat64.
func finiteFloatVar(fs *flag.FlagSet, p *float64, name string, value float64, usage string) {
	*p = value
	fs.Var(finiteFloat{p}, name, usage)
}

// finiteFloat64 defines a float64 flag on fs, like fs.Float64, that refuses NaN and the
// infinities, and returns where its value is kept.
func finiteFloat64(fs *flag.FlagSet, name string, value float64, usage string) *float64 {
	p := new(float64)
	finiteFloatVar(fs, p, name, value, usage)
	return p
}
