package tune

import (
	"fmt"
	"strconv"
	"time"
)

// pin applies the library's rule for knob to r after the step that set it: a knob the
// library fixes takes the library's value, and the line says so and why, so that every
// later step of the arithmetic works with what the library will really run. It returns
// the line, or "" when the library lets the knob be set.
func pin(lib Library, knob string, r *Recommendation) string {
	rule := lib.Rule(knob)
	if rule.Access != Fixed {
		return ""
	}
	v, _ := rule.FixedValue(*r)
	var old string
	switch knob {
	case "drift_factor":
		old = strconv.FormatFloat(r.DriftFactor, 'g', -1, 64)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return ""
		}
		r.DriftFactor = f
	case "drift_pad", "retry_delay", "retry_jitter":
		d, err := time.ParseDuration(v)
		if err != nil {
			return ""
		}
		p := map[string]*time.Duration{"drift_pad": &r.DriftPad, "retry_delay": &r.RetryDelay, "retry_jitter": &r.RetryJitter}[knob]
		old = p.String()
		*p = d
	case "tries":
		n, err := strconv.Atoi(v)
		if err != nil {
			return ""
		}
		old = strconv.Itoa(r.Tries)
		r.Tries = n
	default:
		return ""
	}
	if old == v {
		return fmt.Sprintf("%s fixes %s at %s, as recommended: %s", lib.Name, knob, v, rule.Why)
	}
	return fmt.Sprintf("%s fixes %s at %s (the arithmetic would take %s), and the rest is worked out with it: %s", lib.Name, knob, v, old, rule.Why)
}

// tie applies a Tied retry jitter: a library whose wait between attempts is uniform in
// [0, W) has delay and jitter both W/2; the longest wait, delay + jitter, is kept.
func tie(lib Library, r *Recommendation) string {
	rule := lib.Rule("retry_jitter")
	if rule.Access != Tied {
		return ""
	}
	w := r.RetryDelay + r.RetryJitter
	r.RetryDelay, r.RetryJitter = w/2, w/2
	return fmt.Sprintf("%s waits uniformly in [0, %s) between attempts (%s): retry_delay = retry_jitter = %v, the longest wait kept: %s",
		lib.Name, rule.Option, w, w/2, rule.Why)
}

// extendRules sets how the library extends: every ttl/PerTTL when it fixes the rhythm
// (RedLock.net's timer every expiry/2), or not at all when it cannot (redlock-py).
func extendRules(lib Library, r *Recommendation) []string {
	rule := lib.Rule("extend_every")
	switch {
	case rule.Access != Fixed:
		return nil
	case rule.PerTTL > 0:
		r.extendDiv = rule.PerTTL
		return []string{fmt.Sprintf("%s extends every ttl/%d by itself: %s", lib.Name, rule.PerTTL, rule.Why)}
	case !rule.WhenExtending && rule.Fixed == "0s":
		r.noExtend = true
		return []string{fmt.Sprintf("%s cannot extend a lock: the ttl must cover the whole hold (%s)", lib.Name, rule.Why)}
	}
	return nil
}
