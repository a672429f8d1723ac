package world

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TestNodeFaultNotesEveryKindForItsSpan schedules each process fault kind with NodeFault
// and reads the violation report's description of the faults: a fault that lasts is noted
// from its start to its end (or with no end when it lasts for good), any other at its
// instant only, and a fault is named by its kind's name after its node's. (A restart or a
// resume was once noted as lasting for good.)
func TestNodeFaultNotesEveryKindForItsSpan(t *testing.T) {
	const ms = time.Millisecond
	at := sim.Time(100 * ms)
	for _, d := range redis.FaultKinds() {
		for _, forever := range []bool{false, true} {
			cfg := knobs.DefaultConfig()
			require.NoError(t, cfg.Apply([]knobs.KV{{Name: "nodes", Value: "1"}, {Name: "replicas", Value: "1"}}))
			w, err := Plan(cfg, 1)
			require.NoError(t, err)
			require.NoError(t, w.Build())
			require.NoError(t, w.NodeFault(w.Groups[0], at, redis.Fault{Kind: d.Kind, Node: redis.CurrentMaster, For: 50 * ms, Forever: forever}))
			var want string
			var ends sim.Time
			switch {
			case d.Lasts() && forever:
				want, ends = "redis1 "+d.Name+" at 100ms", sim.Never
			case d.Lasts():
				want, ends = "redis1 "+d.Name+" at 100ms until 150ms", sim.Time(150*ms)
			default: // an instant, printed as a span of none, as a failover always was
				want, ends = "redis1 "+d.Name+" at 100ms until 100ms", at
			}
			assert.Contains(t, w.describeFaults(0, sim.Time(time.Second)), want, "%s, forever %v", d.Name, forever)
			assert.Contains(t, w.describeFaults(at, at), want, "%s: noted at its start", d.Name)
			assert.NotContains(t, w.describeFaults(0, at-1), want, "%s: not before it", d.Name)
			if ends != sim.Never {
				assert.NotContains(t, w.describeFaults(ends+1, sim.Time(time.Second)), want, "%s: not after it ends", d.Name)
			} else {
				assert.Contains(t, w.describeFaults(sim.Time(time.Hour), sim.Time(time.Hour)), want, "%s: for good", d.Name)
			}
		}
	}
}
