// Package dist holds the duration distributions every layer draws from: network latencies
// and fault lengths, a client's hold, think and pause times, node clock jumps. It sits
// beside the kernel because a distribution is part of the project's one source of chance:
// each draw comes from a seeded stream the caller passes in, and the same distribution
// draws the same values wherever it is used.
package dist

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// MaxDuration bounds every distribution's parameters and every drawn value (latencies,
// fault lengths, hold times). A day is far beyond any realistic network delay, and the bound keeps true
// time far from overflow however many draws a run makes.
const MaxDuration = 24 * time.Hour

// MaxSigma bounds a lognormal's sigma: at σ = 10 the p99 is already 10^10 times the
// median, so anything larger is a typo rather than a network.
const MaxSigma = 10.0

// z99 is the 99th percentile of the standard normal distribution.
const z99 = 2.3263478740408408

// Kind names the shape of a Dist.
type Kind uint8

// The distribution shapes.
const (
	KindConstant    Kind = iota // always Base
	KindUniform                 // uniform on [Base, Max], to the nanosecond
	KindExponential             // Base + an exponential draw of mean Mean
	KindLognormal               // Base + Median·e^(σZ), Z standard normal
)

var distNames = [...]string{"constant", "uniform", "exponential", "lognormal"}

func (k Kind) String() string {
	if int(k) < len(distNames) {
		return distNames[k]
	}
	return fmt.Sprintf("dist.Kind(%d)", k)
}

// Dist is one latency (or fault duration) distribution, a plain value so that a
// configuration can be copied, compared and printed. Fields its Kind does not use are
// ignored. Build it with Constant, Uniform, Exponential, Lognormal or LognormalP99.
type Dist struct {
	Kind Kind
	// Base is the constant's value, the uniform's minimum, and for the exponential and the
	// lognormal a floor added to every draw (the propagation delay under the queueing).
	Base   time.Duration
	Max    time.Duration // KindUniform: the maximum, at least Base
	Mean   time.Duration // KindExponential: the mean of the part above Base
	Median time.Duration // KindLognormal: the median of the part above Base
	// Sigma is the lognormal's σ, the standard deviation of ln(draw−Base). The part above
	// Base has median Median, mean Median·e^(σ²/2) and 99th percentile Median·e^(2.326σ):
	// σ = 0.5 puts the p99 at 3.2× the median, σ = 1 at 10×.
	Sigma float64
	// Cap, for the exponential and the lognormal, is the largest value drawn: a draw
	// above it is Cap (0: no cap but MaxDuration). A fit to a p99.9 has a tail without
	// end, and one pathological draw (a 16 s GC pause from a fit whose p99.9 is 1 s) can
	// dominate a whole study; an operator who knows the worst case says so here.
	Cap time.Duration
}

// Constant returns a distribution that is always d: exact timings for golden traces.
func Constant(d time.Duration) Dist { return Dist{Kind: KindConstant, Base: d} }

// Uniform returns the uniform distribution on [lo, hi]: bounded jitter, the simplest way
// to get reordering.
func Uniform(lo, hi time.Duration) Dist { return Dist{Kind: KindUniform, Base: lo, Max: hi} }

// Exponential returns base plus an exponential draw of the given mean: a fixed
// propagation delay plus memoryless queueing.
func Exponential(base, mean time.Duration) Dist {
	return Dist{Kind: KindExponential, Base: base, Mean: mean}
}

// Lognormal returns the lognormal distribution with the given median and sigma (see
// Dist.Sigma): the usual fit to measured datacenter round trips, skewed right.
func Lognormal(median time.Duration, sigma float64) Dist {
	return Dist{Kind: KindLognormal, Median: median, Sigma: sigma}
}

// LognormalP99 returns the lognormal distribution with the given median and 99th
// percentile, the two numbers an operator actually knows about a network. A p99 below
// the median gives a negative sigma, which New and SetLink reject.
func LognormalP99(median, p99 time.Duration) Dist {
	sigma := 0.0
	if median > 0 && p99 != median {
		sigma = math.Log(float64(p99)/float64(median)) / z99
	}
	return Lognormal(median, sigma)
}

func (d Dist) String() string {
	switch d.Kind {
	case KindConstant:
		return fmt.Sprintf("constant(%v)", d.Base)
	case KindUniform:
		return fmt.Sprintf("uniform(%v, %v)", d.Base, d.Max)
	case KindExponential:
		return fmt.Sprintf("%v+exponential(%v)%s", d.Base, d.Mean, d.capText())
	case KindLognormal:
		return fmt.Sprintf("%v+lognormal(median %v, sigma %g)%s", d.Base, d.Median, d.Sigma, d.capText())
	}
	return d.Kind.String()
}

// Validate reports the first bad field of d as a *sim.ParamError named param.field, so
// every user of a distribution rejects bad input in the same words.
func (d Dist) Validate(param string) error {
	if err := checkDur(param+".base", d.Base); err != nil {
		return err
	}
	switch d.Kind {
	case KindConstant:
		return nil
	case KindUniform:
		if d.Max < d.Base || d.Max > MaxDuration {
			return sim.BadParam(param+".max", d.Max, fmt.Sprintf("[%v, %v] (at least base)", d.Base, MaxDuration))
		}
		return nil
	case KindExponential:
		if err := d.checkCap(param); err != nil {
			return err
		}
		return checkDur(param+".mean", d.Mean)
	case KindLognormal:
		if !(d.Sigma >= 0 && d.Sigma <= MaxSigma) {
			return sim.BadParam(param+".sigma", d.Sigma, fmt.Sprintf("[0, %g]", MaxSigma))
		}
		if err := d.checkCap(param); err != nil {
			return err
		}
		return checkDur(param+".median", d.Median)
	}
	return sim.BadParam(param+".kind", d.Kind, "constant, uniform, exponential or lognormal")
}

// checkCap refuses a cap below the floor every draw starts from (0 is no cap).
func (d Dist) checkCap(param string) error {
	if d.Cap != 0 && (d.Cap < d.Base || d.Cap > MaxDuration) {
		return sim.BadParam(param+".cap", d.Cap, fmt.Sprintf("0 (none) or [%v, %v] (at least base)", d.Base, MaxDuration))
	}
	return nil
}

func checkDur(param string, d time.Duration) error {
	if d < 0 || d > MaxDuration {
		return sim.BadParam(param, d, fmt.Sprintf("[0s, %v]", MaxDuration))
	}
	return nil
}

// Sampler is a validated Dist in the form the hot path wants: no branches on fields the
// kind does not use, floats precomputed.
type Sampler struct {
	kind  Kind
	base  time.Duration
	top   time.Duration // the largest draw: Cap, or MaxDuration
	span  int64         // uniform: Max-Base+1
	scale float64       // exponential: mean; lognormal: median (nanoseconds)
	sigma float64
}

// NewSampler validates d (naming param in errors) and returns its sampler.
func NewSampler(d Dist, param string) (Sampler, error) {
	if err := d.Validate(param); err != nil {
		return Sampler{}, err
	}
	return d.Sampler(), nil
}

// Sampler returns d's sampler without validating d: for callers that validated it already.
func (d Dist) Sampler() Sampler {
	s := Sampler{kind: d.Kind, base: d.Base, sigma: d.Sigma, top: MaxDuration}
	if d.Cap > 0 && (d.Kind == KindExponential || d.Kind == KindLognormal) {
		s.top = d.Cap
	}
	switch d.Kind {
	case KindUniform:
		s.span = int64(d.Max-d.Base) + 1
	case KindExponential:
		s.scale = float64(d.Mean)
	case KindLognormal:
		s.scale = float64(d.Median)
	}
	return s
}

// Draw returns one value in [0, MaxDuration], drawn from r.
func (s *Sampler) Draw(r *rand.Rand) time.Duration {
	var extra time.Duration
	switch s.kind {
	case KindConstant:
		return s.base
	case KindUniform:
		return s.base + time.Duration(r.Int64N(s.span))
	case KindExponential:
		extra = capped(s.scale * r.ExpFloat64())
	default:
		extra = capped(s.scale * math.Exp(s.sigma*r.NormFloat64()))
	}
	return min(s.base+extra, s.top)
}

// capped converts nanoseconds to a Duration in [0, MaxDuration]; huge tails and NaN
// saturate instead of wrapping.
func capped(ns float64) time.Duration {
	if !(ns < float64(MaxDuration)) {
		return MaxDuration
	}
	return time.Duration(max(ns, 0))
}

// UniformSpan returns the base and the number of values of a uniform sampler, and ok, so
// that a caller on a hot path (the network's latency draw, per message) can draw from its
// generator directly, exactly as Draw would.
func (s *Sampler) UniformSpan() (base time.Duration, span int64, ok bool) {
	return s.base, s.span, s.kind == KindUniform
}

// capText is the cap as String appends it.
func (d Dist) capText() string {
	if d.Cap == 0 {
		return ""
	}
	return fmt.Sprintf(" at most %v", d.Cap)
}

// Expected returns d's mean (the field Mean is the exponential's parameter): Base +
// Median·e^(σ²/2) for a lognormal, Base + Mean for an exponential. A cap is left out, so
// for a capped distribution it is an upper bound: the callers (tune's load arithmetic,
// the knobs' cost limits) want a conservative figure, not an exact one.
func (d Dist) Expected() time.Duration {
	switch d.Kind {
	case KindUniform:
		return d.Base + (d.Max-d.Base)/2
	case KindExponential:
		return d.Base + d.Mean
	case KindLognormal:
		return d.Base + capped(float64(d.Median)*math.Exp(d.Sigma*d.Sigma/2))
	}
	return d.Base
}
