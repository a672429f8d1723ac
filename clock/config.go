package clock

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// Limits on a clock's configuration. They keep every reading inside int64 arithmetic and
// every configuration small enough to precompute, and they are far beyond any clock a
// scenario should need.
const (
	// MaxDriftPPM bounds |DriftPPM| (exclusive): a clock at ±50% is already absurd, and the
	// bound keeps the clock's rate positive even while a maximal slew slows it down.
	MaxDriftPPM = 500000
	// MaxSlewPPM bounds a slew's RatePPM (inclusive), for the same reason.
	MaxSlewPPM = 500000
	// DefaultSlewPPM is the slew rate used when Slew.RatePPM is 0: ntpd's 500 ppm.
	DefaultSlewPPM = 500
	// MaxSpan bounds |Offset| and the size of each step and each slew: a century.
	MaxSpan = 100 * 365 * 24 * time.Hour
	// MaxNoise bounds Noise; real reading jitter is microseconds.
	MaxNoise = time.Hour
	// MaxSteps bounds len(Steps), so a runaway scenario generator fails loudly.
	MaxSteps = 1 << 16
	// MaxSlews bounds len(Slews) for the same reason.
	MaxSlews = 1 << 16
)

// Step is a jump of the wall reading at true time At, by By (negative jumps backward),
// as when an operator or ntpdate sets the clock. It never moves the monotonic reading.
type Step struct {
	At sim.Time
	By time.Duration
}

// Slew is an NTP-style gradual correction (adjtime): from true time At, the clock runs
// faster (By > 0) or slower (By < 0) by RatePPM until it has gained or lost exactly By.
// It moves both readings, as NTP slews CLOCK_MONOTONIC too. RatePPM 0 means
// DefaultSlewPPM. The rate is of true time and is rounded to whole parts per billion;
// when By is not a whole number of nanoseconds at that rate, the slew ends with one
// slower nanosecond, so it gains exactly By. Slews of one clock may not overlap in time.
type Slew struct {
	At      sim.Time
	By      time.Duration
	RatePPM float64
}

// End returns the true time at which s has absorbed its whole correction, so the trace
// and timeline can draw it; it is At for a zero slew and sim.Never for a slew that never
// ends in representable time. It is meaningful for slews that New accepts.
func (s Slew) End() sim.Time {
	rate := ppb(slewRate(s.RatePPM))
	if s.By == 0 || rate <= 0 {
		return s.At
	}
	full, rem, ok := slewLength(magnitude(s.By), uint64(rate))
	if !ok || full >= uint64(sim.Never-s.At) {
		return sim.Never
	}
	end := s.At + sim.Time(full)
	if rem > 0 {
		end++ // the one-nanosecond piece that carries the remainder
	}
	return end
}

// Config describes one local clock. The zero Config is an ideal clock.
type Config struct {
	Offset   time.Duration // initial skew of the wall reading
	DriftPPM float64       // rate error in ppm, rounded to whole ppb; positive runs fast
	Steps    []Step        // wall jumps; any order, New sorts a copy
	Slews    []Slew        // gradual corrections; any order, New sorts a copy
	Noise    time.Duration // bound on the wall reading's jitter; 0 means none
}

// validate reports the first bad field as a *sim.ParamError, so a user sees which
// knob to fix and what it allows.
func (cfg Config) validate() error {
	if !(math.Abs(cfg.DriftPPM) < MaxDriftPPM) {
		return sim.BadParam("drift_ppm", cfg.DriftPPM, fmt.Sprintf("(-%d, %d)", MaxDriftPPM, MaxDriftPPM))
	}
	if err := checkSpan("offset", cfg.Offset); err != nil {
		return err
	}
	if cfg.Noise < 0 || cfg.Noise > MaxNoise {
		return sim.BadParam("noise", cfg.Noise, fmt.Sprintf("[0s, %v]", MaxNoise))
	}
	if err := checkSteps(cfg.Steps); err != nil {
		return err
	}
	return checkSlews(cfg.Slews)
}

func checkSpan(param string, d time.Duration) error {
	if d < -MaxSpan || d > MaxSpan {
		return sim.BadParam(param, d, fmt.Sprintf("[-%v, %v]", MaxSpan, MaxSpan))
	}
	return nil
}

func checkSteps(steps []Step) error {
	if len(steps) > MaxSteps {
		return sim.BadParam("steps", len(steps), fmt.Sprintf("at most %d steps", MaxSteps))
	}
	for i, s := range steps {
		if s.At < 0 {
			return sim.BadParam(fmt.Sprintf("steps[%d].at", i), s.At, "[0s, never]")
		}
		if err := checkSpan(fmt.Sprintf("steps[%d].by", i), s.By); err != nil {
			return err
		}
	}
	return nil
}

func checkSlews(slews []Slew) error {
	if len(slews) > MaxSlews {
		return sim.BadParam("slews", len(slews), fmt.Sprintf("at most %d slews", MaxSlews))
	}
	for i, s := range slews {
		if err := checkSlew(i, s); err != nil {
			return err
		}
	}
	return checkOverlap(slews)
}

func checkSlew(i int, s Slew) error {
	if s.At < 0 {
		return sim.BadParam(fmt.Sprintf("slews[%d].at", i), s.At, "[0s, never]")
	}
	if err := checkSpan(fmt.Sprintf("slews[%d].by", i), s.By); err != nil {
		return err
	}
	// The rate must be a whole number of ppb, at least 1, so the slew ends.
	if r := s.RatePPM; !(r == 0 || r > 0 && r <= MaxSlewPPM && ppb(r) >= 1) {
		return sim.BadParam(fmt.Sprintf("slews[%d].rate_ppm", i), r,
			fmt.Sprintf("[0.001, %d], or 0 for the default %d", MaxSlewPPM, DefaultSlewPPM))
	}
	return nil
}

// checkOverlap rejects slews that overlap in time: summed rates could stop the clock or
// run it backward, and NTP never runs two adjtime corrections at once either.
func checkOverlap(slews []Slew) error {
	order := make([]int, len(slews))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(slews[a].At, slews[b].At) })
	prev := -1 // the last slew that takes time; zero slews are no-ops and overlap nothing
	for _, next := range order {
		if slews[next].By == 0 {
			continue
		}
		if end := slewEnd(slews, prev); slews[next].At < end {
			return sim.BadParam(fmt.Sprintf("slews[%d].at", next), slews[next].At,
				fmt.Sprintf("at or after %v, when slews[%d] ends (slews may not overlap)", end, prev))
		}
		prev = next
	}
	return nil
}

func slewEnd(slews []Slew, i int) sim.Time {
	if i < 0 {
		return 0
	}
	return slews[i].End()
}

// normalized returns a copy of cfg with steps and slews sorted by At and default slew
// rates filled in; the caller's slices are never touched.
func (cfg Config) normalized() Config {
	out := cfg
	out.Steps = slices.Clone(cfg.Steps)
	slices.SortStableFunc(out.Steps, func(a, b Step) int { return cmp.Compare(a.At, b.At) })
	out.Slews = slices.Clone(cfg.Slews)
	slices.SortStableFunc(out.Slews, func(a, b Slew) int { return cmp.Compare(a.At, b.At) })
	for i := range out.Slews {
		out.Slews[i].RatePPM = slewRate(out.Slews[i].RatePPM)
	}
	return out
}

func slewRate(ratePPM float64) float64 {
	if ratePPM == 0 {
		return DefaultSlewPPM
	}
	return ratePPM
}

// ppb converts a validated ppm figure to whole parts per billion, the unit of all the
// exact arithmetic; a drift is clamped strictly inside ±50% so rounding cannot reach it.
func ppb(ppm float64) int64 {
	if math.IsNaN(ppm) {
		return 0
	}
	v := math.Round(ppm * 1000)
	return int64(max(min(v, 1e9), -1e9))
}

func driftPPB(ppm float64) int64 {
	const limit = MaxDriftPPM*1000 - 1
	return max(min(ppb(ppm), limit), -limit)
}
