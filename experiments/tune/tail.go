package tune

import (
	"fmt"
	"math"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim/dist"
	"gonum.org/v1/gonum/stat/distuv"
)

// survival returns P(X > x) for a draw X of d, from its formula; a capped distribution
// never draws above its cap.
func survival(d dist.Dist, x time.Duration) float64 {
	if d.Cap > 0 && x >= d.Cap && (d.Kind == dist.KindExponential || d.Kind == dist.KindLognormal) {
		return 0
	}
	switch d.Kind {
	case dist.KindConstant:
		if x < d.Base {
			return 1
		}
		return 0
	case dist.KindUniform:
		switch {
		case x < d.Base:
			return 1
		case x >= d.Max:
			return 0
		}
		return float64(d.Max-x) / float64(d.Max-d.Base)
	case dist.KindExponential:
		if x <= d.Base {
			return 1
		}
		if d.Mean <= 0 {
			return 0
		}
		return math.Exp(-float64(x-d.Base) / float64(d.Mean))
	case dist.KindLognormal:
		if x <= d.Base {
			return 1
		}
		if d.Sigma == 0 {
			if x < d.Base+d.Median {
				return 1
			}
			return 0
		}
		return 1 - distuv.UnitNormal.CDF(math.Log(float64(x-d.Base)/float64(d.Median))/d.Sigma)
	}
	return 0
}

// usageTail estimates, from the fitted distributions alone, the usage overlap incidents
// per acquisition of recommendation r: a holder's work outlives the validity V it
// started with, by itself or because a pause (at PauseRate a second per client) began
// during the hold, and another client gets the lock in the overrun o. Another gets in
// unless nobody was waiting when the keys expired, or a waiter's next retry (one every
// s, its phase at random) falls after the work ends, and nobody new asks during the
// overrun (overrunTaken). It returns the estimate and its arithmetic.
func usageTail(e Env, r Recommendation) (float64, []string) {
	rtt50 := 2 * Percentile(e.Latency, 50)
	drift := time.Duration(math.Ceil(float64(r.TTL)*r.DriftFactor)) + r.DriftPad
	v := r.TTL - rtt50 - drift
	lines := []string{fmt.Sprintf("validity when the work starts: V = ttl − RTT p50 − (ttl × drift_factor + drift_pad) = %v − %s − %v = %s",
		r.TTL, FormatDuration(rtt50), drift, FormatDuration(v))}
	if e.Clients == 1 {
		return 0, append(lines, "one client: nobody else can take the lock while it overruns")
	}
	taken, how := overrunTaken(e, r, v)
	lines = append(lines, how)
	lambda := e.PauseRate
	if r.Extend {
		// An extending holder renews its validity every ExtendEvery: what a pause must
		// outlast is what is left just before an extension; the overrun is the rest.
		left := v - r.ExtendEvery
		byPause := beyond(e.Pause, left, func(p time.Duration) float64 { return taken(p - left) })
		p := lambda * Mean(e.Work).Seconds() * byPause
		return p, append(lines, fmt.Sprintf("the holder extends every %v, so a pause must outlast V − %v = %s: λ × E[work] × E[taken(pause − %s); pause > %s] = %g × %s × %.3g = %.3g per acquisition",
			r.ExtendEvery, r.ExtendEvery, FormatDuration(left), FormatDuration(left), FormatDuration(left), lambda, FormatDuration(Mean(e.Work)), byPause, p))
	}
	byWork := beyond(e.Work, v, func(w time.Duration) float64 { return taken(w - v) })
	var byPause float64
	if fits := 1 - survival(e.Work, v); lambda > 0 && fits > 0 {
		// Over the holds that fit in V, by their quantiles.
		for i := range workSteps {
			w := min(Percentile(e.Work, 100*fits*(float64(i)+0.5)/workSteps), v)
			after := beyond(e.Pause, v-w, func(p time.Duration) float64 { return taken(w + p - v) })
			byPause += -math.Expm1(-lambda*w.Seconds()) * after
		}
		byPause *= fits / workSteps
	}
	p := byWork + byPause
	return p, append(lines,
		fmt.Sprintf("the work alone outlasts V and another gets in: E[taken(work − V); work > V] = %.3g", byWork),
		fmt.Sprintf("a pause begins during the hold (rate λ = %g a second) and outlasts what is left: E[(1 − e^(−λ × work)) × E[taken(work + pause − V); pause > V − work]] = %.3g", lambda, byPause),
		fmt.Sprintf("usage overlap incidents ≈ %.3g + %.3g = %.3g per acquisition = %.3g per 10,000", byWork, byPause, p, p*Per10k))
}

// The quadrature of usageTail: quantiles of the holds that fit in the validity, and of
// the part of a distribution beyond a threshold; enough that the estimate moves by well under 1 % when they double, few
// enough that raiseTTL's search stays well under a second.
const (
	workSteps  = 1000
	pauseSteps = 64
)

// beyond returns E[f(X); X > x] for a draw X of d: the probability of the part of d above
// x times the mean of f over pauseSteps of that part's quantiles, so that a tail far out
// (a hold beyond p99.99) is weighed, not skipped.
func beyond(d dist.Dist, x time.Duration, f func(time.Duration) float64) float64 {
	tail := survival(d, x)
	if tail <= 0 {
		return 0
	}
	from, sum := 1-tail, 0.0
	for j := range pauseSteps {
		q := from + tail*(float64(j)+0.5)/pauseSteps
		sum += f(max(Percentile(d, 100*q), x))
	}
	return tail * sum / pauseSteps
}

// overrunTaken returns the probability that another client gets the lock during an
// overrun of o past the keys' expiry, V after the acquisition, with the line that says
// how: under no load K − 1 waiters retry every s at random phases; under a load, the
// others ask λ_o = X × (K − 1)/K times a second (X the holds a second), so one is waiting
// with probability 1 − e^(−λ_o V) and another asks during the overrun with 1 − e^(−λ_o o).
func overrunTaken(e Env, r Recommendation, v time.Duration) (func(time.Duration) float64, string) {
	s := r.Contention.Cost.Seconds()
	late := func(o time.Duration) float64 { // a waiter's next retry comes after the overrun
		if s <= 0 {
			return 0
		}
		return max(0, 1-o.Seconds()/s)
	}
	k := float64(e.Clients)
	if r.Contention.Mode == Saturated || r.Contention.Busy <= 0 {
		return func(o time.Duration) float64 { return 1 - math.Pow(late(o), k-1) },
			fmt.Sprintf("taken(o) = 1 − max(0, 1 − o/s)^(K − 1): with no load %d clients wait, each retrying every s = %s", e.Clients-1, FormatDuration(r.Contention.Cost))
	}
	x := r.Contention.Utilization / r.Contention.Busy.Seconds()
	lo := x * (k - 1) / k
	waiting := -math.Expm1(-lo * v.Seconds())
	return func(o time.Duration) float64 {
			return 1 - ((1-waiting)+waiting*late(o))*math.Exp(-lo*o.Seconds())
		}, fmt.Sprintf("taken(o) = 1 − (e^(−λ_o V) + (1 − e^(−λ_o V)) × max(0, 1 − o/s)) × e^(−λ_o o): the others ask λ_o = ρ/B × (K − 1)/K = %.3g a second, one waits when the keys expire with probability %.3g, retrying every s = %s",
			lo, waiting, FormatDuration(r.Contention.Cost))
}

// TargetMargin is how far below a violation target the arithmetic aims its estimate: a
// third. A confirmation whose true rate is the target itself can never show its 95 %
// upper bound under the target, however many runs it adds; at a third of it, a few tens
// of thousands of acquisitions per 1-in-10,000 can.
const TargetMargin = 3

// raiseTTL returns the recommendation recomputed for the least ttl (whole milliseconds,
// rounded up to two significant figures where the unavailability target allows) whose
// analytic estimates meet t.MaxIncidents, found by walking up from r's ttl in steps of
// 5 % and bisecting the last; r, with a line saying so, when none up to the
// unavailability target's limit does. The design percentile bounds the ttl from below;
// the target, through the estimates, decides how far above it the ttl must be.
func raiseTTL(e Env, t Targets, lib Library, r Recommendation) (Recommendation, error) {
	at := func(ttl time.Duration) (Recommendation, bool, error) {
		u := t
		u.TTL = ttl
		rec, err := RecommendFor(e, u, lib)
		return rec, err == nil && rec.UsageTail+rec.CrashTail <= t.MaxIncidents/TargetMargin, err
	}
	hi := redlock.MaxTTL
	if t.Unavailability > 0 {
		allowed, _ := unavailabilityLimit(e, t, &r)
		hi = min(hi, allowed)
	}
	note := func(rec Recommendation, line string) Recommendation {
		for i := range rec.Steps {
			if rec.Steps[i].Name == "ttl" {
				rec.Steps[i].Lines = append(rec.Steps[i].Lines, line)
			}
		}
		return rec
	}
	lo := r.TTL
	for next := lo; next < hi; {
		next = min(max(next+time.Millisecond, time.Duration(float64(next)*1.05)/time.Millisecond*time.Millisecond), hi)
		if _, ok, err := at(next); err != nil {
			return r, err
		} else if !ok {
			lo = next
			continue
		}
		up := next
		for up-lo > time.Millisecond {
			mid := (lo + up) / 2 / time.Millisecond * time.Millisecond
			if mid <= lo {
				break
			}
			if _, ok, _ := at(mid); ok {
				up = mid
			} else {
				lo = mid
			}
		}
		if nice := ceilMillis(roundUpDuration(up)); nice <= hi {
			up = nice
		}
		rec, _, err := at(up)
		if err != nil {
			return r, err
		}
		return note(rec, fmt.Sprintf("the design percentile's ttl %v leaves %.3g violation incidents per 10,000 by the analytic estimates (below), more than a third of the target's %.3g (TargetMargin: a rate at the target itself can never be shown below it by the confirmation's 95 %% bound): raised to %v, the least ttl (rounded up to two figures) where they are %.3g",
			r.TTL, (r.UsageTail+r.CrashTail)*Per10k, t.MaxIncidents*Per10k, rec.TTL, (rec.UsageTail+rec.CrashTail)*Per10k)), nil
	}
	return note(r, fmt.Sprintf("the analytic estimates give %.3g violation incidents per 10,000 at this ttl, more than the target's %.3g, and no ttl up to %v meets it: see the conflicts and the verdict",
		(r.UsageTail+r.CrashTail)*Per10k, t.MaxIncidents*Per10k, hi)), nil
}
