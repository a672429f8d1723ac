package plots

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/model/redis"
)

// TestTimelineDrawsEveryFaultKind runs, from the descriptors alone, each process fault that
// has a scenario action on its own node at 0.5s (one that lasts, for 300ms), and checks
// that the figure draws each kind in its lane as its effect says: a down band and a mark
// named by its record, a restart mark, a paused band, the band's end, a promotion. A kind
// with a known effect needs nothing here; a new effect needs its case.
func TestTimelineDrawsEveryFaultKind(t *testing.T) {
	var steps strings.Builder
	n := 0
	for _, d := range redis.FaultKinds() {
		if d.Action == "" {
			continue
		}
		n++
		arg := map[redis.FaultEffect]string{redis.EffectStop: ", restart_after: 300ms", redis.EffectStall: ", for: 300ms"}[d.Effect]
		fmt.Fprintf(&steps, "  - at: 500ms\n    %s: {node: redis%d%s}\n", d.Action, n, arg)
	}
	sc, err := scenarios.ParseFile("every-fault-kind.yaml", []byte(fmt.Sprintf("name: every-fault-kind\nstory: s\n"+
		"knobs:\n  nodes: %d\n  replicas: 1\n  duration: 2s\nschedule:\n%s", n, steps.String())))
	require.NoError(t, err)
	var tl report.Timeline
	_, err = experiments.RunScenario(context.Background(), sc, nil, 1, experiments.Options{Timeline: &tl})
	require.NoError(t, err)
	L := layoutTimeline(&tl, report.Span{From: 0, To: tl.Duration}, "")

	has := func(k shapeKind, label string, x0, x1 float64) bool {
		for _, s := range shapesOf(L, k, "") {
			if (label == "" || s.Label == label) && s.X0 == x0 && (x1 < 0 || s.X1 == x1) {
				return true
			}
		}
		return false
	}
	for _, d := range redis.FaultKinds() {
		var ok bool
		switch d.Effect {
		case redis.EffectStop:
			ok = has(shDown, "down", 0.5, 0.8) && has(shCrash, d.Record, 0.5, -1)
		case redis.EffectStart:
			ok = has(shRestart, "", 0.8, -1)
		case redis.EffectStall:
			ok = has(shNodePaused, "paused", 0.5, -1)
		case redis.EffectThaw:
			ok = has(shNodePaused, "paused", 0.5, 0.8)
		case redis.EffectPromote:
			ok = has(shFailover, "promoted", 0.5, -1)
		default:
			t.Fatalf("%s: effect %d has no case here: say how the figure draws it", d.Name, d.Effect)
		}
		assert.True(t, ok, "%s (effect %d) is not drawn as its effect says", d.Name, d.Effect)
	}
}
