package network

import (
	"errors"
	"fmt"
	"time"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// Limits. Everything the network holds is bounded, so that a runaway world (a retry
// storm, a fault generator at a typo'd rate) stops with an explanation instead of eating
// memory.
const (
	// MaxEndpoints bounds the endpoints of one network; per-link state is a dense
	// matrix, so the bound also bounds its memory.
	MaxEndpoints = 1024
	// DefaultMaxInFlight is the limit on messages in flight (including held ones) when
	// Config leaves it zero. Tens of processes keep hundreds in flight; tens of thousands
	// means a feedback loop.
	DefaultMaxInFlight = 1 << 16
	// DefaultMaxFaults is the limit on faults (partitions and clogs) per run when Config
	// leaves it zero; each one is remembered for Faults.
	DefaultMaxFaults = 1 << 16
	// MaxLimit bounds MaxInFlight and MaxFaults; it is the kernel's own slot limit.
	MaxLimit = 1<<24 - 1
	// MaxScheduled bounds the faults scheduled with At over a run.
	MaxScheduled = 1 << 16
	// MaxRate bounds a random fault rate, per simulated second.
	MaxRate = 1000.0
)

// ErrFull is wrapped by the error a run fails with when a limit is reached: too many
// messages in flight, or too many faults.
var ErrFull = errors.New("network: limit reached")

// Link is how one directed link behaves: its latency and its faults. Config.Default
// applies to every link; SetLink overrides one.
type Link struct {
	Latency Latency
	Loss    float64 // probability that a message is lost
	Dup     float64 // probability that a message that was not lost arrives twice
	// FIFO makes the link behave like a TCP connection: a message is never delivered
	// before one sent earlier on the same link (its delivery time is the later of its own
	// draw and the previous message's delivery time).
	FIFO bool
}

func (l Link) validate(prefix string) error {
	if err := l.Latency.validate(prefix + "latency"); err != nil {
		return err
	}
	if err := checkProb(prefix+"loss", l.Loss); err != nil {
		return err
	}
	return checkProb(prefix+"dup", l.Dup)
}

// RandomFaults draws faults at random times from a stream split off the network's stream
// when the network is made, so the fault schedule depends on the seed but not on the
// traffic: two runs of a sweep that differ only in, say, the lock TTL see the same
// partitions at the same times. Arrivals are Poisson. A zero rate disables that kind.
type RandomFaults struct {
	IsolateRate float64   // isolations of a uniformly chosen endpoint per simulated second
	IsolateFor  dist.Dist // how long each isolation lasts (at least 1ns)
	ClogRate    float64   // clogs of a uniformly chosen link per simulated second
	ClogFor     dist.Dist // how long each clog lasts (at least 1ns)
	// Until is the true time after which no random fault starts; zero means never, and
	// then the kernel always has an event pending, so end the run with RunUntil.
	Until sim.Time
}

func (r RandomFaults) validate() error {
	if err := checkRate("random.isolate_rate", r.IsolateRate); err != nil {
		return err
	}
	if err := checkRate("random.clog_rate", r.ClogRate); err != nil {
		return err
	}
	if err := r.IsolateFor.Validate("random.isolate_for"); err != nil {
		return err
	}
	if err := r.ClogFor.Validate("random.clog_for"); err != nil {
		return err
	}
	if r.Until < 0 {
		return sim.BadParam("random.until", r.Until, "[0s, never] (0 = never)")
	}
	return nil
}

func checkRate(param string, r float64) error {
	if !(r >= 0 && r <= MaxRate) {
		return sim.BadParam(param, r, fmt.Sprintf("[0, %g] per second", MaxRate))
	}
	return nil
}

// Config configures a network. It is plain data (no functions), so an experiment can
// decode, print and compare it; the message writer is given to SetMessage. The zero
// Config is a perfect network that delivers every message at once.
type Config struct {
	Default     Link // every link's behaviour unless SetLink overrides it
	MaxInFlight int  // limit on messages in flight; 0 means DefaultMaxInFlight
	MaxFaults   int  // limit on partitions and clogs per run; 0 means DefaultMaxFaults
	Random      RandomFaults
}

func (c Config) validate() error {
	if err := c.Default.validate(""); err != nil {
		return err
	}
	if err := checkLimit("max_in_flight", c.MaxInFlight); err != nil {
		return err
	}
	if err := checkLimit("max_faults", c.MaxFaults); err != nil {
		return err
	}
	return c.Random.validate()
}

func checkLimit(param string, v int) error {
	if v < 0 || v > MaxLimit {
		return sim.BadParam(param, v, fmt.Sprintf("[0, %d] (0 = default)", MaxLimit))
	}
	return nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// profile is a validated Link.
type profile struct {
	lat  latency
	loss float64
	dup  float64
	fifo bool
	// uniform says the link neither loses nor duplicates and its latency is one uniform
	// distribution, the links of most worlds: Send then draws the latency in line.
	uniform bool
	// ubase and uspan are the uniform latency's base and number of values, when uniform.
	ubase time.Duration
	uspan uint64
	// dropNext is how many messages the link still drops (DropNext); a link with messages
	// to drop has a profile of its own and is never uniform meanwhile, so Send's in-line
	// path, which does not look at it, is never taken for it.
	dropNext   int
	wasUniform bool
}

func newProfile(l Link) profile {
	p := profile{lat: newLatency(l.Latency), loss: l.Loss, dup: l.Dup, fifo: l.FIFO}
	base, span, ok := p.lat.fast.UniformSpan()
	p.uniform = p.loss == 0 && p.dup == 0 && p.lat.slowP == 0 && ok
	p.ubase, p.uspan = base, uint64(span)
	return p
}
