package tune

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// DefaultMinSuccess is the share of acquires that must succeed when the user states no
// target: an acquire given up is a request the service failed, and a tuning that gives up
// one in a hundred is not one an engineer can ship without saying so.
const DefaultMinSuccess = 0.99

// MaxUsefulTries bounds the tries the arithmetic will recommend. A lock so busy that a
// waiter needs more tries than this to get in with the success target is not one retries
// can fix: the load must fall, or the lock be split.
const MaxUsefulTries = 1000

// LoadMode says where the clients' demand for the lock comes from.
type LoadMode int

// The load modes.
const (
	// Saturated: no load given, every client wants the lock again as soon as it has
	// released it (think 0). The most contended case, and the only honest default.
	Saturated LoadMode = iota
	// Arrivals: the service's acquisitions a second on this lock, all clients together.
	Arrivals
	// Think: each client rests for a drawn time between a release and its next acquire.
	Think
)

// Load is how often the clients want the lock. At most one of PerSecond and Think is
// given; neither is Saturated.
type Load struct {
	// PerSecond is the acquisitions a second the service makes on this lock, all clients
	// together; 0 when not given.
	PerSecond float64
	// Think is each client's rest between a release and its next acquire; ThinkGiven
	// says whether it was given (a zero Dist is a valid constant 0).
	Think      dist.Dist
	ThinkGiven bool
}

// Mode returns which of the three kinds of load l is.
func (l Load) Mode() LoadMode {
	switch {
	case l.PerSecond > 0:
		return Arrivals
	case l.ThinkGiven:
		return Think
	}
	return Saturated
}

// Contention is the load's arithmetic: how busy the lock is, how likely a waiter's try
// is refused, and the rest each client takes between holds in the confirmation.
type Contention struct {
	Mode LoadMode
	// Busy is how long one hold keeps the key on the nodes, on average; Cost what a
	// refused try costs its waiter (a round trip and the retry delay).
	Busy, Cost time.Duration
	// Utilization is the share of time the lock is held; Refusal the probability that
	// one try of a waiter is refused.
	Utilization, Refusal float64
	// Think is the rest between holds the confirmation simulates.
	Think dist.Dist
}

// Mean returns d's mean (dist.Dist.Expected: a cap left out, so an upper bound when
// capped).
func Mean(d dist.Dist) time.Duration { return d.Expected() }

// contention works out the load's arithmetic for e with r's retry delay. An impossible
// load (more holds a second than one lock can serve, or than the clients can make) is an
// *InputError naming --acquisitions-per-second.
func contention(e Env, r *Recommendation) (Contention, []string, error) {
	rtt50 := 2 * Percentile(e.Latency, 50)
	work := Mean(e.Work)
	c := Contention{Mode: e.Load.Mode(), Busy: work + 2*rtt50, Cost: rtt50 + r.RetryDelay}
	busyLine := fmt.Sprintf("one hold keeps the key on the nodes for its work and about two round trips (the acquire's reply and the release's request; the wait for the last write's acknowledgement): B = E[work] + 2 × RTT p50 = %s + 2 × %s = %s",
		FormatDuration(work), FormatDuration(rtt50), FormatDuration(c.Busy))
	costLine := fmt.Sprintf("a refused try costs its waiter a round trip and the retry delay: s = RTT p50 + retry_delay = %s + %v = %s (a try that times out costs the timeout instead: only a node in trouble makes one)",
		FormatDuration(rtt50), r.RetryDelay, FormatDuration(c.Cost))
	lines := []string{busyLine, costLine}
	busy, cost, k := c.Busy.Seconds(), c.Cost.Seconds(), float64(e.Clients)
	if e.Clients == 1 {
		// Nobody else holds the lock: only a fault refuses a try.
		c.Refusal = 0
		c.Think = e.Load.Think
		if !e.Load.ThinkGiven {
			c.Think = dist.Constant(0)
		}
		if e.Load.PerSecond > 0 {
			c.Utilization = e.Load.PerSecond * busy
			if c.Utilization >= 1 {
				return c, nil, &InputError{"--acquisitions-per-second", strconv.FormatFloat(e.Load.PerSecond, 'g', -1, 64),
					fmt.Sprintf("one client holds the lock for B = %s a cycle: at most 1/B = %.3g acquisitions a second", FormatDuration(c.Busy), 1/busy)}
			}
			c.Think = dist.Exponential(0, ceilMillis(toDuration(max(1/e.Load.PerSecond-busy-rtt50.Seconds(), 0)*1e9)))
		}
		return c, append(lines, "one client: nobody else holds the lock, so only a fault refuses a try"), nil
	}
	switch c.Mode {
	case Arrivals:
		a := e.Load.PerSecond
		c.Utilization = a * busy
		if c.Utilization >= 1 {
			return c, nil, &InputError{"--acquisitions-per-second", strconv.FormatFloat(a, 'g', -1, 64),
				fmt.Sprintf("one lock serves one hold at a time, and a hold keeps it for B = %s: at most 1/B = %.3g acquisitions a second; split the lock, or shorten the holds",
					FormatDuration(c.Busy), 1/busy)}
		}
		c.Refusal = spread(c.Utilization, cost, busy)
		wait := cost * c.Utilization / (1 - c.Utilization)
		think := k/a - busy - wait - rtt50.Seconds()
		if think < 0 {
			return c, nil, &InputError{"--acquisitions-per-second", strconv.FormatFloat(a, 'g', -1, 64),
				fmt.Sprintf("%d clients cannot make that many: each cycle takes at least B + the wait + a round trip = %s, so together they make at most %.3g a second; add clients (--clients) or lower the rate",
					e.Clients, FormatDuration(toDuration((busy+wait+rtt50.Seconds())*1e9)), k/(busy+wait+rtt50.Seconds()))}
		}
		c.Think = dist.Exponential(0, ceilMillis(toDuration(think*1e9)))
		lines = append(lines,
			fmt.Sprintf("load: %g acquisitions a second on this lock ⇒ it is held ρ = %g × B = %.3g of the time; one lock serves at most 1/B = %.3g a second", a, a, c.Utilization, 1/busy),
			refusalLine(c.Utilization, cost, busy, c.Refusal),
			fmt.Sprintf("a client waits s × ρ / (1 − ρ) = %s on average, so to make %g a second the %d clients rest clients / rate − B − wait − RTT p50 = %s between holds, drawn at random (exponential): think = %s",
				FormatDuration(toDuration(wait*1e9)), a, e.Clients, FormatDuration(toDuration(think*1e9)), FormatDuration(Mean(c.Think))))
	case Think:
		c.Think = e.Load.Think
		rest := Mean(c.Think).Seconds() + busy + rtt50.Seconds()
		// ρ = K·B / (rest + s·ρ/(1−ρ)): the more a waiter is refused, the longer its cycle
		// and the less the lock is held. The right side falls as ρ grows, so one root.
		f := func(rho float64) float64 { return k*busy/(rest+cost*rho/(1-rho)) - rho }
		lo, hi := 0.0, 1.0
		for range 100 {
			mid := (lo + hi) / 2
			if f(mid) > 0 {
				lo = mid
			} else {
				hi = mid
			}
		}
		c.Utilization = lo
		// A short rest lets the releaser come back before a waiter tries: then a waiter gets
		// in only in the gap, as in the saturated case.
		gap := busy / (busy + Mean(c.Think).Seconds() + rtt50.Seconds())
		c.Refusal = max(spread(c.Utilization, cost, busy), gap)
		lines = append(lines,
			fmt.Sprintf("load: each of the %d clients rests %s on average (--think) between a release and its next acquire", e.Clients, FormatDuration(Mean(c.Think))),
			fmt.Sprintf("the lock is held ρ of the time, where ρ = clients × B / (think + B + RTT p50 + s × ρ / (1 − ρ)) = %.3g (a waiter's refused tries lengthen its cycle)", c.Utilization),
			refusalLine(c.Utilization, cost, busy, spread(c.Utilization, cost, busy)),
			fmt.Sprintf("a try is refused with probability max(that, B / (B + think + RTT p50)) = max(%.3g, %.3g) = %.3g: the second term is the releaser coming back before a waiter tries", spread(c.Utilization, cost, busy), gap, c.Refusal))
	default:
		c.Think = dist.Constant(0)
		c.Utilization = busy / (busy + rtt50.Seconds())
		c.Refusal = c.Utilization
		lines = append(lines,
			"load: none given (--acquisitions-per-second or --think): every client wants the lock again as soon as it has released it, the most contended case",
			fmt.Sprintf("a waiter gets in only when its try lands between a release and the releaser's next acquire, a round trip: refused with probability B / (B + RTT p50) = %.3g", c.Refusal))
	}
	return c, lines, nil
}

// triesFor returns the least tries whose chance of all being refused, refusal^tries, is
// at most 1 − minSuccess; MaxUsefulTries+1 when even that many would not do.
func triesFor(refusal, minSuccess float64) int {
	eps := 1 - minSuccess
	switch {
	case refusal <= 0:
		return 1
	case eps <= 0 || refusal >= 1:
		return MaxUsefulTries + 1
	}
	n := math.Ceil(math.Log(eps)/math.Log(refusal) - 1e-9)
	return int(min(max(n, 1), MaxUsefulTries+1))
}

// MaxPerSecond bounds --acquisitions-per-second: a million acquisitions a second is
// beyond any one lock (a hold cannot be shorter than a microsecond's round trip).
const MaxPerSecond = 1e6

// spread returns the probability that one try of a waiter is refused when the lock is
// held rho of the time, tries come every cost seconds and holds last busy: rho when the
// tries are at least a hold apart (each lands at a random moment of the holds), and
// rho^(cost/busy) when they are closer, since several tries then fall in one hold and are
// refused together: n tries then look at the lock only n × cost/busy independent times.
func spread(rho, cost, busy float64) float64 {
	if cost >= busy || busy <= 0 {
		return rho
	}
	return math.Pow(rho, cost/busy)
}

// refusalLine is spread's arithmetic in words.
func refusalLine(rho, cost, busy, refusal float64) string {
	if cost >= busy || busy <= 0 {
		return fmt.Sprintf("a waiter's tries come at least a hold apart and land at random moments of the holds (the jitter spreads them), so each is refused with probability ρ = %.3g", refusal)
	}
	return fmt.Sprintf("a waiter's tries come s = %.3gs apart, closer than a hold (B = %.3gs): several fall in one hold and are refused together, so n tries are n × s/B independent looks, each refused with probability ρ: a try is refused with probability ρ^(s/B) = %.3g^%.3g = %.3g",
		cost, busy, rho, cost/busy, refusal)
}
