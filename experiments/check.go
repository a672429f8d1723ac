package experiments

import (
	"context"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// Figures are the record's outcome by the names scenario checks use.
func (r *Record) Figures() scenarios.Figures {
	return scenarios.Figures{
		"validity_overlaps":         float64(r.Safety.ValidityOverlaps),
		"usage_overlaps":            float64(r.Safety.UsageOverlaps),
		"stale_writes_accepted":     float64(r.Safety.StaleWritesAccepted),
		"fenced_writes_rejected":    float64(r.Safety.FencedWritesRejected),
		"attempts":                  float64(r.Liveness.Attempts),
		"acquired":                  float64(r.Liveness.Acquired),
		"failed":                    float64(r.Liveness.Failed),
		"split_brain_rounds":        float64(r.Liveness.SplitBrainRounds),
		"unheld_while_waiting_ms":   r.Liveness.UnheldWhileWaitingMs,
		"extensions_tried":          float64(r.Liveness.Extensions.Tried),
		"extensions_succeeded":      float64(r.Liveness.Extensions.Succeeded),
		"validity_expired_attempts": float64(r.Liveness.FailuresByReason.ValidityExpired),
		"holder_crashes":            float64(r.Liveness.HolderCrashes),
		"reacquire_after_crash_max_ms": func() float64 {
			if m := r.Liveness.ReacquireAfterCrashMs.Max; m != nil {
				return *m
			}
			return 0
		}(),
	}
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
	return sc.Check.Evaluate(runs), nil
}
