package experiments

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/sim"
)

// broken traces, when its event runs, a record of redis1 without its fields: a writer gone
// apart from its decoder.
type broken struct {
	s    *sim.Sim
	kind string
}

func (b broken) HandleEvent(sim.Time, int, uint64) { b.s.Trace("redis1", b.kind) }

// TestUndecodableRecordFailsTheRun: a record the report cannot decode shows in the
// narration and makes the run an error, so a test meets it; the
// record itself is still returned.
func TestUndecodableRecordFailsTheRun(t *testing.T) {
	sc, err := scenarios.LookupScenario("gc-pause")
	require.NoError(t, err)
	w, err := AssembleScenario(sc, nil, 1)
	require.NoError(t, err)
	_, err = w.Sim.Schedule(sim.Time(time.Millisecond), broken{w.Sim, redis.RecExec}, 0, 0)
	require.NoError(t, err)
	var trace bytes.Buffer
	rec, err := RunWorld(context.Background(), w, sc.Name, Options{Trace: &trace})
	assert.EqualError(t, err, `narrating the trace: trace record "exec" of redis1 at 1ms: no field "cmd"`)
	require.NotNil(t, rec)
	assert.Contains(t, trace.String(), "?? redis1                     UNDECODED exec")

	w, err = AssembleScenario(sc, nil, 1)
	require.NoError(t, err)
	_, err = w.Sim.Schedule(sim.Time(time.Millisecond), broken{w.Sim, redis.RecRestart}, 0, 0)
	require.NoError(t, err)
	var tl report.Timeline
	_, err = RunWorld(context.Background(), w, sc.Name, Options{Timeline: &tl})
	assert.EqualError(t, err, `drawing the timeline: trace record "restart" of redis1 at 1ms: no field "keys"`)
}
