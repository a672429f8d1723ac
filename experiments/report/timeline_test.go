package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/sim"
)

// timeline runs a built-in scenario for seed 1 collecting its timeline.
func timeline(t *testing.T, name string) (*Timeline, *clientEvents) {
	t.Helper()
	w := scenarioWorld(t, name, 1)
	acq := watch(w, model.EvAcquired)
	tc := AttachTimeline(w)
	runWorld(t, w, tc)
	require.NoError(t, tc.Undecoded(), "every record the timeline reads decodes")
	return tc.Finish(name, 1), acq
}

// TestTimelineOfGCPause: gc-pause's seed-1 timeline draws each client's attempts, the
// validity it computed, client1's pause, the writes with the two stale ones, and on each
// node client1's key until it expired, then client2's until its release deleted it.
func TestTimelineOfGCPause(t *testing.T) {
	tl, acq := timeline(t, "gc-pause")
	require.Len(t, tl.Clients, 2)
	c1, c2 := tl.Clients[0], tl.Clients[1]
	require.Len(t, acq.evs, 2)

	require.Len(t, c1.Attempts, 1)
	assert.Equal(t, Attempt{Span: Span{From: 0, To: acq.at[0].Duration()}, OKs: 5, Won: true, Reason: "none"}, c1.Attempts[0])
	assert.Equal(t, []Span{{From: acq.at[0].Duration(), To: acq.evs[0].ValidUntil.Duration()}}, c1.Validity,
		"from the acquisition to the deadline the client computed, in true time")
	assert.Equal(t, []Span{{From: 100 * time.Millisecond, To: 1600 * time.Millisecond}}, c1.Pauses)
	require.Len(t, c1.Writes, 3)
	assert.False(t, c1.Writes[0].Stale)
	for _, w := range c1.Writes[1:] {
		assert.True(t, w.Arrived && w.Accepted && w.Stale, "written after the pause, when client2 held the lock")
		assert.Equal(t, 1600*time.Millisecond, w.Sent)
	}

	require.Len(t, c2.Attempts, 7)
	for _, a := range c2.Attempts[:6] {
		assert.Equal(t, "no-quorum", a.Reason)
		assert.False(t, a.Won)
		assert.Zero(t, a.OKs, "client1's keys were on every node")
	}
	assert.True(t, c2.Attempts[6].Won)
	assert.Equal(t, acq.at[1].Duration(), c2.Attempts[6].To)
	require.Len(t, c2.Writes, 2)
	assert.False(t, c2.Writes[0].Stale || c2.Writes[1].Stale)

	require.Len(t, tl.Nodes, 5)
	for _, n := range tl.Nodes {
		require.Len(t, n.Keys, 2, n.Name)
		assert.Equal(t, 0, n.Keys[0].Client)
		assert.Equal(t, KeyExpired, n.Keys[0].Ended)
		assert.Less(t, n.Keys[0].To, c2.Attempts[6].From, "client2 won once client1's keys had expired")
		assert.Equal(t, 1, n.Keys[1].Client)
		assert.Equal(t, KeyDeleted, n.Keys[1].Ended, "client2's release deleted it")
		assert.Empty(t, n.Down)
	}
	assert.Len(t, tl.Violations, 3)
}

// TestTimelineRestartWithItsKeys: under aof-always, redis3's crash loses its key and its
// restart 10 ms later loads it back from the AOF: the restart mark says so, from the
// restart record.
func TestTimelineRestartWithItsKeys(t *testing.T) {
	tl, _ := timeline(t, "aof-always")
	n := tl.Nodes[2]
	assert.Equal(t, []Mark{{At: 110 * time.Millisecond, Kind: MarkCrash, Text: "crash"},
		{At: 120 * time.Millisecond, Kind: MarkRestart, Text: "restart, 1 key"}}, n.Marks)
	assert.Equal(t, []Span{{From: 110 * time.Millisecond, To: 120 * time.Millisecond}}, n.Down)
	require.GreaterOrEqual(t, len(n.Keys), 2)
	assert.Equal(t, KeyLost, n.Keys[0].Ended)
	assert.Equal(t, 120*time.Millisecond, n.Keys[1].From)
	assert.Equal(t, n.Keys[0].Value, n.Keys[1].Value, "the same key, back from the disk")
}

// TestTimelineFailoverMarksThePromotedNode: the failover record names the node promoted;
// only that node's lane gets the mark.
func TestTimelineFailoverMarksThePromotedNode(t *testing.T) {
	tl, _ := timeline(t, "failover-race")
	require.Len(t, tl.Nodes, 2)
	assert.Equal(t, []string{MarkCrash}, markKinds(tl.Nodes[0]))
	assert.Equal(t, []string{MarkFailover}, markKinds(tl.Nodes[1]))
}

func markKinds(n NodeLane) []string {
	var out []string
	for _, m := range n.Marks {
		out = append(out, m.Kind)
	}
	return out
}

// TestTimelineReportsRecordsItCannotDecode: a restart record without its keys makes no
// mark (never "restart, 0 keys") and is kept as the timeline's error; the node's down span
// still ends there.
func TestTimelineReportsRecordsItCannotDecode(t *testing.T) {
	w := scenarioWorld(t, "gc-pause", 1)
	tc := AttachTimeline(w)
	tc.Record(&sim.Record{At: sim.Time(time.Millisecond), Actor: "redis1", Kind: redis.FaultCrash.String(),
		Fields: []sim.Field{sim.Int("keys", 0), sim.Int("dropped", 0), sim.Int("lost_writes", 0)}})
	tc.Record(&sim.Record{At: sim.Time(2 * time.Millisecond), Actor: "redis1", Kind: redis.RecRestart})
	tc.Record(&sim.Record{At: sim.Time(3 * time.Millisecond), Actor: "redis1", Kind: redis.RecFailover})
	assert.EqualError(t, tc.Undecoded(), `trace record "restart" of redis1 at 2ms: no field "keys"`)
	n := tc.tl.Nodes[0]
	assert.Equal(t, []string{MarkCrash}, markKinds(n))
	assert.Equal(t, []Span{{From: time.Millisecond, To: 2 * time.Millisecond}}, n.Down)
}
