package world

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// config returns the default knobs with settings applied.
func config(t *testing.T, settings ...knobs.KV) knobs.Config {
	t.Helper()
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Apply(settings))
	return cfg
}

// plan plans a world for seed from the default knobs with settings applied.
func plan(t *testing.T, seed uint64, settings ...knobs.KV) *World {
	t.Helper()
	w, err := Plan(config(t, settings...), seed)
	require.NoError(t, err)
	return w
}

// TestPlanEndpoints: endpoints are numbered as World's comment says, the groups first (in
// order, redis1..redisN), then the storage, then the clients (client1..clientM); every
// client's plan addresses exactly those nodes and that storage, and Build gives each actor
// the endpoint its plan promised.
func TestPlanEndpoints(t *testing.T) {
	w := plan(t, 1, knobs.KV{Name: "nodes", Value: "3"}, knobs.KV{Name: "clients", Value: "2"})
	require.Len(t, w.GroupCfgs, 3)
	require.Len(t, w.ClientCfgs, 2)
	for i, g := range w.GroupCfgs {
		assert.Equal(t, "redis"+string(rune('1'+i)), g.Name)
	}
	for j, cc := range w.ClientCfgs {
		assert.Equal(t, "client"+string(rune('1'+j)), cc.Name)
		assert.Equal(t, []network.Endpoint{0, 1, 2}, cc.Nodes, cc.Name)
		assert.Equal(t, network.Endpoint(3), cc.Storage, cc.Name)
	}
	// Each client starts on its own resource; with one resource, all start on "lock".
	assert.Equal(t, []string{"lock"}, w.Resources)

	require.NoError(t, w.Build())
	require.Equal(t, 6, w.Net.Endpoints())
	want := []string{"redis1", "redis2", "redis3", "storage", "client1", "client2"}
	for e, name := range want {
		assert.Equal(t, name, w.Net.Name(network.Endpoint(e)), "endpoint %d", e)
		assert.Equal(t, network.Endpoint(e), w.Endpoint(name))
	}
	for j, c := range w.Clients {
		assert.Equal(t, network.Endpoint(4+j), c.Endpoint())
	}
	assert.Equal(t, network.Endpoint(-1), w.Endpoint("redis4"))
	assert.Same(t, w.Groups[1], w.Group("redis2"))
	assert.Nil(t, w.Group("redis4"))
	assert.Same(t, w.Clients[1], w.Client("client2"))
	assert.Nil(t, w.Client("client3"))
}

// TestPlanResourcesRoundRobin: with K resources the keys are lock1..lockK and client j
// starts on its own resource, then goes round.
func TestPlanResourcesRoundRobin(t *testing.T) {
	w := plan(t, 1, knobs.KV{Name: "clients", Value: "3"}, knobs.KV{Name: "resources", Value: "2"})
	assert.Equal(t, []string{"lock1", "lock2"}, w.Resources)
	assert.Equal(t, []string{"lock1", "lock2"}, w.ClientCfgs[0].Resources)
	assert.Equal(t, []string{"lock2", "lock1"}, w.ClientCfgs[1].Resources)
	assert.Equal(t, []string{"lock1", "lock2"}, w.ClientCfgs[2].Resources)
}

// TestPlanReplicaNames: with replicas, a group's nodes are redis1.0 (the first master),
// redis1.1, ...; the group keeps one endpoint and fails over after failover_after.
func TestPlanReplicaNames(t *testing.T) {
	w := plan(t, 1, knobs.KV{Name: "nodes", Value: "3"}, knobs.KV{Name: "replicas", Value: "1"},
		knobs.KV{Name: "failover_after", Value: "2s"})
	require.Len(t, w.GroupCfgs, 3)
	assert.Len(t, w.GroupCfgs[0].Nodes, 2)
	assert.Equal(t, 2*time.Second, w.GroupCfgs[0].FailoverAfter)
	require.NoError(t, w.Build())
	assert.Equal(t, "redis1.0", w.Groups[0].Node(0).Name())
	assert.Equal(t, "redis1.1", w.Groups[0].Node(1).Name())
	assert.Equal(t, "storage", w.Net.Name(3), "replicas take no endpoint of their own")
}

// clocky are knobs under which every process draws a clock of its own, nodes draw jumps
// and clients draw start times: all the draws the plan makes.
var clocky = []knobs.KV{
	{Name: "nodes", Value: "3"},
	{Name: "node_clock_drift_ppm", Value: "200"}, {Name: "node_clock_offset", Value: "50ms"},
	{Name: "node_clock_jump_rate", Value: "0.5"}, {Name: "duration", Value: "20s"},
	{Name: "client_clock_drift_ppm", Value: "300"}, {Name: "client_clock_offset", Value: "20ms"},
	{Name: "start_spread", Value: "1s"},
}

// TestStreamsPerComponent: every draw comes from a stream named after its component, so
// a third client leaves every node's clock (drift, offset, jumps) and the first two
// clients' clocks and start times exactly as they were; another seed changes them, so the
// comparison can fail.
func TestStreamsPerComponent(t *testing.T) {
	two := plan(t, 7, append(clocky, knobs.KV{Name: "clients", Value: "2"})...)
	three := plan(t, 7, append(clocky, knobs.KV{Name: "clients", Value: "3"})...)
	require.Len(t, three.ClientCfgs, 3)

	assert.Equal(t, two.GroupCfgs, three.GroupCfgs, "a third client changed a node's draws")
	for j := range two.ClientCfgs {
		assert.Equal(t, two.ClientCfgs[j].Clock, three.ClientCfgs[j].Clock, "client%d's clock", j+1)
		assert.Equal(t, two.ClientCfgs[j].StartAt, three.ClientCfgs[j].StartAt, "client%d's start", j+1)
	}

	// The draws are real: non-zero, different per node, and different under another seed.
	n1, n2 := two.GroupCfgs[0].Nodes[0].Clock, two.GroupCfgs[1].Nodes[0].Clock
	assert.NotZero(t, n1.DriftPPM)
	assert.NotZero(t, n1.Offset)
	assert.LessOrEqual(t, n1.Offset.Abs(), 50*time.Millisecond)
	assert.NotEqual(t, n1, n2, "two nodes drew the same clock")
	other := plan(t, 8, append(clocky, knobs.KV{Name: "clients", Value: "2"})...)
	assert.NotEqual(t, two.GroupCfgs[0].Nodes[0].Clock, other.GroupCfgs[0].Nodes[0].Clock)
	assert.NotEqual(t, two.ClientCfgs[0].Clock, other.ClientCfgs[0].Clock)

	// With rate 0.5/s over 20 s, each node jumps; the jumps are forward steps inside the run.
	jumps := 0
	for _, g := range two.GroupCfgs {
		for _, s := range g.Nodes[0].Clock.Steps {
			jumps++
			assert.GreaterOrEqual(t, s.At, sim.Time(0))
			assert.Less(t, s.At, sim.Time(20*time.Second))
		}
	}
	assert.Positive(t, jumps)
}

// TestBuildOnce: a world is built once; a second Build is an error and adds no actors.
func TestBuildOnce(t *testing.T) {
	w := plan(t, 1, knobs.KV{Name: "clients", Value: "2"})
	assert.False(t, w.Built())
	require.NoError(t, w.Build())
	assert.True(t, w.Built())
	groups, clients := len(w.Groups), len(w.Clients)
	assert.EqualError(t, w.Build(), "world already built")
	assert.Len(t, w.Groups, groups)
	assert.Len(t, w.Clients, clients)
}

// TestNodeFaultNotes: a fault scheduled with NodeFault is named, with its start and (for a
// fault that lasts) its end, in the list of faults describeFaults gives for any window it
// overlaps, and not for a window it does not.
func TestNodeFaultNotes(t *testing.T) {
	w := plan(t, 1, knobs.KV{Name: "nodes", Value: "3"}, knobs.KV{Name: "replicas", Value: "1"})
	require.NoError(t, w.Build())
	g1, g2, g3 := w.Group("redis1"), w.Group("redis2"), w.Group("redis3")
	require.NoError(t, w.NodeFault(g1, sim.Time(time.Second), redis.Fault{Kind: redis.FaultCrash, Node: redis.CurrentMaster, For: 2 * time.Second}))
	require.NoError(t, w.NodeFault(g2, sim.Time(4*time.Second), redis.Fault{Kind: redis.FaultPause, Node: 1, For: 500 * time.Millisecond}))
	require.NoError(t, w.NodeFault(g3, sim.Time(5*time.Second), redis.Fault{Kind: redis.FaultFailover, Node: redis.CurrentMaster}))
	require.NoError(t, w.NodeFault(g3, sim.Time(6*time.Second), redis.Fault{Kind: redis.FaultKill, Node: redis.CurrentMaster, Forever: true}))

	assert.Equal(t, []string{
		"redis1 crash at 1s until 3s",
		"redis2.1 pause at 4s until 4.5s",
		"redis3 failover at 5s until 5s",
		"redis3 kill at 6s",
	}, w.describeFaults(0, sim.Time(10*time.Second)))
	assert.Equal(t, []string{"redis1 crash at 1s until 3s"}, w.describeFaults(sim.Time(2*time.Second), sim.Time(3*time.Second)))
	assert.Equal(t, []string{"redis3 kill at 6s"}, w.describeFaults(sim.Time(7*time.Second), sim.Time(8*time.Second)),
		"a fault that lasts for ever is in every later window")
	assert.Empty(t, w.describeFaults(sim.Time(3500*time.Millisecond), sim.Time(3900*time.Millisecond)))
}

// TestWithAlgorithm: an algorithm the registry lacks is unknown to Plan, with an error
// naming the knob and the value; WithAlgorithm makes it nameable, and the world's clients
// are built from its factory.
func TestWithAlgorithm(t *testing.T) {
	made := 0
	extra := knobs.Algorithm{Name: "redlock-twin", Help: "Redlock under another name",
		New: func(cfg *knobs.Config) (lock.Factory, error) {
			made++
			return redlock.Factory(cfg.Lock)
		}}
	cfg := config(t, knobs.KV{Name: "clients", Value: "2"})
	cfg.Algorithm = extra.Name

	_, err := Plan(cfg, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "algorithm = redlock-twin: not a known value")
	assert.Zero(t, made)

	w, err := Plan(cfg, 1, WithAlgorithm(extra))
	require.NoError(t, err)
	assert.Equal(t, 1, made, "the factory is made once per world")
	for _, cc := range w.ClientCfgs {
		assert.NotNil(t, cc.Lock, cc.Name)
	}
	require.NoError(t, w.Build())
	require.NoError(t, w.Sim.RunUntil(sim.Time(time.Second)))
	w.Oracle.Finish(sim.Time(time.Second))
	n := w.Oracle.Counts()
	assert.Positive(t, n.Acquired, "the extra algorithm's clients lock")
	assert.Zero(t, n.ValidityOverlaps)
}
