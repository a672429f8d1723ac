package search

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// rediscoveries are the literature's headline stories, each as the one assumption that
// makes it possible, the kind of finding it is, the built-in scenario that tells it by
// hand ("" when none does), and the runs search seed 1 needs to find it
// (scripts/search-rediscover runs them with the budgets docs/search.md states).
var rediscoveries = []struct {
	name     string
	faults   string
	assume   []string
	split    int // --max-split-brain, or -1
	kind     string
	scenario string
	runs     int
}{
	{"restart without persistence", "crash_node", []string{"persistence=none", "node_down<=1s"}, -1, "validity_overlap", "restart-no-persistence", 1000},
	{"a node's wall clock steps", "clock_step", []string{"persistence=aof-always"}, -1, "validity_overlap", "clock-jump", 150},
	{"client pauses up to 2 × ttl", "pause_client", []string{"ttl=1s", "pause_len<=2s"}, -1, "usage_overlap", "gc-pause", 20},
	{"async replication and failover", "crash_node", []string{"variant=single-instance-failover"}, -1, "validity_overlap", "failover-race", 100},
	{"retries without jitter", "crash_node", []string{"retry_jitter=0s", "start_spread=0s"}, 4, "split_brain", "split-brain-no-jitter", 20},
	{"drift factor below the clocks' drift", "none", []string{"node_clock_drift_ppm=50000"}, -1, "validity_overlap", "", 60},
}

// TestRediscoversTheLiterature: with only the assumption each story needs, search seed 1
// finds a violation of the story's kind within the stated runs, and shrinks it to no more
// faults than the hand-written scenario has.
func TestRediscoversTheLiterature(t *testing.T) {
	for _, r := range rediscoveries {
		t.Run(r.name, func(t *testing.T) {
			s := spec(t, r.faults, r.assume...)
			s.MaxSplitBrain = r.split
			res, _ := run(t, s, r.runs, 2)
			f := res.Finding(r.kind)
			require.NotNil(t, f, "no %s in %d runs", r.kind, r.runs)
			require.NotNil(t, f.Case)
			steps, _ := f.Case.Size()
			if r.scenario != "" {
				sc, err := scenarios.LookupScenario(r.scenario)
				require.NoError(t, err)
				assert.LessOrEqual(t, steps, len(sc.Steps), "%s has %d steps", r.scenario, len(sc.Steps))
			} else {
				assert.Zero(t, steps, "the drift alone breaks it")
			}
			t.Logf("%s: run %d, shrunk %d → %d faults in %d runs: %s", r.kind, f.FirstRun, f.FaultsBefore, steps, f.ShrinkRuns, f.Story)
		})
	}
}

// safeSets are Redlock's own assumptions, as searches: drift below the drift factor, stalls
// shorter than the ttl, no failover, and nodes that either keep their keys across a crash
// (aof-always) or stay down longer than the ttl (antirez's delayed restarts).
var safeSets = [][]string{
	{"persistence=aof-always", "node_clock_drift_ppm<=5000", "client_clock_drift_ppm<=5000", "node_pause_len<=500ms"},
	{"persistence=none", "node_down=11s..20s", "node_clock_drift_ppm<=5000", "client_clock_drift_ppm<=5000", "node_pause_len<=500ms"},
}

// TestSafeAssumptionsFindNoViolation: where Redlock's assumptions hold, search finds no
// safety violation, and says what that is worth: runs, acquisitions, and the 95 % upper
// bound on each rate.
func TestSafeAssumptionsFindNoViolation(t *testing.T) {
	for _, set := range safeSets {
		res, _ := run(t, spec(t, "crash_node,pause_node,drop", set...), 200, 2)
		assert.Empty(t, res.Findings, "%v", set)
		assert.Equal(t, 200, res.Runs)
		assert.Greater(t, res.Acquired, int64(1000))
		for _, k := range []string{"validity_overlap", "usage_overlap", "stale_write"} {
			up := res.UpperPer10k(k)
			assert.InDelta(t, 1e4*3/float64(res.Acquired), up, 1e4*0.1/float64(res.Acquired), "about 3/n: the rule of three")
		}
		var b strings.Builder
		require.NoError(t, res.WriteTable(&b))
		assert.Contains(t, b.String(), "no safety violation in 200 runs and ")
	}
}
