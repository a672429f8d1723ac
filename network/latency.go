package network

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
)

// MaxDuration bounds every latency parameter, every drawn latency and every fault
// duration. A day is far beyond any realistic network delay, and the bound keeps true
// time far from overflow however many draws a run makes.
const MaxDuration = 24 * time.Hour

// MaxSigma bounds a lognormal's sigma: at σ = 10 the p99 is already 10^10 times the
// median, so anything larger is a typo rather than a network.
const MaxSigma = 10.0

// z99 is the 99th percentile of the standard normal distribution.
const z99 = 2.3263478740408408

// DistKind names the shape of a Dist.
type DistKind uint8

// The distribution shapes.
const (
	DistConstant    DistKind = iota // always Base
	DistUniform                     // uniform on [Base, Max], to the nanosecond
	DistExponential                 // Base + an exponential draw of mean Mean
	DistLognormal                   // Base + Median·e^(σZ), Z standard normal
)

var distNames = [...]string{"constant", "uniform", "exponential", "lognormal"}

func (k DistKind) String() string {
	if int(k) < len(distNames) {
		return distNames[k]
	}
	return fmt.Sprintf("DistKind(%d)", k)
}

// Dist is one latency (or fault duration) distribution, a plain value so that a
// configuration can be copied, compared and printed. Fields its Kind does not use are
// ignored. Build it with Constant, Uniform, Exponential, Lognormal or LognormalP99.
type Dist struct {
	Kind DistKind
	// Base is the constant's value, the uniform's minimum, and for the exponential and the
	// lognormal a floor added to every draw (the propagation delay under the queueing).
	Base   time.Duration
	Max    time.Duration // DistUniform: the maximum, at least Base
	Mean   time.Duration // DistExponential: the mean of the part above Base
	Median time.Duration // DistLognormal: the median of the part above Base
	// Sigma is the lognormal's σ, the standard deviation of ln(draw−Base). The part above
	// Base has median Median, mean Median·e^(σ²/2) and 99th percentile Median·e^(2.326σ):
	// σ = 0.5 puts the p99 at 3.2× the median, σ = 1 at 10×.
	Sigma float64
}

// Constant returns a distribution that is always d: exact timings for golden traces.
func Constant(d time.Duration) Dist { return Dist{Kind: DistConstant, Base: d} }

// Uniform returns the uniform distribution on [lo, hi]: bounded jitter, the simplest way
// to get reordering.
func Uniform(lo, hi time.Duration) Dist { return Dist{Kind: DistUniform, Base: lo, Max: hi} }

// Exponential returns base plus an exponential draw of the given mean: a fixed
// propagation delay plus memoryless queueing.
func Exponential(base, mean time.Duration) Dist {
	return Dist{Kind: DistExponential, Base: base, Mean: mean}
}

// Lognormal returns the lognormal distribution with the given median and sigma (see
// Dist.Sigma): the usual fit to measured datacenter round trips, skewed right.
func Lognormal(median time.Duration, sigma float64) Dist {
	return Dist{Kind: DistLognormal, Median: median, Sigma: sigma}
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
	case DistConstant:
		return fmt.Sprintf("constant(%v)", d.Base)
	case DistUniform:
		return fmt.Sprintf("uniform(%v, %v)", d.Base, d.Max)
	case DistExponential:
		return fmt.Sprintf("%v+exponential(%v)", d.Base, d.Mean)
	case DistLognormal:
		return fmt.Sprintf("%v+lognormal(median %v, sigma %g)", d.Base, d.Median, d.Sigma)
	}
	return d.Kind.String()
}

// validate reports the first bad field, named param.field.
func (d Dist) validate(param string) error {
	if err := checkDur(param+".base", d.Base); err != nil {
		return err
	}
	switch d.Kind {
	case DistConstant:
		return nil
	case DistUniform:
		if d.Max < d.Base || d.Max > MaxDuration {
			return sim.BadParam(param+".max", d.Max, fmt.Sprintf("[%v, %v] (at least base)", d.Base, MaxDuration))
		}
		return nil
	case DistExponential:
		return checkDur(param+".mean", d.Mean)
	case DistLognormal:
		if !(d.Sigma >= 0 && d.Sigma <= MaxSigma) {
			return sim.BadParam(param+".sigma", d.Sigma, fmt.Sprintf("[0, %g]", MaxSigma))
		}
		return checkDur(param+".median", d.Median)
	}
	return sim.BadParam(param+".kind", d.Kind, "constant, uniform, exponential or lognormal")
}

func checkDur(param string, d time.Duration) error {
	if d < 0 || d > MaxDuration {
		return sim.BadParam(param, d, fmt.Sprintf("[0s, %v]", MaxDuration))
	}
	return nil
}

func checkProb(param string, p float64) error {
	if !(p >= 0 && p <= 1) {
		return sim.BadParam(param, p, "[0, 1]")
	}
	return nil
}

// Latency is a link's delay distribution: usually Fast, but with probability SlowP a
// message draws from Slow instead, the "mostly fast, sometimes very slow" tail of a
// network with a congested switch or a GC-pausing proxy. The zero Latency delivers at
// once (after the sender's event).
type Latency struct {
	Fast  Dist
	SlowP float64 // probability of drawing from Slow; 0 disables the tail
	Slow  Dist
}

// Tail returns a Latency that draws from fast, except with probability p from slow.
func Tail(fast Dist, p float64, slow Dist) Latency { return Latency{Fast: fast, SlowP: p, Slow: slow} }

func (l Latency) String() string {
	if l.SlowP == 0 {
		return l.Fast.String()
	}
	return fmt.Sprintf("%v, %g of the time %v", l.Fast, l.SlowP, l.Slow)
}

func (l Latency) validate(param string) error {
	if err := l.Fast.validate(param + ".fast"); err != nil {
		return err
	}
	if err := checkProb(param+".slow_p", l.SlowP); err != nil {
		return err
	}
	if l.SlowP == 0 {
		return nil
	}
	return l.Slow.validate(param + ".slow")
}

// sampler is a validated Dist in the form the hot path wants: no branches on fields the
// kind does not use, floats precomputed.
type sampler struct {
	kind  DistKind
	base  time.Duration
	span  int64   // uniform: Max-Base+1
	scale float64 // exponential: mean; lognormal: median (nanoseconds)
	sigma float64
}

func newSampler(d Dist) sampler {
	s := sampler{kind: d.Kind, base: d.Base, sigma: d.Sigma}
	switch d.Kind {
	case DistUniform:
		s.span = int64(d.Max-d.Base) + 1
	case DistExponential:
		s.scale = float64(d.Mean)
	case DistLognormal:
		s.scale = float64(d.Median)
	}
	return s
}

// draw returns one value in [0, MaxDuration].
func (s *sampler) draw(r *rand.Rand) time.Duration {
	var extra time.Duration
	switch s.kind {
	case DistConstant:
		return s.base
	case DistUniform:
		return s.base + time.Duration(r.Int64N(s.span))
	case DistExponential:
		extra = capped(s.scale * r.ExpFloat64())
	default:
		extra = capped(s.scale * math.Exp(s.sigma*r.NormFloat64()))
	}
	return min(s.base+extra, MaxDuration)
}

// capped converts nanoseconds to a Duration in [0, MaxDuration]; huge tails and NaN
// saturate instead of wrapping.
func capped(ns float64) time.Duration {
	if !(ns < float64(MaxDuration)) {
		return MaxDuration
	}
	return time.Duration(max(ns, 0))
}

// latency is a validated Latency.
type latency struct {
	fast, slow sampler
	slowP      float64
}

func newLatency(l Latency) latency {
	return latency{fast: newSampler(l.Fast), slow: newSampler(l.Slow), slowP: l.SlowP}
}

// draw draws one latency from r; src is r's generator, which a uniform draw, the common
// case, calls directly.
func (l *latency) draw(r *rand.Rand, src *rand.PCG) time.Duration {
	s := &l.fast
	if l.slowP > 0 && r.Float64() < l.slowP {
		s = &l.slow
	}
	if s.kind == DistUniform {
		return s.base + time.Duration(uint64n(src, uint64(s.span)))
	}
	return s.draw(r)
}

// uint64n draws from [0, n), n > 0, exactly as rand.New(src).Uint64N(n) does on a 64-bit
// machine (Lemire's multiply-and-reject, the same draws in the same order), without
// going through rand.Rand's interface to src: a uniform latency is drawn per message.
// TestUint64nMatchesRand holds it to math/rand/v2.
func uint64n(src *rand.PCG, n uint64) uint64 {
	if n&(n-1) == 0 {
		return src.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}
