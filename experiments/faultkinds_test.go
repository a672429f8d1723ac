package experiments

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/model/redis"
)

// everyFaultScenario is a scenario file written from the descriptors alone: each process
// fault that has a scenario action hits its own node's master at 0.5s, a fault that lasts
// for 300ms. Every node has a replica (for a failover) that is never promoted by itself
// (failover_after is 5s). A kind whose effect the test does not know fails it.
func everyFaultScenario(t *testing.T) string {
	var steps strings.Builder
	n := 0
	for _, d := range redis.FaultKinds() {
		if d.Action == "" {
			continue
		}
		n++
		arg := ""
		switch d.Effect {
		case redis.EffectStop:
			arg = ", restart_after: 300ms"
		case redis.EffectStall:
			arg = ", for: 300ms"
		case redis.EffectStart, redis.EffectThaw, redis.EffectPromote:
		default:
			t.Fatalf("%s: effect %d has no case here: give its action's arguments", d.Name, d.Effect)
		}
		fmt.Fprintf(&steps, "  - at: 500ms\n    %s: {node: redis%d%s}\n", d.Action, n, arg)
	}
	return fmt.Sprintf("name: every-fault-kind\nstory: each process fault once\n"+
		"knobs:\n  nodes: %d\n  replicas: 1\n  duration: 2s\nschedule:\n%s", n, steps.String())
}

// TestEveryFaultKindReachesEveryConsumer walks model.FaultKinds: each kind's scenario
// action parses to it, and in a run of them all each kind's record is written, narrated as
// a fault line and drawn on the timeline as its effect says (a down span and a mark, a
// restart mark, a paused span, its end, a promotion). A kind added with a descriptor and
// its model code needs nothing else for this test to pass; a new effect needs its case.
func TestEveryFaultKindReachesEveryConsumer(t *testing.T) {
	sc, err := scenarios.ParseFile("every-fault-kind.yaml", []byte(everyFaultScenario(t)))
	require.NoError(t, err)
	var parsed []redis.FaultKind
	for _, st := range sc.Steps {
		d, ok := st.Action.NodeFault()
		require.True(t, ok, "%s is a node fault's action", st.Action.Kind)
		assert.Equal(t, st.Action.Kind, d.Action)
		parsed = append(parsed, d.Kind)
	}
	var trace strings.Builder
	var tl report.Timeline
	_, err = RunScenario(context.Background(), sc, nil, 1, Options{Trace: &trace, Timeline: &tl})
	require.NoError(t, err)

	const at, end = 500 * ms, 800 * ms
	var marks []report.Mark
	var down, paused []report.Span
	for _, n := range tl.Nodes {
		marks = append(marks, n.Marks...)
		down = append(down, n.Down...)
		paused = append(paused, n.Paused...)
	}
	marked := func(kind, text string, when ...report.Span) bool {
		for _, m := range marks {
			if m.Kind == kind && strings.HasPrefix(m.Text, text) && (len(when) == 0 || m.At == when[0].From) {
				return true
			}
		}
		return false
	}
	span := report.Span{From: at, To: end}
	for _, d := range redis.FaultKinds() {
		if d.Action != "" {
			assert.Contains(t, parsed, d.Kind, "%s: its action %s is in the schedule", d.Name, d.Action)
		}
		assert.Contains(t, trace.String(), " "+d.Record, "%s: no step wrote its record %q; give the kind an action", d.Name, d.Record)
		narrated := false
		for _, l := range strings.Split(trace.String(), "\n") {
			narrated = narrated || strings.Contains(l, "!!") && strings.Contains(l, " "+d.Record)
		}
		assert.True(t, narrated, "%s: its record is not narrated as a fault line", d.Name)
		switch d.Effect {
		case redis.EffectStop:
			assert.Contains(t, down, span, "%s: a down span while it lasts", d.Name)
			assert.True(t, marked(report.MarkCrash, d.Record, span), "%s: a mark where it begins", d.Name)
		case redis.EffectStart:
			assert.True(t, marked(report.MarkRestart, "restart", report.Span{From: end}), "%s: a mark where the node restarts", d.Name)
		case redis.EffectStall:
			assert.Contains(t, paused, span, "%s: a paused span while it lasts", d.Name)
		case redis.EffectThaw:
			assert.Contains(t, paused, span, "%s: the paused span ends where the node resumes", d.Name)
		case redis.EffectPromote:
			assert.True(t, marked(report.MarkFailover, "promoted", span), "%s: a mark on the promoted node", d.Name)
		default:
			t.Fatalf("%s: effect %d has no case here: say how the timeline draws it", d.Name, d.Effect)
		}
	}
}
