package experiments

import (
	"context"
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKnobAndRunKnobsForTheSweepEngine(t *testing.T) {
	v, err := Knob("scenario", "gc-pause")
	require.NoError(t, err)
	assert.Equal(t, "gc-pause", v)
	_, err = Knob("scenario", "gc")
	var ue *knobs.UnknownError
	require.ErrorAs(t, err, &ue)
	v, err = Knob("ttl", "1000ms")
	require.NoError(t, err)
	assert.Equal(t, "1s", v)

	rec, err := RunKnobs(context.Background(), []knobs.KV{{Name: "ttl", Value: "2s"}, {Name: "scenario", Value: "gc-pause"}}, 1)
	require.NoError(t, err)
	assert.Equal(t, "gc-pause", rec.Scenario)
	assert.Equal(t, "2s", rec.Config.Get("ttl"), "knobs override the scenario wherever it appears")

	cols := Columns()
	ms := rec.Metrics()
	require.Len(t, ms, len(cols))
	for i := range cols {
		assert.Equal(t, cols[i].Name, ms[i].Name)
		assert.Equal(t, cols[i].Kind, ms[i].Kind)
	}
	names := map[string]bool{}
	for _, c := range cols {
		names[c.Name] = true
	}
	for _, n := range []string{"trace_hash", "any_validity_overlap", "any_usage_overlap", "any_stale_write",
		"acquire_latency_p99_ms", "split_brain_rounds", "acquisitions_per_s"} {
		assert.True(t, names[n], n)
	}
	assert.False(t, names["wall_time_s"], "wall time varies between replays")
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, "baseline", nil, 1, Options{})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestWorldDrawsClocksPerProcess(t *testing.T) {
	c := knobs.DefaultConfig()
	require.NoError(t, c.Apply([]knobs.KV{{Name: "node_clock_drift_ppm", Value: "100"}, {Name: "client_clock_drift_ppm", Value: "100"},
		{Name: "node_clock_jump_rate", Value: "1"}, {Name: "duration", Value: "10s"}}))
	w, err := world.Plan(c, 5)
	require.NoError(t, err)
	drifts := map[float64]bool{}
	for _, g := range w.GroupCfgs {
		n := g.Nodes[0]
		assert.LessOrEqual(t, n.Clock.DriftPPM, 100.0)
		assert.GreaterOrEqual(t, n.Clock.DriftPPM, -100.0)
		drifts[n.Clock.DriftPPM] = true
		for _, s := range n.Clock.Steps {
			assert.Less(t, s.At, sim.Time(10*time.Second))
			assert.Equal(t, time.Second, s.By)
		}
	}
	assert.Len(t, drifts, 5, "each node draws its own drift")
	// Adding a client changes no node's draws.
	c2 := c
	c2.Clients++
	w2, err := world.Plan(c2, 5)
	require.NoError(t, err)
	assert.Equal(t, w.GroupCfgs, w2.GroupCfgs)
	assert.Equal(t, w.ClientCfgs[0].Clock, w2.ClientCfgs[0].Clock)
}

// TestFailoverVariantImpliesReplica checks that variant=single-instance-failover alone runs
// one master with a promotable replica, not a plain single instance, and that
// failover_after=0 (never promote) is refused with it.
func TestFailoverVariantImpliesReplica(t *testing.T) {
	c := knobs.DefaultConfig()
	require.NoError(t, c.Apply([]knobs.KV{{Name: "variant", Value: "single-instance-failover"}}))
	w, err := world.Plan(c, 1)
	require.NoError(t, err)
	require.Len(t, w.GroupCfgs, 1)
	assert.Len(t, w.GroupCfgs[0].Nodes, 2)
	assert.Equal(t, c.FailoverAfter, w.GroupCfgs[0].FailoverAfter)

	require.NoError(t, c.Apply([]knobs.KV{{Name: "replicas", Value: "2"}}))
	w, err = world.Plan(c, 1)
	require.NoError(t, err)
	assert.Len(t, w.GroupCfgs[0].Nodes, 3)

	c.FailoverAfter = 0
	var pe *sim.ParamError
	require.ErrorAs(t, c.Validate(), &pe)
	assert.Equal(t, "failover_after", pe.Param)
}
