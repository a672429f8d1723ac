package experiments

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/report"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// This file runs Curator's InterProcessMutex (algorithm curator, the client=curator
// profile) on the simulated ZooKeeper ensemble, through nothing but its registration: the
// world, the client process, the oracle, the narration, the timeline and the replay are
// the ones every Redlock run uses.

// curatorScenario parses a scenario file's text.
func curatorScenario(t *testing.T, text string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.ParseFile("curator.yaml", []byte(text))
	require.NoError(t, err)
	return sc
}

// acquisitions returns each client's narrated acquisitions, in order: when and the line.
func acquisitions(rp *report.Replay) map[string][]report.Step {
	out := map[string][]report.Step{}
	for _, s := range rp.Steps {
		if strings.HasPrefix(s.Text, "acquired ") {
			out[s.Actor] = append(out[s.Actor], s)
		}
	}
	return out
}

// tokenOf returns the token= field of a narrated lock event (a czxid prints as the zxid
// ZooKeeper prints, 0x100000004).
func tokenOf(t *testing.T, text string) int64 {
	t.Helper()
	for _, f := range strings.Fields(text) {
		if v, ok := strings.CutPrefix(f, "token="); ok {
			n, err := strconv.ParseInt(v, 0, 64)
			require.NoError(t, err, text)
			return n
		}
	}
	t.Fatalf("no token in %q", text)
	return 0
}

// curatorInTurn is two Curator clients on one lock: client1 takes it and holds 1s,
// client2 asks 100ms later and waits on client1's node.
const curatorInTurn = `name: curator-in-turn
story: client2 waits on client1's node, and gets the lock when client1 deletes it
knobs: {client: curator, nodes: 3, clients: 2, max_cycles: 1, hold: const(1s), duration: 10s, fence_token: czxid}
start: {client1: 1s, client2: 1100ms}
`

// TestCuratorPassesTheLockInOrder: the second client's node is behind the first's, its
// watch on it fires when the first deletes it, and it holds the lock a few milliseconds
// after the release, with a larger czxid as its token; the oracle finds nothing wrong,
// and the narration speaks ZooKeeper.
func TestCuratorPassesTheLockInOrder(t *testing.T) {
	rp, rec, err := ReplayScenario(context.Background(), curatorScenario(t, curatorInTurn), nil, 1)
	require.NoError(t, err)
	acq := acquisitions(rp)
	require.Len(t, acq["client1"], 1)
	require.Len(t, acq["client2"], 1)
	first, second := acq["client1"][0], acq["client2"][0]
	released := firstStep(t, rp, "client1", "released")
	assert.Greater(t, second.AtNs, released.Nanoseconds(), "client2 holds only after client1's delete")
	assert.Less(t, time.Duration(second.AtNs)-released, 20*time.Millisecond, "woken by its watch, not by polling")
	assert.Less(t, tokenOf(t, first.Text), tokenOf(t, second.Text), "czxids grow")
	assert.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe(), "%v", rec.Safety)

	var watched, deleted bool
	for _, s := range rp.Steps {
		watched = watched || s.Actor != "client1" && strings.Contains(s.Text, "get /lock/_c_") && strings.HasSuffix(s.Text, " watch")
		deleted = deleted || s.Actor == "client2" && strings.Contains(s.Text, "WatchedEvent NodeDeleted /lock/_c_")
	}
	assert.True(t, watched, "client2 set a data watch on client1's node")
	assert.True(t, deleted, "client2 heard its predecessor's deletion")
}

// curatorGCPause is the story of Curator's tech note 10: client1 holds the lock and a GC
// pause of 10s stops it 10ms later, far past its 3s session; client2 waits. The ensemble
// expires client1's session and deletes its node, client2 gets the lock and writes; client1
// wakes, still working, and writes at the end of its hold before it learns it lost the
// lock.
const curatorGCPause = `name: curator-gc-pause
story: a GC pause outlives the holder's session
knobs: {client: curator, nodes: 3, clients: 2, max_cycles: 1, hold: const(15s), duration: 40s,
        zk_tick_time: 200ms, session_timeout: 3s, fence_token: TOKEN}
start: {client1: 1s, client2: 2s}
schedule:
  - on: {event: acquired, client: client1}
    after: 10ms
    pause_client: {client: client1, for: 10s}
`

// TestCuratorGCPauseOutlivesTheSession: both clients hold the lock at once (a validity
// overlap: client1 believes it holds until its session's expiry reaches it after the
// pause); with the czxid or the sequence as the fencing token the storage refuses
// client1's late write, without one (fence_token none, the default) the write lands.
func TestCuratorGCPauseOutlivesTheSession(t *testing.T) {
	for _, token := range []string{"czxid", "sequence", "none"} {
		t.Run(token, func(t *testing.T) {
			sc := curatorScenario(t, strings.Replace(curatorGCPause, "TOKEN", token, 1))
			rec, err := RunScenario(context.Background(), sc, nil, 1, Options{})
			require.NoError(t, err)
			assert.Positive(t, rec.Safety.ValidityOverlaps, "two holders: %v", rec.Safety)
			if token == "none" {
				assert.Positive(t, rec.Safety.StaleWritesAccepted, "without a token the late write lands: %v", rec.Safety)
				assert.Zero(t, rec.Safety.FencedWritesRejected, "%v", rec.Safety)
				return
			}
			assert.Zero(t, rec.Safety.StaleWritesAccepted, "the token fences the late write: %v", rec.Safety)
			assert.Positive(t, rec.Safety.FencedWritesRejected, "the late write is refused: %v", rec.Safety)
		})
	}
}

// curatorPartition isolates the holder from everything right after it acquired; client2
// waits. The ensemble keeps its quorum and expires client1's session.
const curatorPartition = `name: curator-partition
story: the holder is cut off; its session expires and the lock passes on
knobs: {client: curator, nodes: 3, clients: 2, max_cycles: 1, hold: const(20s), duration: 40s,
        zk_tick_time: 200ms, session_timeout: 3s, stop_at_deadline: true}
start: {client1: 1s, client2: 1100ms}
schedule:
  - on: {event: acquired, client: client1}
    isolate: {endpoint: client1}
`

// TestCuratorPartitionedHolder: an application that stops at SUSPENDED (two thirds of the
// session after it last heard from its server) has stopped before the ensemble expires
// its session and client2 takes the lock: no overlap. One that carries on until LOST (a
// whole session after SUSPENDED, Curator's own count, since it cannot reach a server to
// learn of the expiry) is still working when client2 gets the lock.
func TestCuratorPartitionedHolder(t *testing.T) {
	sc := curatorScenario(t, curatorPartition)
	for _, c := range []struct {
		onSuspended string
		overlap     bool
	}{{"stop", false}, {"carry-on", true}} {
		var trace bytes.Buffer
		rec, err := RunScenario(context.Background(), sc, []knobs.KV{{Name: "on_suspended", Value: c.onSuspended}}, 1,
			Options{Trace: &trace})
		require.NoError(t, err)
		assert.Equal(t, int64(2), rec.Liveness.Acquired, "%s: the lock passed on", c.onSuspended)
		lost := firstLine(trace.String(), "client1", "lost resource=lock")
		acquired := firstLine(trace.String(), "client2", "acquired resource=lock")
		require.NotEmpty(t, lost, "%s: client1 gave the lock up", c.onSuspended)
		require.NotEmpty(t, acquired, c.onSuspended)
		assert.Equal(t, c.overlap, lost > acquired, "%s: client1 gave up at %s, client2 acquired at %s", c.onSuspended, lost, acquired)
		if c.overlap {
			assert.Positive(t, rec.Safety.ValidityOverlaps, "%s: %v", c.onSuspended, rec.Safety)
			assert.Positive(t, rec.Safety.UsageOverlaps, "%s: %v", c.onSuspended, rec.Safety)
			continue
		}
		assert.True(t, rec.Safety.LockSafe(), "%s: %v", c.onSuspended, rec.Safety)
		assert.Zero(t, rec.Safety.UsageOverlaps, "%s: %v", c.onSuspended, rec.Safety)
	}
}

// TestCuratorServersSufferProcessFaults: a scenario's kill_node and pause_node reach a
// ZooKeeper server through its model.ServerProcess: the narration marks each fault, the
// timeline draws the server's lane with its down and paused spans, and the clients keep
// taking the lock from the two others.
func TestCuratorServersSufferProcessFaults(t *testing.T) {
	sc := curatorScenario(t, `name: curator-faults
story: a ZooKeeper server is killed, restarted, then stalled
knobs: {client: curator, nodes: 3, duration: 10s}
schedule:
  - at: 2s
    kill_node: {node: zk1, restart_after: 1s}
  - at: 5s
    pause_node: {node: zk2, for: 500ms}
`)
	var trace bytes.Buffer
	var tl report.Timeline
	rec, err := RunScenario(context.Background(), sc, nil, 1, Options{Trace: &trace, Timeline: &tl})
	require.NoError(t, err)
	assert.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe(), "%v", rec.Safety)
	assert.Greater(t, rec.Liveness.Acquired, int64(20))
	require.Len(t, tl.Nodes, 3)
	assert.Equal(t, "zk1", tl.Nodes[0].Name)
	assert.Equal(t, []report.Span{{From: 2 * time.Second, To: 3 * time.Second}}, tl.Nodes[0].Down)
	assert.Equal(t, []report.Span{{From: 5 * time.Second, To: 5500 * time.Millisecond}}, tl.Nodes[1].Paused)
	for _, l := range []string{" !! zk1 ", " !! zk2 "} {
		assert.True(t, strings.Contains(trace.String(), l), "the narration marks %q as a fault", l)
	}
}

// firstLine returns the time column of actor's first narrated line containing text, or "".
// The times are fixed-width for runs under 100s, so they compare as strings.
func firstLine(trace, actor, text string) string {
	for _, l := range strings.Split(trace, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[1] == actor && strings.Contains(l, text) {
			return fmt.Sprintf("%8s", f[0])
		}
	}
	return ""
}

// TestCuratorNaiveRecipeWakesTheHerd: five clients queue on one lock. With Curator's
// recipe each release wakes the one waiter behind it, so a client lists the children
// about once per acquisition; with the naive recipe every change of the children wakes
// every waiter, and each lists them again.
func TestCuratorNaiveRecipeWakesTheHerd(t *testing.T) {
	listings := func(recipe string) (perAcquire float64) {
		var trace bytes.Buffer
		rec, err := Run(context.Background(), "baseline", []knobs.KV{{Name: "client", Value: "curator"}, {Name: "nodes", Value: "3"},
			{Name: "clients", Value: "5"}, {Name: "duration", Value: "10s"}, {Name: "recipe", Value: recipe}}, 1, Options{Trace: &trace})
		require.NoError(t, err)
		require.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe(), "%s: %v", recipe, rec.Safety)
		require.Greater(t, rec.Liveness.Acquired, int64(20), recipe)
		n := 0
		for _, l := range strings.Split(trace.String(), "\n") {
			if strings.Contains(l, "← client") && strings.Contains(l, ": getChildren /lock") {
				n++
			}
		}
		t.Logf("%s: %d listings, %d acquired", recipe, n, rec.Liveness.Acquired)
		return float64(n) / float64(rec.Liveness.Acquired)
	}
	curator, naive := listings("curator"), listings("naive")
	assert.Less(t, curator, 2.5, "a listing per acquisition, and one more after a watch")
	assert.Greater(t, naive, 2*curator, "every waiter lists the children at every change")
}

// TestCuratorSurvivesShortPartitionsAsRedlockDoes: clients and servers cut off for a
// second at a time, one every five seconds on average, keep their ZooKeeper connections (a 10s session reads for
// 6.7s) and lose nothing on them: the kernel retransmits what the partition held, watch
// events included, so no waiter waits for ever on an event the network dropped, and the
// lock is taken about as often as Redlock takes it under the same faults (seed 1: 287
// times, Redlock 279; 19 when a partition dropped a watch event).
func TestCuratorSurvivesShortPartitionsAsRedlockDoes(t *testing.T) {
	sc := curatorScenario(t, `name: curator-short-partitions
story: one-second isolations of clients and servers, one every five seconds on average
knobs: {client: curator, nodes: 5, clients: 3, duration: 10m, hold: 'uniform(1s,3s)', release_after_ack: true,
  session_timeout: 10s, partition_rate: 0.2, partition_len: 1s}
`)
	rec, err := RunScenario(context.Background(), sc, nil, 1, Options{})
	require.NoError(t, err)
	assert.True(t, rec.Safety.LockSafe() && rec.Safety.ResourceSafe(), "%v", rec.Safety)
	assert.Greater(t, rec.Liveness.Acquired, int64(200), "%+v", rec.Liveness)
}
