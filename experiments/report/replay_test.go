package report

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/sim"
)

// replay runs a built-in scenario for seed 1 one event at a time, as the viewer's runs
// are, collecting its replay.
func replay(t *testing.T, name string) (*Replay, *clientEvents) {
	t.Helper()
	w := scenarioWorld(t, name, 1)
	acq := watch(w, model.EvAcquired)
	rc, tc, err := AttachReplay(w)
	require.NoError(t, err)
	w.Sim.SetSink(sinks{rc, tc})
	end := sim.Time(w.Config.Duration)
	for {
		if at, ok := w.Sim.NextAt(); !ok || at > end || !w.Sim.Step() {
			break
		}
		require.NoError(t, w.Sim.Err())
		rc.AfterEvent()
	}
	require.NoError(t, w.Sim.RunUntil(end))
	w.Oracle.Finish(end)
	rp := rc.Finish(tc, name, 1)
	require.NoError(t, rc.Undecoded(tc), "every record the replay reads decodes")
	return rp, acq
}

// TestReplayOfGCPause: each step of gc-pause's replay is a line of its narration; each
// command a node ran points at the message that carried it, paired with its reply; and the
// state after client2's acquisition shows it holding the validity it computed, its key on
// every node.
func TestReplayOfGCPause(t *testing.T) {
	rp, acq := replay(t, "gc-pause")
	ls := lines(t, "gc-pause")
	require.Len(t, rp.Steps, len(ls))
	for i, st := range rp.Steps {
		assert.Equal(t, ls[i].Text, st.Text)
		assert.Equal(t, ls[i].Actor, st.Actor)
		require.Less(t, st.State, len(rp.States))
	}

	var requests int
	for _, st := range rp.Steps {
		if st.Kind != "commands" || !strings.HasPrefix(st.Actor, "redis") {
			continue
		}
		require.GreaterOrEqual(t, st.Msg, 0, st.Text)
		m := rp.Messages[st.Msg]
		assert.Equal(t, "request", m.Kind)
		assert.Equal(t, st.Actor, m.To)
		assert.Equal(t, st.Peers[0], m.From)
		assert.True(t, strings.HasPrefix(st.Text, m.Text+" → "), "%q runs %q", st.Text, m.Text)
		require.GreaterOrEqual(t, m.Pair, 0, "every command of this run was answered")
		reply := rp.Messages[m.Pair]
		assert.Equal(t, "reply", reply.Kind)
		assert.Equal(t, [2]string{m.To, m.From}, [2]string{reply.From, reply.To})
		assert.Equal(t, st.Msg, reply.Pair)
		assert.True(t, strings.HasSuffix(st.Text, " → "+reply.Text), "%q answered %q", st.Text, reply.Text)
		assert.LessOrEqual(t, m.SentNs, m.AtNs)
		requests++
	}
	assert.Positive(t, requests)

	i := -1
	for k, st := range rp.Steps {
		if st.Actor == "client2" && strings.HasPrefix(st.Text, "acquired ") {
			i = k
		}
	}
	require.GreaterOrEqual(t, i, 0)
	s := rp.States[rp.Steps[i].State]
	c2 := s.Clients[1]
	assert.Equal(t, "holding", c2.Status)
	assert.Equal(t, acq.lck[1].validity.Nanoseconds(), c2.ValidNs, "the validity it computed, none of it spent yet")
	assert.True(t, s.Clients[0].Paused)
	for _, n := range s.Nodes {
		require.Len(t, n.Keys, 1)
		assert.Equal(t, 1, n.Keys[0].Client)
		assert.LessOrEqual(t, n.Keys[0].PTTLMs, int64(1000), "at most the TTL")
	}
}

// TestReplayReportsRecordsItCannotDecode: a delivery without its message makes no arrow,
// shows as an undecoded line, and is the replay's error.
func TestReplayReportsRecordsItCannotDecode(t *testing.T) {
	w := scenarioWorld(t, "gc-pause", 1)
	rc, tc, err := AttachReplay(w)
	require.NoError(t, err)
	rc.Record(&sim.Record{At: sim.Time(time.Millisecond), Actor: network.Actor, Kind: network.RecDeliver,
		Fields: []sim.Field{sim.Str("from", "client1"), sim.Str("to", "redis1"), sim.Int("id", 1), sim.Dur("latency", 0)}})
	rc.AfterEvent()
	rp := rc.Finish(tc, "gc-pause", 1)
	assert.Empty(t, rp.Messages)
	require.Len(t, rp.Steps, 1)
	assert.Equal(t, "??", rp.Steps[0].Marker)
	assert.ErrorContains(t, rc.Undecoded(tc), `no field "msg"`)
}
