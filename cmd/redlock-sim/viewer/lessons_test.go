package viewer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/cmd/redlock-sim/viewer"
)

// TestLessonPlan holds docs/teaching.md's lesson plan to what the viewer shows: each
// lesson's story, the instant it says to step to, and the verdict of each what-if.
func TestLessonPlan(t *testing.T) {
	srv, err := viewer.New(nil)
	require.NoError(t, err)
	run := func(scenario string, set ...string) *viewer.RunResponse {
		t.Helper()
		out, err := srv.Run(context.Background(), viewer.RunRequest{Scenario: scenario, Seed: 1, Set: set})
		require.NoError(t, err, "%s %v", scenario, set)
		return out
	}
	safe := func(r *viewer.RunResponse) bool { return r.Record.Safety.LockSafe() }
	at := func(r *viewer.RunResponse, ns int64) int { // the cursor at a time: the last step at or before it
		i := 0
		for j, s := range r.Replay.Steps {
			if s.AtNs <= ns {
				i = j
			}
		}
		return i
	}

	// 1. gc-pause: at the first violation (1.214 s) client1 is paused past its deadline and
	// every node holds client2's key; pause=500ms is safe; fencing=one keeps the resource safe.
	gc := run("gc-pause")
	first := -1
	for i, s := range gc.Replay.Steps {
		if s.Violation == 0 {
			first = i
			break
		}
	}
	require.GreaterOrEqual(t, first, 0)
	assert.Equal(t, int64(1214), gc.Replay.Steps[first].AtNs/1e6)
	st := gc.Replay.States[gc.Replay.Steps[first].State]
	assert.True(t, st.Clients[0].Paused)
	assert.Negative(t, st.Clients[0].ValidNs)
	for _, n := range st.Nodes {
		require.Len(t, n.Keys, 1)
		assert.Equal(t, 1, n.Keys[0].Client)
	}
	assert.True(t, safe(run("gc-pause", "pause=500ms")))
	fenced := run("gc-pause", "fencing=one")
	assert.False(t, fenced.Record.Safety.LockSafe())
	assert.True(t, fenced.Record.Safety.ResourceSafe())
	assert.Equal(t, int64(2), fenced.Record.Safety.FencedWritesRejected)

	// 2. clock-jump: redis3's clock jumps 2 s at 0.150 s; two holders at 0.300 s; a 1 s
	// jump is safe and a 1.5 s one is not.
	cj := run("clock-jump")
	var jumped bool
	for _, m := range cj.Replay.Timeline.Nodes[2].Marks {
		jumped = jumped || (m.Kind == "clock-jump" && m.At.Milliseconds() == 150 && m.Text == "clock +2s")
	}
	assert.True(t, jumped, "redis3's jump at 150 ms")
	assert.Equal(t, 0.3, cj.Record.Violations[0].StartS)
	after := cj.Replay.States[cj.Replay.Steps[at(cj, 300e6)].State]
	before := cj.Replay.States[0]
	assert.InDelta(t, 2e9, float64(after.Nodes[2].WallNs-before.Nodes[2].WallNs-(cj.Replay.Steps[at(cj, 300e6)].AtNs-cj.Replay.Steps[0].AtNs)), 1e6, "the clock column reads +2000 ms")
	assert.True(t, safe(run("clock-jump", "jump=1s")))
	assert.False(t, safe(run("clock-jump", "jump=1500ms")))

	// 3. restart-no-persistence: redis3 crashes at 0.110 s and restarts at 0.120 s with no
	// keys; at 0.300 s it holds client2's key while client1 believes in its lock.
	rn := run("restart-no-persistence")
	n3 := rn.Replay.Timeline.Nodes[2]
	require.NotEmpty(t, n3.Down)
	assert.Equal(t, [2]int64{110, 120}, [2]int64{n3.Down[0].From.Milliseconds(), n3.Down[0].To.Milliseconds()})
	var restart string
	for _, m := range n3.Marks {
		if m.Kind == "restart" {
			restart = m.Text
		}
	}
	assert.Equal(t, "restart, 0 keys", restart)
	s300 := rn.Replay.States[rn.Replay.Steps[at(rn, 300e6+999e3)].State]
	require.Len(t, s300.Nodes[2].Keys, 1)
	assert.Equal(t, 1, s300.Nodes[2].Keys[0].Client)
	assert.Positive(t, s300.Clients[0].ValidNs)
	assert.False(t, safe(rn))
	assert.True(t, safe(run("restart-no-persistence", "down=2100ms")))
	assert.True(t, safe(run("restart-no-persistence", "persistence=aof-always")))

	// 4. split-brain-no-jitter: 10 split-brain rounds; 2 with 1 ms of jitter, 1 with 100 ms.
	assert.Equal(t, int64(10), int64(run("split-brain-no-jitter").Record.Liveness.SplitBrainRounds))
	assert.Equal(t, int64(2), int64(run("split-brain-no-jitter", "retry_jitter=1ms").Record.Liveness.SplitBrainRounds))
	assert.Equal(t, int64(1), int64(run("split-brain-no-jitter", "retry_jitter=100ms").Record.Liveness.SplitBrainRounds))
	assert.True(t, strings.Contains(run("split-brain-no-jitter").Scenario.Story, "lockstep"))

	// 5. restart-no-persistence told with node-redlock 4.2.0: safe, because nobody acquires
	// (it waits for every server, and two are cut off); node-redlock 5, which ends an
	// attempt once a quorum voted, is unsafe again. redsync is unsafe too: its context of
	// 0.05 × ttl ends go-redis's wait for a connection to the cut-off servers.
	nr := run("restart-no-persistence", "client=node-redlock")
	assert.True(t, safe(nr))
	assert.Equal(t, int64(0), nr.Record.Liveness.Acquired)
	assert.False(t, safe(run("restart-no-persistence", "client=node-redlock-5")))
	assert.False(t, safe(run("restart-no-persistence", "client=redsync")))

	// 6. Redlock or ZooKeeper? zk-gc-pause: at the first violation (5.004 s) client1 is
	// paused, zk3 leads and has expired client1's session at 5.000 s, client2's attempt
	// waited on client1's node; client1's unfenced write at 11.031 s is accepted, stale;
	// with fence_token = czxid it is refused, its czxid older; a 12s session outlives the
	// pause, a 15s pause outlives it again, and the czxid still refuses the late writes.
	zg := run("zk-gc-pause")
	assert.Equal(t, []string{"session 3s", "zk_tick_time 1s", "on_suspended carry-on", "fence_token none", "recipe curator"}, zg.Replay.Timeline.Lock.Settings)
	first = -1
	for i, s := range zg.Replay.Steps {
		if s.Violation == 0 {
			first = i
			break
		}
	}
	require.GreaterOrEqual(t, first, 0)
	assert.Equal(t, int64(5004), zg.Replay.Steps[first].AtNs/1e6)
	st = zg.Replay.States[zg.Replay.Steps[first].State]
	assert.True(t, st.Clients[0].Paused)
	assert.Equal(t, []string{"follower", "follower", "leader"}, []string{st.Nodes[0].Role, st.Nodes[1].Role, st.Nodes[2].Role})
	var expired []string
	for _, m := range zg.Replay.Timeline.Nodes[2].Marks {
		if m.Kind == "session-expired" {
			expired = append(expired, fmt.Sprintf("%s at %d ms", m.Text, m.At.Milliseconds()))
		}
	}
	assert.Equal(t, []string{"client1's session expired at 5000 ms"}, expired)
	assert.Equal(t, "node 1, waited on 0 (client1)", zg.Replay.Timeline.Clients[1].Attempts[0].Text)
	require.GreaterOrEqual(t, len(zg.Record.Violations), 3)
	assert.Equal(t, "stale_write", zg.Record.Violations[2].Kind)
	assert.InDelta(t, 11.031, zg.Record.Violations[2].StartS, 0.0005, "client1's late write at 11.031 s is a stale write")
	fz := run("zk-gc-pause", "fence_token=czxid")
	assert.False(t, safe(fz))
	assert.True(t, fz.Record.Safety.ResourceSafe())
	var refused []string
	for _, w := range fz.Replay.Timeline.Clients[0].Writes {
		if w.Arrived && !w.Accepted {
			refused = append(refused, fmt.Sprintf("%s at %.3f s", fz.Replay.Timeline.Lock.Token(w.Token), w.At.Seconds()))
		}
	}
	assert.Equal(t, []string{"0x100000004 at 11.031 s", "0x100000004 at 16.020 s"}, refused)
	assert.Equal(t, "0x100000006", fz.Replay.Timeline.Lock.Token(fz.Replay.Timeline.Clients[1].Writes[0].Token))
	assert.True(t, safe(run("zk-gc-pause", "fence_token=czxid", "session_timeout=12s")))
	long := run("zk-gc-pause", "fence_token=czxid", "session_timeout=12s", "pause=15s")
	assert.False(t, safe(long))
	assert.True(t, long.Record.Safety.ResourceSafe())
	assert.Equal(t, int64(2), long.Record.Safety.FencedWritesRejected)

	// zk-partitioned-holder: client1 works on until LOST at 6.120 s, after client2's
	// acquisition at 5.004 s; stopping at SUSPENDED (3.120 s) is safe.
	ph := run("zk-partitioned-holder")
	assert.False(t, safe(ph))
	assert.Equal(t, int64(6120), ph.Replay.Timeline.Clients[0].Work[0].To.Milliseconds())
	assert.Equal(t, int64(5004), ph.Replay.Timeline.Clients[1].Work[0].From.Milliseconds())
	stop := run("zk-partitioned-holder", "on_suspended=stop")
	assert.True(t, safe(stop))
	assert.Equal(t, int64(3120), stop.Replay.Timeline.Clients[0].Work[0].To.Milliseconds())
}
