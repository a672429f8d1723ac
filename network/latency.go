package network

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// MaxDuration bounds every latency parameter, every drawn latency and every fault
// duration: dist.MaxDuration, named here for the network's callers.
const MaxDuration = dist.MaxDuration

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
	Fast  dist.Dist
	SlowP float64 // probability of drawing from Slow; 0 disables the tail
	Slow  dist.Dist
}

// Tail returns a Latency that draws from fast, except with probability p from slow.
func Tail(fast dist.Dist, p float64, slow dist.Dist) Latency {
	return Latency{Fast: fast, SlowP: p, Slow: slow}
}

func (l Latency) String() string {
	if l.SlowP == 0 {
		return l.Fast.String()
	}
	return fmt.Sprintf("%v, %g of the time %v", l.Fast, l.SlowP, l.Slow)
}

func (l Latency) validate(param string) error {
	if err := l.Fast.Validate(param + ".fast"); err != nil {
		return err
	}
	if err := checkProb(param+".slow_p", l.SlowP); err != nil {
		return err
	}
	if l.SlowP == 0 {
		return nil
	}
	return l.Slow.Validate(param + ".slow")
}

// latency is a validated Latency.
type latency struct {
	fast, slow dist.Sampler
	slowP      float64
}

func newLatency(l Latency) latency {
	return latency{fast: l.Fast.Sampler(), slow: l.Slow.Sampler(), slowP: l.SlowP}
}

// draw draws one latency from r; src is r's generator, which a uniform draw, the common
// case, calls directly.
func (l *latency) draw(r *rand.Rand, src *rand.PCG) time.Duration {
	s := &l.fast
	if l.slowP > 0 && r.Float64() < l.slowP {
		s = &l.slow
	}
	if base, span, ok := s.UniformSpan(); ok {
		return base + time.Duration(uint64n(src, uint64(span)))
	}
	return s.Draw(r)
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
