package experiments

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// acquiredLines returns each client's acquired lines in a narrated trace.
func acquiredLines(trace string) map[string][]string {
	out := map[string][]string{}
	for _, l := range strings.Split(trace, "\n") {
		f := strings.Fields(l)
		if len(f) >= 4 && strings.HasPrefix(f[1], "client") && strings.Contains(l, " acquired resource=") {
			out[f[1]] = append(out[f[1]], l)
		}
	}
	return out
}

// hasLine reports whether a narrated trace has a line by actor that ends with text.
func hasLine(trace, actor, text string) bool {
	for _, l := range strings.Split(trace, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[1] == actor && strings.HasSuffix(l, text) {
			return true
		}
	}
	return false
}

// TestHybridTakesBothPaths runs hybrid-split: client1, cut off from two of the three
// Redis masters, takes the lock through ZooKeeper (acquired with reason escalated), and
// client2 through Redis, at the same time. Each message reads in its own protocol: the
// Redis masters' replies in redis-cli's words, the ensemble's requests in zkCli's.
func TestHybridTakesBothPaths(t *testing.T) {
	var trace bytes.Buffer
	rec, err := Run(context.Background(), "hybrid-split", nil, 1, Options{Trace: &trace})
	require.NoError(t, err)
	twoHolders(t, rec)
	acq := acquiredLines(trace.String())
	require.Len(t, acq["client1"], 1)
	require.Len(t, acq["client2"], 1)
	assert.Contains(t, acq["client1"][0], "reason=escalated", "client1 holds through ZooKeeper")
	assert.NotContains(t, acq["client2"][0], "reason=", "client2 holds through Redis")
	text := trace.String()
	assert.Contains(t, text, "← client1: create -e -s /lock/_c_", "client1's create, in zkCli's words")
	assert.True(t, hasLine(text, "client2", "← redis1: OK"), "a Redis master's reply, in redis-cli's words")
	assert.True(t, hasLine(text, "client1", "← redis3: OK"), "the one master client1 reaches is not a quorum")
	assert.True(t, hasLine(text, "client1", "← zk1: OK"), "a ZooKeeper ping's reply, in zkCli's words")
	assert.True(t, hasLine(text, "client2", "← redis3: (integer) 0"), "the same words, a Redis reply")
	assert.NotContains(t, text, "??", "every record decodes")

	// Without the cut, client2 loses the race on Redis to client1: Redlock's acquire is
	// given up all the same (no quorum, the masters refusing it) once its tries run out
	// within client1's hold, and client2 escalates to ZooKeeper, where the lock is free.
	// With tries enough to outlast the hold it waits on Redis instead.
	whole := func(tries string) (*Record, string) {
		sc := `name: hybrid-whole
story: nobody is cut off
knobs: {algorithm: hybrid, nodes: 3, clients: 2, tries: ` + tries + `, max_cycles: 1, hold: const(1s), duration: 8s}
start: {client1: 1s, client2: 1200ms}
`
		parsed, err := scenarios.ParseFile("hybrid-whole.yaml", []byte(sc))
		require.NoError(t, err)
		var tr bytes.Buffer
		rec, err := RunScenario(context.Background(), parsed, nil, 1, Options{Trace: &tr})
		require.NoError(t, err)
		return rec, tr.String()
	}
	rec, text = whole("2")
	assert.Positive(t, rec.Safety.ValidityOverlaps, "two holders, and no fault at all")
	assert.Positive(t, rec.Safety.UsageOverlaps)
	acq = acquiredLines(text)
	require.Len(t, acq["client2"], 1)
	assert.Contains(t, acq["client2"][0], "reason=escalated", "refused by client1's keys, client2 escalates")
	rec, text = whole("20")
	safeAndDone(t, rec, 2)
	assert.NotContains(t, text, "reason=escalated", "client2's tries outlast client1's hold")
}

// TestHybridArbiterSerializesThroughZooKeeper runs hybrid-arbiter: every client fails
// Redis, and each of the three holds through ZooKeeper in turn.
func TestHybridArbiterSerializesThroughZooKeeper(t *testing.T) {
	var trace bytes.Buffer
	rec, err := Run(context.Background(), "hybrid-arbiter", nil, 1, Options{Trace: &trace})
	require.NoError(t, err)
	safeAndDone(t, rec, 3)
	acq := acquiredLines(trace.String())
	for _, c := range []string{"client1", "client2", "client3"} {
		require.Len(t, acq[c], 1, c)
		assert.Contains(t, acq[c][0], "reason=escalated", c)
	}
}

// TestHybridWorldBuildsBothServices: a hybrid world has the Redis masters as groups at
// endpoints 0..N−1, the ensemble's servers after them (Servers and Processes: the
// ensemble's), then the storage; each client addresses all of them.
func TestHybridWorldBuildsBothServices(t *testing.T) {
	cfg := knobs.DefaultConfig()
	require.NoError(t, cfg.Apply([]knobs.KV{{Name: "algorithm", Value: "hybrid"}, {Name: "nodes", Value: "3"},
		{Name: "zk_servers", Value: "5"}, {Name: "clients", Value: "2"}}))
	w, err := world.Plan(cfg, 1)
	require.NoError(t, err)
	require.NoError(t, w.Build())
	require.Len(t, w.Groups, 3)
	for i, g := range w.Groups {
		assert.Equal(t, network.Endpoint(i), g.Endpoint())
	}
	require.Len(t, w.Servers, 5)
	for i, e := range w.Servers {
		assert.Equal(t, network.Endpoint(3+i), e)
		assert.Equal(t, "zk"+string(rune('1'+i)), w.Net.Name(e))
		require.NotNil(t, w.Processes[i])
	}
	assert.Equal(t, network.Endpoint(8), w.Storage.Endpoint())
	assert.Len(t, w.ClientCfgs[0].Nodes, 8)
	assert.Equal(t, 3, w.ServerIndex("zk4"))
	assert.Equal(t, -1, w.ServerIndex("redis1"), "Redis's masters are groups")
	assert.Equal(t, "resp+zookeeper", w.Protocol().Name())
}

// TestSplitProtocolTellsTheSidesByRequestID: RESP's "(integer) 0" and ZooKeeper's ping
// reply pack into the same payload; a hybrid world's trace tells them apart by the
// request id the first side's connection marks.
func TestSplitProtocolTellsTheSidesByRequestID(t *testing.T) {
	r := resp.Reply{Kind: resp.ReplyInt, Int: 0}.Payload()
	z := zk.Msg{Op: zk.OpPing}
	require.Equal(t, r, z.Payload(), "the two replies are the same words")
	p := model.SplitProtocol{A: resp.Protocol{}, B: zk.Protocol{}}
	asRESP := model.MessageText(&model.Message{Kind: model.MsgReply, ReqID: 7 | model.SplitReq, Body: r}, p)
	asZK := model.MessageText(&model.Message{Kind: model.MsgReply, ReqID: 7, Body: r}, p)
	assert.Equal(t, "(integer) 0", asRESP)
	assert.Equal(t, string(zk.Protocol{}.AppendReply(nil, &r)), asZK)
	assert.NotEqual(t, asRESP, asZK)
	assert.Equal(t, string(zk.Protocol{}.AppendPush(nil, &lock.Payload{Word: uint64(zk.OpEOF)})),
		model.MessageText(&model.Message{Kind: model.MsgPush, Body: lock.Payload{Word: uint64(zk.OpEOF)}}, p),
		"a push, on no request, is the ensemble's")
}

// TestHybridNodeFaultsReachBothServices: a scenario names a Redis node and a ZooKeeper
// server of a hybrid world alike, for process faults and clock steps (last is the last
// Redis node).
func TestHybridNodeFaultsReachBothServices(t *testing.T) {
	sc, err := scenarios.ParseFile("hybrid-faults.yaml", []byte(`name: hybrid-faults
story: node faults on both services
knobs: {algorithm: hybrid, nodes: 3, clients: 2, tries: 2, max_cycles: 1, hold: const(1s), duration: 8s}
start: {client1: 1s, client2: 1200ms}
schedule:
  - at: 500ms
    crash_node: {node: redis1, restart_after: 1s}
  - at: 500ms
    pause_node: {node: zk2, for: 1s}
  - at: 600ms
    clock_step: {node: zk3, by: 1h}
  - at: 600ms
    clock_step: {node: last, by: 1s}
`))
	require.NoError(t, err)
	var trace bytes.Buffer
	rec, err := RunScenario(context.Background(), sc, nil, 1, Options{Trace: &trace})
	require.NoError(t, err)
	text := trace.String()
	assert.Contains(t, text, "!! redis1    [wall 0.500s]    crash")
	assert.Contains(t, text, "!! zk2       [wall 0.500s]    pause")
	assert.Contains(t, text, "!! zk2       [wall 1.500s]    resume", "the pause's for")
	require.NotEmpty(t, rec.Violations)
	faults := strings.Join(rec.Violations[0].Faults, "\n")
	assert.Contains(t, faults, "zk3 wall clock jumped 1h0m0s")
	assert.Contains(t, faults, "redis3 wall clock jumped 1s")
}
