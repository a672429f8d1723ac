package experiments

import (
	"context"
	"math"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/metric"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// Figures are the record's outcome by the names scenario checks use: every metric a check
// may use (package metric), a value with nothing to measure (no acquisition to time) as
// NaN, which no bound holds.
func (r *Record) Figures() scenarios.Figures {
	f := scenarios.Figures{}
	for _, d := range metric.All() {
		if d.Check == metric.Reported {
			continue
		}
		m := r.metric(d)
		f[d.Name] = m.Value
		if m.Missing {
			f[d.Name] = math.NaN()
		}
	}
	return f
}

// CheckScenario runs scenario sc with settings at seeds 1..seeds (its check's own
// number when seeds is 0) and judges its check's rules; a scenario without a check has
// nothing to judge and returns no results.
func CheckScenario(ctx context.Context, sc *scenarios.Scenario, settings []knobs.KV, seeds int) ([]scenarios.Result, error) {
	if sc.Check == nil {
		return nil, nil
	}
	if seeds == 0 {
		seeds = sc.Check.Seeds
	}
	runs := make([]scenarios.Figures, 0, seeds)
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		rec, err := RunScenario(ctx, sc, settings, seed, Options{})
		if err != nil {
			return nil, err
		}
		runs = append(runs, rec.Figures())
	}
	return sc.Check.Evaluate(runs)
}
