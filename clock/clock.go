package clock

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// Clock is one process's local clock, a pure function of true time. Everything is
// precomputed by New, so readings cost O(1) for a clock without steps or slews and
// O(log k) otherwise, allocate nothing, and never change the clock: a Clock is safe to
// share and to read in any order.
type Clock struct {
	cfg       Config
	segs      []segment       // pieces of the monotonic reading, by start
	stepAt    []sim.Time      // distinct step times, ascending
	shift     []time.Duration // shift[j]: wall minus mono (offset + steps) after j step times
	noise     int64           // bound on |noise| in ns; 0 means none
	noiseSeed uint64
	// ideal says the clock has no drift, slews, steps or noise: Mono is true time and
	// Wall is true time plus the offset. Most clocks of most worlds are so, and their
	// readings are the most frequent calls of a run (every Redis command reads its node's
	// wall clock, every client event its monotonic one), so they skip the general path.
	ideal  bool
	offset time.Duration // shift[0], for an ideal clock
}

// New builds the clock cfg describes, or returns a *sim.ParamError naming the first bad
// field. Whenever rng is non-nil, New draws exactly one value from it (the noise seed),
// so turning noise on or off never shifts the other draws of a stream shared with the
// process; rng may be nil only when cfg.Noise is 0.
func New(cfg Config, rng *rand.Rand) (*Clock, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Noise > 0 && rng == nil {
		return nil, errors.New("clock: noise needs a random stream, but rng is nil")
	}
	norm := cfg.normalized()
	c := &Clock{cfg: norm, noise: int64(norm.Noise)}
	if rng != nil {
		c.noiseSeed = rng.Uint64()
	}
	c.segs = buildSegments(uint64(unit+driftPPB(norm.DriftPPM)), norm.Slews)
	c.stepAt, c.shift = buildSteps(norm.Offset, norm.Steps)
	c.ideal = len(c.segs) == 1 && c.segs[0] == segment{rate: unit} && len(c.stepAt) == 0 && c.noise == 0
	c.offset = c.shift[0]
	return c, nil
}

// buildSteps merges steps at the same true time and precomputes the wall's shift from
// the monotonic reading after each, so Wall needs one binary search and one addition.
func buildSteps(offset time.Duration, steps []Step) ([]sim.Time, []time.Duration) {
	at := make([]sim.Time, 0, len(steps))
	shift := make([]time.Duration, 1, len(steps)+1)
	shift[0] = offset
	for _, s := range steps {
		last := len(shift) - 1
		if len(at) > 0 && at[len(at)-1] == s.At {
			shift[last] = satAdd(shift[last], s.By)
			continue
		}
		at = append(at, s.At)
		shift = append(shift, satAdd(shift[last], s.By))
	}
	return at, shift
}

// Config returns the clock's configuration as New normalized it: steps and slews sorted
// by At and default slew rates filled in, so a run record shows what was simulated.
func (c *Clock) Config() Config {
	out := c.cfg
	out.Steps, out.Slews = c.Steps(), c.Slews()
	return out
}

// Steps returns a copy of the clock's steps sorted by At, so the trace and the
// timeline can show the jumps.
func (c *Clock) Steps() []Step { return slices.Clone(c.cfg.Steps) }

// Slews returns a copy of the clock's slews sorted by At, with default rates filled in;
// Slew.End tells where each one finishes.
func (c *Clock) Slews() []Slew { return slices.Clone(c.cfg.Slews) }

// Mono returns the monotonic reading at true time t, as CLOCK_MONOTONIC would: it
// starts at 0 at true time 0, follows drift and slews, ignores offset, steps and noise,
// and never decreases. Times before 0 read as 0, since the run starts there.
func (c *Clock) Mono(t sim.Time) time.Duration {
	if c.ideal {
		return time.Duration(max(t, 0))
	}
	return c.mono(t)
}

// mono is Mono's general path. It is never inlined, so that Mono, read at nearly every
// step of every client, always inlines as its ideal-clock test and a call, whatever a
// profile says about clocks that drift.
//
//go:noinline
func (c *Clock) mono(t sim.Time) time.Duration {
	t = max(t, 0)
	return time.Duration(c.segs[c.segAt(t)].mono(t))
}

// Wall returns the wall reading at true time t, as gettimeofday would: the monotonic
// reading plus offset, every step at or before t, and noise. Redis expires keys on it.
// Times before 0 read as at 0.
func (c *Clock) Wall(t sim.Time) time.Duration {
	if c.ideal {
		return satAdd(time.Duration(max(t, 0)), c.offset)
	}
	return c.wall(t)
}

// wall is Wall's general path, never inlined for the same reason as mono.
//
//go:noinline
func (c *Clock) wall(t sim.Time) time.Duration {
	t = max(t, 0)
	w := satAdd(c.mono(t), c.shift[c.stepsUpTo(t)])
	if c.noise == 0 {
		return w
	}
	return satAdd(w, c.noiseAt(t))
}

// TimerFires returns the true time at which a timer armed at true time start for d on
// the monotonic clock fires: the smallest T ≥ start with Mono(T) − Mono(start) ≥ d,
// exact to the nanosecond. A slow clock fires late in true time and a fast one early,
// which is the point. It returns start for d ≤ 0, and sim.Never if T is beyond time.
func (c *Clock) TimerFires(start sim.Time, d time.Duration) sim.Time {
	if d <= 0 {
		return start
	}
	if c.ideal { // Mono(T) = T past 0: T = max(start, 0) + d
		if from := max(start, 0); from+sim.Time(d) > from {
			return from + sim.Time(d)
		}
		return sim.Never
	}
	from := c.Mono(start)
	target := from + d
	if target < from {
		return sim.Never
	}
	return max(start, c.monoReaches(int64(target)))
}

// WallReaches returns the smallest true time T ≥ from at which the wall reading,
// without noise, is at least w: when a Redis node's key with wall deadline w expires.
// A forward step can make it reach early and a backward step before it reaches delays
// it. It returns sim.Never if that never happens. Noise is ignored so the answer is a
// single time; since noise is at most Noise, Wall(WallReaches(from, w+Noise)) ≥ w.
// It costs O(log k) per step after from.
func (c *Clock) WallReaches(from sim.Time, w time.Duration) sim.Time {
	if from < 0 {
		if satAdd(c.Mono(0), c.shift[c.stepsUpTo(0)]) >= w {
			return from
		}
		from = 0
	}
	for j := c.stepsUpTo(from); ; j++ {
		end := sim.Never
		if j < len(c.stepAt) {
			end = c.stepAt[j]
		}
		if t := c.wallReachesBetween(from, w, c.shift[j]); t < end {
			return t
		}
		if j == len(c.stepAt) {
			return sim.Never
		}
		from = end
	}
}

// wallReachesBetween returns the smallest T ≥ from at which Mono(T)+shift ≥ w, assuming
// no step changes shift; sim.Never if none.
func (c *Clock) wallReachesBetween(from sim.Time, w, shift time.Duration) sim.Time {
	target := w - shift
	switch {
	case shift < 0 && target < w: // w - shift overflowed above MaxInt64: out of reach
		return sim.Never
	case shift > 0 && target > w: // overflowed below MinInt64: already reached
		return from
	}
	return max(from, c.monoReaches(int64(target)))
}

// monoReaches returns the smallest true time T ≥ 0 with Mono(T) ≥ target.
func (c *Clock) monoReaches(target int64) sim.Time {
	if target <= 0 {
		return 0
	}
	// The last piece that starts below target holds the answer: every later piece starts
	// at or above it, and every earlier one ends below it.
	lo, hi := 0, len(c.segs)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if c.segs[mid].base < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return c.segs[lo].reaches(target)
}

// segAt returns the index of the piece holding t ≥ 0.
func (c *Clock) segAt(t sim.Time) int {
	lo, hi := 0, len(c.segs)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if c.segs[mid].start <= t {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// stepsUpTo returns how many distinct step times are at or before t.
func (c *Clock) stepsUpTo(t sim.Time) int {
	lo, hi := 0, len(c.stepAt)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c.stepAt[mid] <= t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// noiseAt returns the wall noise at t, uniform on [-noise, noise]. It hashes (seed, t)
// instead of drawing from a stream so that the clock stays a pure function of true
// time: the same t always gets the same noise, whoever reads first.
func (c *Clock) noiseAt(t sim.Time) time.Duration {
	h := mix(c.noiseSeed + uint64(t)*0x9e3779b97f4a7c15)
	hi, _ := bits.Mul64(h, uint64(2*c.noise+1))
	return time.Duration(int64(hi) - c.noise)
}

// mix is the splitmix64 finalizer; applied to seed + t*golden it is the t-th output of
// a SplitMix64 stream, so neighbouring times get unrelated noise.
func mix(x uint64) uint64 {
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
