package sweep

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// rangeSpec is an axis given as {from, to, steps, scale}.
type rangeSpec struct {
	from, to string
	steps    int
	log      bool
}

// Significant digits kept in range values. Log values come from math.Pow, which may
// differ in the last bit between architectures; rounding to 3 digits hides that (and reads
// better), and the expanded values are recorded in the manifest, so a machine that ever
// rounded differently would be refused by resume and merge rather than silently mixed in.
const (
	linearDigits = 6
	logDigits    = 3
)

// values expands the range to value texts for the world's Knob to canonicalise.
func (r rangeSpec) values() ([]string, error) {
	from, errF := strconv.ParseFloat(r.from, 64)
	to, errT := strconv.ParseFloat(r.to, 64)
	if errF == nil && errT == nil {
		return r.numbers(from, to)
	}
	df, errF := time.ParseDuration(r.from)
	dt, errT := time.ParseDuration(r.to)
	if errF != nil || errT != nil {
		return nil, fmt.Errorf("from = %s, to = %s: want two numbers or two durations (like 200ms, 30s)", r.from, r.to)
	}
	vals, err := r.spaced(float64(df), float64(dt))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = time.Duration(math.Round(v)).String()
	}
	return out, nil
}

func (r rangeSpec) numbers(from, to float64) ([]string, error) {
	vals, err := r.spaced(from, to)
	if err != nil {
		return nil, err
	}
	_, errF := strconv.ParseInt(r.from, 10, 64)
	_, errT := strconv.ParseInt(r.to, 10, 64)
	ints := errF == nil && errT == nil
	out := make([]string, len(vals))
	for i, v := range vals {
		if ints {
			out[i] = strconv.FormatInt(int64(math.Round(v)), 10)
		} else {
			out[i] = formatFloat(v)
		}
	}
	return out, nil
}

// spaced returns steps values from from to to, both exact at the ends, rounded to the
// scale's significant digits.
func (r rangeSpec) spaced(from, to float64) ([]float64, error) {
	switch {
	case math.IsNaN(from) || math.IsInf(from, 0) || math.IsNaN(to) || math.IsInf(to, 0):
		return nil, errors.New("from and to must be finite")
	case from == to:
		return nil, fmt.Errorf("from = to = %s: a range needs two different ends", r.from)
	case r.log && (from <= 0 || to <= 0):
		return nil, fmt.Errorf("from = %s, to = %s: a log range needs two positive ends", r.from, r.to)
	}
	out := make([]float64, r.steps)
	last := r.steps - 1
	for i := range out {
		t := float64(i) / float64(last)
		var v float64
		if r.log {
			v = roundSig(from*math.Pow(to/from, t), logDigits)
		} else {
			// The conversion forbids fusing into a multiply-add, whose different rounding
			// would make some machines print other digits.
			v = roundSig(from+float64((to-from)*t), linearDigits)
		}
		out[i] = v
	}
	out[0], out[last] = from, to
	return out, nil
}

// roundSig rounds v to d significant decimal digits.
func roundSig(v float64, d int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', d, 64), 64)
	if err != nil {
		panic("sweep: a formatted float did not parse: " + err.Error())
	}
	return r
}
