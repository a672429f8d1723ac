package clock

import (
	"math"
	"math/bits"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// unit is the number of rate units in one nanosecond: rates are in parts per billion
// of true time, and sub-nanosecond remainders are kept in the same unit, so the
// monotonic reading is exact rather than accumulated from rounded floats.
const unit = 1_000_000_000

// segment is one linear piece of the monotonic reading. On [start, next start) the
// reading in units is (base*unit + frac) + rate*(t-start), and Mono is its floor in
// nanoseconds. Pieces are cut where a slew starts or ends; pieces chain exactly, each
// start's (base, frac) being the previous piece evaluated there.
type segment struct {
	start sim.Time
	base  int64  // Mono(start), saturated at math.MaxInt64
	frac  uint64 // sub-nanosecond remainder at start, in [0, unit)
	rate  uint64 // local units per true nanosecond; always ≥ 1, below 2*unit
}

// mono returns the reading at t ≥ s.start.
func (s segment) mono(t sim.Time) int64 {
	dt := uint64(t - s.start)
	if s.rate == unit { // an ideal rate, the common case: frac < unit never carries
		return satAddU(s.base, dt)
	}
	q, _ := s.advance(dt)
	return satAddU(s.base, q)
}

// advance returns whole nanoseconds and the new remainder dt true nanoseconds after
// start. rate < 2*unit and dt < 2^63 keep the quotient below 2^64; the guard only
// keeps Div64 from panicking should that invariant ever break.
func (s segment) advance(dt uint64) (q, frac uint64) {
	hi, lo := bits.Mul64(s.rate, dt)
	lo, carry := bits.Add64(lo, s.frac, 0)
	hi += carry
	if hi >= unit {
		return math.MaxUint64, 0
	}
	return bits.Div64(hi, lo, unit)
}

// reaches returns the smallest t ≥ s.start at which the reading is at least target,
// for target > s.base, ignoring where the piece ends; sim.Never if beyond time.
func (s segment) reaches(target int64) sim.Time {
	// Smallest dt with frac + rate*dt ≥ (target-base)*unit, i.e. a ceiling division.
	hi, lo := bits.Mul64(uint64(target-s.base), unit)
	lo, borrow := bits.Sub64(lo, s.frac, 0)
	hi -= borrow
	lo, carry := bits.Add64(lo, s.rate-1, 0)
	hi += carry
	if hi >= s.rate {
		return sim.Never
	}
	dt, _ := bits.Div64(hi, lo, s.rate)
	if dt > uint64(sim.Never-s.start) {
		return sim.Never
	}
	return s.start + sim.Time(dt)
}

// buildSegments cuts the monotonic reading into pieces: the drifting base rate r0,
// and around each slew a piece at r0 ± the slew rate, then, when the correction is not
// a whole number of nanoseconds at that rate, a one-nanosecond piece carrying the
// remainder, so the slew gains exactly By and ends at a whole true nanosecond.
func buildSegments(r0 uint64, slews []Slew) []segment {
	segs := []segment{{start: 0, rate: r0}}
	for _, s := range slews {
		if s.By == 0 {
			continue
		}
		rate := uint64(ppb(s.RatePPM))
		full, rem, ok := slewLength(magnitude(s.By), rate)
		segs = cut(segs, s.At, slewed(r0, rate, s.By > 0))
		if !ok || full >= uint64(sim.Never-s.At) {
			break // the slew outlasts representable time; nothing follows it
		}
		end := s.At + sim.Time(full)
		if rem > 0 {
			segs = cut(segs, end, slewed(r0, rem, s.By > 0))
			end++
		}
		segs = cut(segs, end, r0)
	}
	return segs
}

// cut starts a new piece at start with the given rate.
func cut(segs []segment, start sim.Time, rate uint64) []segment {
	last := &segs[len(segs)-1]
	if start == last.start {
		last.rate = rate // the previous piece is empty: replace its rate
		return segs
	}
	q, frac := last.advance(uint64(start - last.start))
	return append(segs, segment{start: start, base: satAddU(last.base, q), frac: frac, rate: rate})
}

// slewed returns the base rate sped up or slowed down by extra. Validation keeps the
// result ≥ 1: the base rate exceeds unit/2 and a slew rate never does.
func slewed(r0, extra uint64, faster bool) uint64 {
	if faster {
		return r0 + extra
	}
	return r0 - extra
}

// slewLength returns how many whole true nanoseconds a correction of by nanoseconds takes
// at rate ppb, and the units left over for one last partial nanosecond; ok is false when
// the slew would take 2^64 ns or more.
func slewLength(by uint64, rate uint64) (full, rem uint64, ok bool) {
	hi, lo := bits.Mul64(by, unit)
	if rate == 0 || hi >= rate {
		return 0, 0, false
	}
	full, rem = bits.Div64(hi, lo, rate)
	return full, rem, true
}

// magnitude returns |d| without overflowing on math.MinInt64.
func magnitude(d time.Duration) uint64 {
	if d < 0 {
		return uint64(-d)
	}
	return uint64(d)
}

// satAddU returns base+q for base ≥ 0, saturating at math.MaxInt64.
func satAddU(base int64, q uint64) int64 {
	if q > uint64(math.MaxInt64-base) {
		return math.MaxInt64
	}
	return base + int64(q)
}

// satAdd returns a+b, saturating at the int64 limits instead of wrapping.
func satAdd(a, b time.Duration) time.Duration {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}
