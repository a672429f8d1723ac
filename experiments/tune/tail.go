package tune

import (
	"fmt"
	"math"
	"time"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim/dist"
	"gonum.org/v1/gonum/stat/distuv"
)

// tailSteps is the number of quantiles of the work distribution the tail estimate sums
// over: enough that the estimate moves by well under 1 % when it doubles.
const tailSteps = 4000

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
// per acquisition of recommendation r: a holder's work outlives the validity it started
// with, by itself or because a pause (at pauseRate a second per client) began during the
// hold and outlasted what validity was left. It assumes another client takes the lock as
// soon as the keys expire, as one does when the lock is contended, so it is an upper
// estimate where the lock is idle. It returns the estimate and its arithmetic.
func usageTail(e Env, r Recommendation) (float64, []string) {
	rtt50 := 2 * Percentile(e.Latency, 50)
	drift := time.Duration(math.Ceil(float64(r.TTL)*r.DriftFactor)) + r.DriftPad
	v := r.TTL - rtt50 - drift
	lines := []string{fmt.Sprintf("validity when the work starts: V = ttl − RTT p50 − (ttl × drift_factor + drift_pad) = %v − %s − %v = %s",
		r.TTL, FormatDuration(rtt50), drift, FormatDuration(v))}
	lambda := e.PauseRate
	if r.Extend {
		// An extending holder renews its validity every ExtendEvery: what a pause must
		// outlast is what is left just before an extension.
		left := v - r.ExtendEvery
		p := lambda * Mean(e.Work).Seconds() * survival(e.Pause, left)
		lines = append(lines, fmt.Sprintf("the holder extends every %v, so a pause must outlast V − %v = %s: λ × E[work] × P(pause > %s) = %g × %s × %.3g = %.3g per acquisition",
			r.ExtendEvery, r.ExtendEvery, FormatDuration(left), FormatDuration(left), lambda, FormatDuration(Mean(e.Work)), survival(e.Pause, left), p))
		return p, lines
	}
	byWork := survival(e.Work, v)
	var byPause float64
	if lambda > 0 {
		for i := range tailSteps {
			w := Percentile(e.Work, 100*(float64(i)+0.5)/tailSteps)
			if w >= v {
				continue
			}
			byPause += -math.Expm1(-lambda*w.Seconds()) * survival(e.Pause, v-w)
		}
		byPause /= tailSteps
	}
	p := byWork + byPause
	lines = append(lines,
		fmt.Sprintf("the work alone outlasts it: P(work > V) = %.3g", byWork),
		fmt.Sprintf("a pause begins during the hold (rate λ = %g a second) and outlasts what is left: E[(1 − e^(−λ × work)) × P(pause > V − work)] = %.3g", lambda, byPause),
		fmt.Sprintf("usage overlap incidents ≈ %.3g + %.3g = %.3g per acquisition = %.3g per 10,000 (an upper estimate: it assumes another client takes the lock as soon as the keys expire, as one does when the lock is contended)",
			byWork, byPause, p, p*Per10k))
	return p, lines
}

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
		return rec, err == nil && rec.UsageTail+rec.CrashTail <= t.MaxIncidents, err
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
		return note(rec, fmt.Sprintf("the design percentile's ttl %v leaves %.3g violation incidents per 10,000 by the analytic estimates (below), more than the target's %.3g: raised to %v, the least ttl (rounded up to two figures) where they are %.3g",
			r.TTL, (r.UsageTail+r.CrashTail)*Per10k, t.MaxIncidents*Per10k, rec.TTL, (rec.UsageTail+rec.CrashTail)*Per10k)), nil
	}
	return note(r, fmt.Sprintf("the analytic estimates give %.3g violation incidents per 10,000 at this ttl, more than the target's %.3g, and no ttl up to %v meets it: see the conflicts and the verdict",
		(r.UsageTail+r.CrashTail)*Per10k, t.MaxIncidents*Per10k, hi)), nil
}
