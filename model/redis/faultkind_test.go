package redis

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TestEveryFaultKindHasADescriptor holds every FaultKind below faultEnd to a filled
// descriptor: a kind added to the enum without its row in faultKinds fails here.
func TestEveryFaultKindHasADescriptor(t *testing.T) {
	names, records, actions := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for k := FaultKind(1); k < faultEnd; k++ {
		d, ok := k.Desc()
		require.True(t, ok, "kind %d", k)
		assert.Equal(t, k, d.Kind)
		require.NotEmpty(t, d.Name, "kind %d has no descriptor in faultKinds", k)
		assert.NotEmpty(t, d.Record, "%s: no record", d.Name)
		assert.True(t, d.Effect.Valid(), "%s: effect %d", d.Name, d.Effect)
		assert.Equal(t, d.Name, k.String())
		assert.False(t, names[d.Name], "%s: two kinds of one name", d.Name)
		assert.False(t, records[d.Record], "%s: record %q is another kind's", d.Name, d.Record)
		assert.False(t, d.Action != "" && actions[d.Action], "%s: action %q is another kind's", d.Name, d.Action)
		names[d.Name], records[d.Record], actions[d.Action] = true, true, true
		byRecord, ok := FaultByRecord(d.Record)
		assert.True(t, ok && byRecord == d, "%s: FaultByRecord(%q)", d.Name, d.Record)
		assert.Equal(t, d.Effect == EffectStop || d.Effect == EffectStall, d.Lasts(), d.Name)
	}
	assert.Len(t, FaultKinds(), int(faultEnd)-1)
	assert.Len(t, NodeFaultRecords(), int(faultEnd)-1, "one record for each kind")
	assert.Equal(t, []string{"crash", "kill", "shutdown", RecRestart, RecPause, RecResume, RecFailover},
		NodeFaultRecords()[:7], "the records of the first kinds, which traces and golden files spell")
	for _, k := range []FaultKind{0, faultEnd} {
		_, ok := k.Desc()
		assert.False(t, ok, "kind %d", k)
	}
	assert.Equal(t, "fault("+strconv.Itoa(int(faultEnd))+")", faultEnd.String())
	_, ok := FaultByRecord(RecExec)
	assert.False(t, ok, "an exec is no fault")
}

// TestGroupAppliesEveryFaultKindByItsEffect applies each kind to the master of a group of
// two and checks what its effect promises: the node's state while it lasts and after, the
// one record it writes, and for HostDown and NeedsReplica what they say.
func TestGroupAppliesEveryFaultKindByItsEffect(t *testing.T) {
	kindWith := func(e FaultEffect) FaultKind {
		for _, d := range FaultKinds() {
			if d.Effect == e {
				return d.Kind
			}
		}
		t.Fatalf("no kind has effect %d", e)
		return 0
	}
	for _, d := range FaultKinds() {
		t.Run(d.Name, func(t *testing.T) {
			w := newWorld(t, 1, fast)
			g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}}})
			m := g.Node(0)
			switch d.Effect { // what a fault that ends something needs to end
			case EffectStart:
				require.NoError(t, g.At(0, Fault{Kind: kindWith(EffectStop), Node: 0, Forever: true}))
			case EffectThaw:
				require.NoError(t, g.At(0, Fault{Kind: kindWith(EffectStall), Node: 0, Forever: true}))
			}
			before := len(w.grep(" " + d.Record + " "))
			require.NoError(t, g.At(sim.Time(10*ms), Fault{Kind: d.Kind, Node: 0, For: 20 * ms}))
			w.run(15 * ms)
			assert.Len(t, w.grep(" "+d.Record+" "), before+1, "one %s record: %q", d.Record, w.lines)
			switch d.Effect {
			case EffectStop:
				assert.False(t, m.Up(), "down while it lasts")
				assert.Equal(t, !d.HostDown, m.refusing, "a host that stays up refuses connections")
				w.run(40 * ms)
				assert.True(t, m.Up(), "restarted For later")
			case EffectStart:
				assert.True(t, m.Up())
			case EffectStall:
				assert.True(t, m.Up() && m.Paused(), "paused while it lasts")
				w.run(40 * ms)
				assert.False(t, m.Paused(), "resumed For later")
			case EffectThaw:
				assert.False(t, m.Paused())
			case EffectPromote:
				assert.True(t, g.Node(1).IsMaster(), "the replica is master")
			default:
				t.Fatalf("effect %d has no case here: say what it does to a node, then add one", d.Effect)
			}
			if d.NeedsReplica {
				one := w.group(GroupConfig{Name: "alone", Nodes: []NodeConfig{{}}})
				assert.ErrorContains(t, one.At(0, Fault{Kind: d.Kind}), "a group with a replica")
			}
		})
	}
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}}})
	assert.ErrorContains(t, g.At(0, Fault{Kind: faultEnd}), "{crash, kill, shutdown, restart, pause, resume, failover", "every kind's name")
}

// TestEveryServerNeutralKindIsARedisKind holds Redis's table to model's: every kind any
// server can suffer is a Redis kind whose descriptor copies model's, and Redis's own kinds
// (a failover) name no neutral kind. A kind added to model.FaultKinds without its row here
// fails.
func TestEveryServerNeutralKindIsARedisKind(t *testing.T) {
	for _, m := range model.FaultKinds() {
		k, ok := KindOf(m.Kind)
		require.True(t, ok, "%s has no Redis kind: give it a row in faultKinds", m.Name)
		d, _ := k.Desc()
		assert.Equal(t, FaultDesc{Kind: k, Name: m.Name, Record: m.Record, Effect: m.Effect, HostDown: m.HostDown,
			Action: m.Action, Process: m.Kind}, d)
		byRecord, ok := model.FaultByRecord(d.Record)
		assert.True(t, ok && byRecord == m, "%s: model.FaultByRecord(%q)", d.Name, d.Record)
	}
	d, _ := FaultFailover.Desc()
	assert.Zero(t, d.Process, "a failover is Redis's own")
	_, ok := KindOf(0)
	assert.False(t, ok)
	_, ok = model.FaultByRecord(RecFailover)
	assert.False(t, ok, "no server but a Redis group fails over")
}

// TestNodeIsAServerProcess drives a node through model.ServerProcess, as the world drives
// any service's server: each method does what its Redis namesake does, and a stop of
// another kind than a stop does nothing.
func TestNodeIsAServerProcess(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}}})
	var p model.ServerProcess = g.Node(0)
	p.Stop(0, model.FaultPause)
	assert.True(t, p.Up(), "a pause is no stop")
	p.Stop(0, model.FaultKill)
	assert.False(t, p.Up())
	assert.True(t, g.Node(0).refusing, "a kill leaves the host up")
	p.Start(0)
	assert.True(t, p.Up())
	p.Stall(0)
	assert.True(t, p.Paused())
	p.Thaw(0)
	assert.False(t, p.Paused())
	assert.Len(t, w.grep(" kill "), 1)
	assert.Len(t, w.grep(" "+RecRestart+" "), 1)
	assert.Len(t, w.grep(" "+RecPause+" "), 1)
	assert.Len(t, w.grep(" "+RecResume+" "), 1)
}
