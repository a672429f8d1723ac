package experiments

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
)

const ms = time.Millisecond

// TestEveryFaultIsDrawnAndNarrated runs a world in which every node fault the model can
// write a record for (model.NodeFaultRecords: each kind that lasts is scheduled, and ends),
// a network partition and clog, and a client's pause and crash all happen, then checks
// that the timeline draws each as its effect says and the narrated trace marks each as a
// fault ("!!"). A node fault whose effect has no case here fails the test, so a new fault
// cannot go undrawn or unnarrated.
func TestEveryFaultIsDrawnAndNarrated(t *testing.T) {
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Apply([]knobs.KV{{Name: "nodes", Value: "3"}, {Name: "replicas", Value: "1"},
		{Name: "failover_after", Value: "200ms"}, {Name: "duration", Value: "3s"}, {Name: "clients", Value: "2"}}))
	w, err := world.Plan(cfg, 1)
	require.NoError(t, err)
	require.NoError(t, w.Build())
	at := func(d time.Duration) sim.Time { return sim.Time(d) }
	master := redis.CurrentMaster
	i := 0
	for _, d := range redis.FaultKinds() { // crash, kill, shutdown and pause, 100ms each
		if d.Lasts() {
			g := w.Groups[i%len(w.Groups)]
			require.NoError(t, w.NodeFault(g, at(200*ms+time.Duration(i)*100*ms), redis.Fault{Kind: d.Kind, Node: master, For: 100 * ms}))
			i++
		}
	}
	// The master of group 0 dies for good at 1.2s: its replica is promoted 200ms later.
	require.NoError(t, w.NodeFault(w.Groups[0], at(1200*ms), redis.Fault{Kind: redis.FaultCrash, Node: master, Forever: true}))
	require.NoError(t, w.Net.At(at(1600*ms), network.IsolateFault(w.Endpoint("client2"), 100*ms)))
	require.NoError(t, w.Net.At(at(1800*ms), network.ClogFault(w.Endpoint("client1"), w.Endpoint("redis2"), 50*ms)))
	require.NoError(t, w.Do(at(2000*ms), func(sim.Time) { w.Client("client1").PauseNow(100 * ms) }))
	require.NoError(t, w.Do(at(2500*ms), func(sim.Time) { w.Client("client2").CrashNow() }))

	var trace strings.Builder
	var tl report.Timeline
	_, err = RunWorld(context.Background(), w, "every-fault", Options{Trace: &trace, Timeline: &tl})
	require.NoError(t, err)
	faultLines := []string{}
	for _, l := range strings.Split(trace.String(), "\n") {
		if strings.Contains(l, "!!") {
			faultLines = append(faultLines, l)
		}
	}
	narrated := func(what string) bool {
		for _, l := range faultLines {
			if strings.Contains(l, what) {
				return true
			}
		}
		return false
	}
	var marks []report.Mark
	paused := 0
	for _, n := range tl.Nodes {
		marks = append(marks, n.Marks...)
		paused += len(n.Paused)
	}
	marked := func(kind, text string) bool {
		for _, m := range marks {
			if m.Kind == kind && strings.HasPrefix(m.Text, text) {
				return true
			}
		}
		return false
	}

	drawn := map[redis.FaultEffect]func(d redis.FaultDesc) bool{
		redis.EffectStop:    func(d redis.FaultDesc) bool { return marked(report.MarkCrash, d.Record) },
		redis.EffectStart:   func(redis.FaultDesc) bool { return marked(report.MarkRestart, "restart") },
		redis.EffectStall:   func(redis.FaultDesc) bool { return paused > 0 },
		redis.EffectThaw:    func(redis.FaultDesc) bool { return paused > 0 && allClosed(tl.Nodes) },
		redis.EffectPromote: func(redis.FaultDesc) bool { return marked(report.MarkFailover, "promoted") },
	}
	assert.Len(t, redis.NodeFaultRecords(), len(redis.FaultKinds()))
	for _, d := range redis.FaultKinds() {
		check, ok := drawn[d.Effect]
		require.True(t, ok, "node fault %s's effect %d has no case in this test: draw and narrate it, then add one", d.Name, d.Effect)
		assert.True(t, check(d), "node fault %q is not drawn on the timeline", d.Record)
		assert.True(t, narrated(" "+d.Record), "node fault %q is not narrated as a fault line", d.Record)
	}
	kinds := map[string]bool{}
	for _, f := range tl.NetFaults {
		kinds[f.Kind] = true
	}
	for _, k := range []network.FaultKind{network.FaultIsolate, network.FaultClog} {
		assert.True(t, kinds[k.String()], "network fault %v is not drawn", k)
		assert.True(t, narrated(k.String()), "network fault %v is not narrated", k)
	}
	c1, c2 := tl.Clients[0], tl.Clients[1]
	assert.NotEmpty(t, c1.Pauses, "a client's pause is drawn")
	assert.True(t, narrated("client1") && narrated("pause for="), "a client's pause is narrated")
	assert.Contains(t, c2.Marks, report.Mark{At: 2500 * ms, Kind: report.MarkCrash, Text: "crash"}, "a client's crash is drawn")
	assert.True(t, narrated("client2") && narrated("crash"), "a client's crash is narrated")
}

// allClosed reports whether every pause span on the node lanes has ended.
func allClosed(nodes []report.NodeLane) bool {
	for _, n := range nodes {
		for _, p := range n.Paused {
			if p.To < 0 {
				return false
			}
		}
	}
	return true
}
