package experiments

import (
	"context"
	"fmt"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/sim"
)

// ReplayScenario runs sc with settings for seed as RunScenario does, but one kernel event
// at a time, and returns the run's replay for the viewer (report.Replay: every narrated
// line with the world's state just after it) with its record. It is the same run: the
// same events in the same order, the same record and trace hash. ctx is checked every
// few thousand events.
func ReplayScenario(ctx context.Context, sc *scenarios.Scenario, settings []knobs.KV, seed uint64) (*report.Replay, *Record, error) {
	return ReplayScenarioWithin(ctx, sc, settings, seed, report.ReplayLimits{})
}

// ReplayScenarioWithin is ReplayScenario with a replay that keeps no more than lim: the
// run is the same, only its replay stops sooner (report.Replay.Truncated).
func ReplayScenarioWithin(ctx context.Context, sc *scenarios.Scenario, settings []knobs.KV, seed uint64, lim report.ReplayLimits) (*report.Replay, *Record, error) {
	w, err := AssembleScenario(sc, settings, seed)
	if err != nil {
		return nil, nil, err
	}
	return ReplayWorld(ctx, w, sc.Name, lim)
}

// ReplayWorld is ReplayScenarioWithin for a world already built: the replay of its run,
// which keeps no more than lim, and the run's record under the name scenario.
func ReplayWorld(ctx context.Context, w *world.World, scenario string, lim report.ReplayLimits) (*report.Replay, *Record, error) {
	seed := w.Seed
	rc, tc, err := report.AttachReplay(w)
	if err != nil {
		return nil, nil, err
	}
	rc.Limit(lim, tc)
	teeSink{rc, tc}.install(w.Sim)
	end := sim.Time(w.Config.Duration)
	for n := 1; ; n++ {
		at, ok := w.Sim.NextAt()
		if !ok || at > end {
			break
		}
		rc.Until(at) // the clock jumps before it: a line each, though no event
		if !w.Sim.Step() {
			break
		}
		if err := w.Sim.Err(); err != nil {
			return nil, nil, fmt.Errorf("run %s seed %d at %v: %w", scenario, seed, w.Sim.Now(), err)
		}
		rc.AfterEvent()
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := w.Sim.RunUntil(end); err != nil {
		return nil, nil, fmt.Errorf("run %s seed %d at %v: %w", scenario, seed, w.Sim.Now(), err)
	}
	w.Oracle.Finish(end)
	rec := record(w, scenario)
	w.Oracle.ReleaseHistogram()
	rp := rc.Finish(tc, rec.Scenario, rec.Seed)
	if err := rc.Undecoded(tc); err != nil { // a bug in a record's decoder or its writer
		return rp, rec, fmt.Errorf("replaying %s seed %d: %w", scenario, seed, err)
	}
	return rp, rec, nil
}
