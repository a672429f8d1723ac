package knobs

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
)

// LimitError reports knob values that are each in range but together would drive a run
// into one of the simulator's hard limits part way through: a partition rate that passes
// its own check makes more faults over a day than a run can hold. It is found before the
// first run, from the rates (an expected count with a margin), so that a sweep's --dry-run
// and a run's first second refuse what would otherwise fail hours of simulated time later.
//
// It unwraps to a *sim.ParamError on the first knob, so callers that only ask "is this a
// bad knob value?" (the CLI's exit status 2) need not know it.
type LimitError struct {
	Knobs    []KV    // the knobs that drive the count, with their values
	What     string  // what is counted, e.g. "random network faults"
	Expected float64 // the estimated count
	Allowed  float64 // the most the estimate may reach
	Limit    int     // the simulator's hard limit
	Fix      string  // what to change
}

func (e *LimitError) Error() string {
	kvs := make([]string, len(e.Knobs))
	for i, kv := range e.Knobs {
		kvs[i] = kv.Name + " = " + kv.Value
	}
	return fmt.Sprintf("%s make about %s %s, and a run holds at most %d "+
		"(the estimate must stay under %s, for the margin a random draw needs): %s",
		joinAnd(kvs), roundCount(e.Expected), e.What, e.Limit, roundCount(e.Allowed), e.Fix)
}

// Unwrap returns the complaint as a *sim.ParamError on the first knob.
func (e *LimitError) Unwrap() error {
	return &sim.ParamError{Param: e.Knobs[0].Name, Value: e.Knobs[0].Value,
		Allowed: fmt.Sprintf("at most about %s %s", roundCount(e.Allowed), e.What)}
}

func joinAnd(ss []string) string {
	if len(ss) <= 1 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// roundCount prints an estimate without false precision: 86400, 1.2 million.
func roundCount(f float64) string {
	switch {
	case math.IsInf(f, 1) || f > 1e15:
		return "unboundedly many"
	case f >= 1e6:
		return fmt.Sprintf("%.3g million", f/1e6)
	}
	return fmt.Sprintf("%.0f", math.Ceil(f))
}

// checkLimits estimates, from the rates and the run's length, every count the simulator
// bounds, and refuses a world whose estimate comes near the bound. A Poisson count's mean
// is its rate × duration; the margin (a factor of two) keeps the chance that a draw passes
// the limit negligible for any count large enough to matter.
func (c *Config) checkLimits() error {
	secs := c.Duration.Seconds()
	dur := KV{"duration", c.Duration.String()}
	type count struct {
		name string
		rate float64
		max  int
		what string
	}
	counts := []count{{"node_clock_jump_rate", c.NodeJumpRate, MaxJumps, "clock jumps per node"}}
	for _, f := range RandomNodeFaults() {
		counts = append(counts, count{f.Rate, f.RateOf(c), MaxCrashes, f.Counted})
	}
	for _, r := range counts {
		if exp := r.rate * secs; exp > float64(r.max)/2 {
			return &LimitError{Knobs: []KV{{r.name, formatFloat(r.rate)}, dur}, What: r.what,
				Expected: exp, Allowed: float64(r.max) / 2, Limit: r.max,
				Fix: fmt.Sprintf("lower %s to at most %.3g, or shorten the run", r.name, float64(r.max)/2/secs)}
		}
	}
	// Random partitions and clogs share the network's one limit on faults per run.
	if exp := (c.PartitionRate + c.ClogRate) * secs; exp > network.DefaultMaxFaults/2 {
		return &LimitError{
			Knobs: []KV{{"partition_rate", formatFloat(c.PartitionRate)}, {"clog_rate", formatFloat(c.ClogRate)}, dur},
			What:  "random network faults (partitions and clogs together)", Expected: exp,
			Allowed: network.DefaultMaxFaults / 2, Limit: network.DefaultMaxFaults,
			Fix: fmt.Sprintf("keep partition_rate + clog_rate at most %.3g per second, or shorten the run",
				network.DefaultMaxFaults/2/secs)}
	}
	if exp := c.inFlightEstimate(); exp > network.DefaultMaxInFlight/2 {
		knobs := []KV{{"clients", fmt.Sprint(c.Clients)}, {"nodes", fmt.Sprint(c.Lock.Effective().Nodes)},
			{"latency", FormatLatency(c.Latency)}, {"timeout", c.Lock.NodeTimeout().String()},
			{"retry_delay", c.Lock.RetryDelay.String()}, {"retry_jitter", c.Lock.RetryJitter.String()}}
		if c.ClogRate > 0 {
			knobs = append(knobs, KV{"clog_rate", formatFloat(c.ClogRate)}, KV{"clog_len", FormatDist(c.ClogLen)})
		}
		return &LimitError{
			Knobs: append(knobs, dur), What: "messages in flight at once", Expected: exp,
			Allowed: network.DefaultMaxInFlight / 2, Limit: network.DefaultMaxInFlight,
			Fix: "a client sends a new attempt every timeout + retry pause while the last one's messages are " +
				"still travelling: raise timeout or retry_delay, lower latency, clients or nodes, or clog less"}
	}
	return nil
}

// inFlightEstimate estimates the messages in flight at the busiest, by Little's law: the
// rate messages are sent times how long each travels. It errs high: every client is taken
// to retry as fast as its timeout and retry pause allow, sending a request and an unlock
// to every node (plus a fencing request and a storage write) per attempt and getting a
// reply to each; and it is capped by every message the run can send, since no more can be
// in flight than were sent. A holder that extends every extend_every sends a round as
// often, and counts as a retrying client with that pause if it is the shorter.
func (c *Config) inFlightEstimate() float64 {
	lock := c.Lock.Effective()
	perAttempt := float64(2*lock.Nodes + 2)
	w := latencyMean(c.Latency).Seconds() // one way
	// An attempt ends when every reply is in or the timeout fires: with replies slower than
	// the timeout, a client starts a new attempt every timeout + retry pause.
	wait := min(lock.NodeTimeout().Seconds(), 2*w)
	pause := retryPauseMean(lock.RetryDelay, lock.RetryJitter)
	if c.ExtendEvery > 0 { // a holder extends (a round to every node) this often
		pause = min(pause, c.ExtendEvery)
	}
	period := wait + pause.Seconds()
	if period <= 0 { // instant delivery, no pause: nothing stays in flight past its event
		return float64(c.Clients) * 2 * perAttempt
	}
	rate := float64(c.Clients) * 2 * perAttempt / period * (1 + c.Dup) // requests and replies
	travel := w
	if c.ClogRate > 0 {
		// A clog of length L holds what its link carries for L, on average for L/2:
		// clog_rate × (rate / links) × E[L²]/2 messages, with E[L²] taken as 2 mean²
		// (exact for an exponential length, high for a constant or uniform one).
		links := float64(lock.Nodes+1+c.Clients) * float64(lock.Nodes+c.Clients)
		m := c.ClogLen.Expected().Seconds()
		travel += c.ClogRate * m * m / links
	}
	return min(rate*travel, rate*c.Duration.Seconds())
}

// retryPauseMean is the mean of max(0, delay + U(−jitter, +jitter)).
func retryPauseMean(delay, jitter time.Duration) time.Duration {
	d, j := delay.Seconds(), jitter.Seconds()
	switch {
	case j == 0 || d >= j:
		return delay
	case d <= -j:
		return 0
	}
	// The part of [d−j, d+j] above 0 is [0, d+j], of probability (d+j)/2j and mean (d+j)/2.
	return time.Duration((d + j) * (d + j) / (4 * j) * float64(time.Second))
}

func latencyMean(l network.Latency) time.Duration {
	if l.SlowP == 0 {
		return l.Fast.Expected()
	}
	return time.Duration((1-l.SlowP)*float64(l.Fast.Expected()) + l.SlowP*float64(l.Slow.Expected()))
}
