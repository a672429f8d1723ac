package plots

import (
	"fmt"
	"strings"
)

// Headline returns a sweep's finding in one sentence, for a study's index: along its
// first axis, where the lock and the resource failed most and least (the share of runs
// with two holders working at once, stale writes accepted per 10,000 acquisitions), or
// that nothing failed anywhere. It reads only what the figures read, so the sentence and
// the figures agree.
func Headline(sw *Sweep) string {
	if len(sw.Points) == 0 {
		return "no runs"
	}
	at := func(p *SweepPoint) string {
		var kv []string
		for i, a := range sw.Axes {
			kv = append(kv, a.Knob+"="+p.Values[i])
		}
		if len(kv) == 0 {
			return "the one point"
		}
		return strings.Join(kv, ", ")
	}
	usage := func(p *SweepPoint) float64 { return frac(p.Cell.UsageRuns, p.Cell.Runs) }
	stale := func(p *SweepPoint) float64 {
		if p.Cell.Acquired == 0 {
			return 0
		}
		return float64(p.Cell.Stale) / float64(p.Cell.Acquired) * 1e4
	}
	worst, best := sw.Points[0], sw.Points[0]
	for _, p := range sw.Points[1:] {
		if usage(p) > usage(worst) || (usage(p) == usage(worst) && stale(p) > stale(worst)) {
			worst = p
		}
		if usage(p) < usage(best) || (usage(p) == usage(best) && stale(p) < stale(best)) {
			best = p
		}
	}
	runs := sw.RunCount()
	if usage(worst) == 0 && stale(worst) == 0 {
		return fmt.Sprintf("%d runs over %d points: no two holders worked at once and no stale write was accepted anywhere", runs, len(sw.Points))
	}
	return fmt.Sprintf("%d runs over %d points: worst at %s (two holders working at once in %.0f %% of runs, %.3g stale writes accepted per 10,000 acquisitions); best at %s (%.0f %%, %.3g)",
		runs, len(sw.Points), at(worst), 100*usage(worst), stale(worst), at(best), 100*usage(best), stale(best))
}

func frac(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}
