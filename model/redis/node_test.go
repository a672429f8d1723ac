package redis

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

var fast = network.Link{} // zero latency: replies at the instant of execution

func TestNodeAnswersThroughTheNetwork(t *testing.T) {
	w := newWorld(t, 1, network.Link{Latency: network.Latency{Fast: dist.Constant(ms)}})
	g := w.group(GroupConfig{Name: "redis1", Nodes: []NodeConfig{{PreloadScripts: true}}})
	c := w.client("client1")
	acq := c.at(0, g.Endpoint(), set("lock", "v1", resp.CondNX, 10*time.Second))
	again := c.at(5*ms, g.Endpoint(), set("lock", "v2", resp.CondNX, 10*time.Second))
	ttl := c.at(5*ms, g.Endpoint(), pttl("lock"))
	wrong := c.at(10*ms, g.Endpoint(), resp.EvalSHA(resp.ScriptRelease, "lock", "v2", 0))
	rel := c.at(10*ms, g.Endpoint(), resp.EvalSHA(resp.ScriptRelease, "lock", "v1", 0))
	after := c.at(20*ms, g.Endpoint(), get("lock"))
	w.run(time.Second)

	assert.Equal(t, resp.OK, c.reply(acq))
	assert.Equal(t, resp.Nil, c.reply(again))
	assert.Equal(t, resp.IntReply(9995), c.reply(ttl), "set at 1ms, read at 6ms on an ideal clock")
	assert.Equal(t, resp.IntReply(0), c.reply(wrong))
	assert.Equal(t, resp.IntReply(1), c.reply(rel))
	assert.Equal(t, resp.Nil, c.reply(after))
	assert.Equal(t, sim.Time(2*ms), c.replies[acq].at, "one network hop each way")
	assert.Len(t, w.grep("redis1", "exec", "cmd=SET lock v1 NX PX 10000", "reply=OK"), 1)
	assert.Len(t, w.grep("net", "deliver", "msg=req=5 EVALSHA <release> 1 lock v1"), 1)
	assert.EqualValues(t, 6, g.Node(0).Stats().Commands)
}

func TestServiceTimeServesOneCommandAtATime(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{ServiceTime: ms}}})
	c := w.client("c")
	var ids []uint64
	for i := range 4 {
		ids = append(ids, c.at(0, g.Endpoint(), set(fmt.Sprint("k", i), "v", 0, 0)))
	}
	w.run(time.Second)
	for i, id := range ids {
		assert.Equal(t, sim.Time(time.Duration(i+1)*ms), c.replies[id].at, "command %d", i)
	}
}

func TestQueueIsBounded(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{MaxQueue: 2}}})
	c := w.client("c")
	require.NoError(t, g.At(0, Fault{Kind: FaultPause, Node: 0, For: 10 * ms}))
	var ids []uint64
	for i := range 5 {
		ids = append(ids, c.at(ms, g.Endpoint(), set(fmt.Sprint("k", i), "v", 0, 0)))
	}
	w.run(time.Second)
	assert.True(t, c.answered(ids[0]))
	assert.True(t, c.answered(ids[1]))
	for _, id := range ids[2:] {
		assert.False(t, c.answered(id))
	}
	assert.EqualValues(t, 3, g.Node(0).Stats().DroppedFull)
	assert.Len(t, w.grep("r", "drop", "reason=queue-full"), 3)
}

func TestPauseKeepsTheQueueAndTheCommandInService(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{ServiceTime: ms}}})
	c := w.client("c")
	var ids []uint64
	for i := range 3 {
		ids = append(ids, c.at(0, g.Endpoint(), set(fmt.Sprint("k", i), "v", 0, 0)))
	}
	require.NoError(t, g.At(sim.Time(1500*time.Microsecond), Fault{Kind: FaultPause, Node: 0, Forever: true}))
	for i := 3; i < 5; i++ {
		ids = append(ids, c.at(2*ms, g.Endpoint(), set(fmt.Sprint("k", i), "v", 0, 0)))
	}
	require.NoError(t, g.At(sim.Time(10*ms), Fault{Kind: FaultResume, Node: 0}))
	w.run(5 * ms)
	assert.True(t, g.Node(0).Paused())
	assert.Equal(t, 4, g.Node(0).QueueLen(), "the command in service and three more wait")
	w.run(time.Second)
	want := []time.Duration{ms, 10*ms + 500*time.Microsecond, 11500 * time.Microsecond, 12500 * time.Microsecond, 13500 * time.Microsecond}
	for i, id := range ids {
		assert.Equal(t, sim.Time(want[i]), c.replies[id].at, "command %d", i)
		assert.Equal(t, resp.OK, c.replies[id].reply)
	}
}

// aofWorkload writes key i at 30ms + i*73ms for i < 40 (spacing chosen so no write
// coincides with a cron tick), crashes (or kills, or shuts down) the node at 2.9s and
// restarts it at 3s. It returns which keys survived and whether each write was
// acknowledged.
func aofWorkload(t *testing.T, p Persistence, how FaultKind) (w *world, g *Group, survived, acked []bool) {
	w = newWorld(t, 1, fast)
	g = w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: p}}})
	c := w.client("c")
	var ids []uint64
	for i := range 40 {
		ids = append(ids, c.at(30*ms+time.Duration(i)*73*ms, g.Endpoint(), set(fmt.Sprint("k", i), "v", 0, 0)))
	}
	require.NoError(t, g.At(sim.Time(2900*ms), Fault{Kind: how, Node: 0, For: 100 * ms}))
	w.run(3100 * ms)
	require.True(t, g.Node(0).Up())
	for i, id := range ids {
		_, _, ok := g.Node(0).Peek(fmt.Sprint("k", i))
		survived = append(survived, ok)
		acked = append(acked, c.answered(id) && c.reply(id) == resp.OK)
	}
	return w, g, survived, acked
}

func TestCrashUnderAOFEverySecLosesExactlyTheUnsyncedWindow(t *testing.T) {
	w, g, survived, acked := aofWorkload(t, PersistAOFEverySec, FaultCrash)
	// Fsync instants: the first write or cron tick in each new wall second. Second 1:
	// the cron at 1.030s (write 13 was at 0.979s, write 14 at 1.052s). Second 2: write 27
	// at 2.001s, fsynced right after it executed. Writes 28..39 (2.074s..2.877s) were
	// acknowledged but never fsynced.
	fsyncs := w.grep("r", "fsync")
	require.Len(t, fsyncs, 2, "%q", fsyncs)
	assert.Contains(t, fsyncs[0], "1.03s")
	assert.Contains(t, fsyncs[1], "2.001s")
	assert.Equal(t, sim.Time(2001*ms), g.Node(0).Stats().LastFsync)
	for i := range 40 {
		assert.True(t, acked[i], "write %d acknowledged", i)
		assert.Equal(t, i <= 27, survived[i], "key %d", i)
	}
	assert.EqualValues(t, 12, g.Node(0).Stats().LostWrites)
	assert.Len(t, w.grep("r", "crash", "lost_writes=12"), 1)
}

func TestAOFAlwaysLosesNothingAcknowledged(t *testing.T) {
	_, _, survived, acked := aofWorkload(t, PersistAOFAlways, FaultCrash)
	for i := range 40 {
		assert.True(t, acked[i])
		assert.True(t, survived[i], "key %d", i)
	}
}

func TestKillAndShutdownKeepWhatReachedTheAOF(t *testing.T) {
	for _, how := range []FaultKind{FaultKill, FaultShutdown} {
		_, g, survived, _ := aofWorkload(t, PersistAOFEverySec, how)
		assert.NotContains(t, survived, false, "%v keeps every acknowledged write", how)
		assert.Zero(t, g.Node(0).Stats().LostWrites)
	}
}

func TestNoPersistenceLosesEverything(t *testing.T) {
	for _, how := range []FaultKind{FaultCrash, FaultShutdown} {
		_, g, survived, _ := aofWorkload(t, PersistNone, how)
		assert.NotContains(t, survived, true, "%v", how)
		assert.Zero(t, g.Node(0).Engine().Len())
	}
}

func TestDelayedRestartLongerThanTheTTLLeavesNoKeyAlive(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: PersistAOFAlways}}})
	c := w.client("c")
	for i := range 10 {
		c.at(time.Duration(i)*10*ms, g.Endpoint(), set(fmt.Sprint("lock", i), "v", resp.CondNX, time.Duration(1+i)*time.Second))
	}
	c.at(0, g.Endpoint(), set("forever", "v", 0, 0))
	require.NoError(t, g.At(sim.Time(200*ms), Fault{Kind: FaultCrash, Node: 0, For: 11 * time.Second}))
	var after []uint64
	for i := range 10 {
		after = append(after, c.at(11300*ms, g.Endpoint(), set(fmt.Sprint("lock", i), "other", resp.CondNX, time.Second)))
	}
	w.run(12 * time.Second)
	for i, id := range after {
		assert.Equal(t, resp.OK, c.reply(id), "lock%d was free after the restart", i)
	}
	assert.Len(t, w.grep("r", "restart", "keys=1"), 1, "only the key without expiry came back")
}

func TestRestartKeepsAbsoluteExpiry(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: PersistAOFAlways}}})
	c := w.client("c")
	c.at(0, g.Endpoint(), set("lock", "v", resp.CondNX, 10*time.Second))
	require.NoError(t, g.At(sim.Time(time.Second), Fault{Kind: FaultCrash, Node: 0, For: 3 * time.Second}))
	ttl := c.at(5*time.Second, g.Endpoint(), pttl("lock"))
	w.run(6 * time.Second)
	assert.Equal(t, resp.IntReply(5000), c.reply(ttl), "time passed for the key while the node was down")
}

func TestWallClockJumpsMoveExpiry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		step     time.Duration
		aliveAt  time.Duration // true time of a read that finds the key
		goneAt   time.Duration // true time of a read that does not
		expireAt string        // the active-expiry record's true time
	}{
		// SET at 0.5s with PX 10000: wall expiry 10.5s. A +5s step at 1s brings the wall to
		// 10.5s at true 5.5s; a -5s step delays it to true 15.5s.
		{"forward", 5 * time.Second, 5400 * ms, 5600 * ms, "5.6s"},
		{"backward", -5 * time.Second, 15400 * ms, 15600 * ms, "15.6s"},
		{"none", 0, 10400 * ms, 10600 * ms, "10.6s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, 1, fast)
			g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Clock: clock.Config{Steps: []clock.Step{{At: sim.Time(time.Second), By: tc.step}}}}}})
			c := w.client("c")
			c.at(500*ms, g.Endpoint(), set("lock", "v", resp.CondNX, 10*time.Second))
			w.run(tc.aliveAt)
			val, _, ok := g.Node(0).Peek("lock")
			assert.True(t, ok)
			assert.Equal(t, "v", val)
			w.run(tc.goneAt)
			_, _, ok = g.Node(0).Peek("lock")
			assert.False(t, ok)
			assert.Zero(t, g.Node(0).Engine().Len(), "active expiry removed it without any access")
			exp := w.grep("r", "expire", "key=lock")
			require.Len(t, exp, 1)
			assert.Contains(t, exp[0], tc.expireAt)
		})
	}
}

func TestActiveExpiryBoundsMemory(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r"})
	c := w.client("c")
	for i := range 1000 {
		c.at(time.Duration(i)*ms, g.Endpoint(), set(fmt.Sprint("k", i), "v", 0, time.Duration(50+i%100)*ms))
	}
	w.run(500 * ms)
	assert.Less(t, g.Node(0).Engine().Len(), 250, "keys expire while others are written")
	require.NoError(t, w.s.Run(), "an idle node leaves no event behind")
	assert.Zero(t, g.Node(0).Engine().Len())
	assert.EqualValues(t, 1000, g.Node(0).Stats().Expired)
}

func TestScriptCacheIsEmptiedByRestart(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: PersistAOFAlways}}})
	c := w.client("c")
	rel := resp.EvalSHA(resp.ScriptRelease, "lock", "v", 0)
	evalRel := rel
	evalRel.Op = resp.OpEval
	c.at(0, g.Endpoint(), set("lock", "v", 0, 0))
	noscript := c.at(ms, g.Endpoint(), rel)
	eval := c.at(2*ms, g.Endpoint(), set("lock2", "v", 0, 0))
	c.at(3*ms, g.Endpoint(), evalRel) // loads the script (and releases lock)
	c.at(4*ms, g.Endpoint(), set("lock", "v", 0, 0))
	loaded := c.at(5*ms, g.Endpoint(), rel)
	require.NoError(t, g.At(sim.Time(10*ms), Fault{Kind: FaultCrash, Node: 0}))
	c.at(20*ms, g.Endpoint(), set("lock", "v", 0, 0))
	again := c.at(21*ms, g.Endpoint(), rel)
	w.run(time.Second)
	assert.Equal(t, errNoScript, c.reply(noscript))
	assert.Equal(t, resp.OK, c.reply(eval))
	assert.Equal(t, resp.IntReply(1), c.reply(loaded))
	assert.Equal(t, errNoScript, c.reply(again), "Redis 7 does not persist scripts")
}

func TestFailoverBeforeReplicationLosesTheKey(t *testing.T) {
	// The write reaches the replica 50ms after it executed at 10ms. A power loss at 20ms
	// loses it with the master; at 100ms it had arrived; a kill at 20ms lets the write
	// already sent reach the replica.
	for _, tc := range []struct {
		how     FaultKind
		crashAt time.Duration
		lost    bool
	}{{FaultCrash, 20 * ms, true}, {FaultCrash, 100 * ms, false}, {FaultKill, 20 * ms, false}} {
		t.Run(fmt.Sprint(tc.how, " at ", tc.crashAt), func(t *testing.T) {
			w := newWorld(t, 1, fast)
			g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}},
				ReplicationDelay: 50 * ms, FailoverAfter: time.Second})
			a, b := w.client("a"), w.client("b")
			first := a.at(10*ms, g.Endpoint(), set("lock", "a", resp.CondNX, 30*time.Second))
			require.NoError(t, g.At(sim.Time(tc.crashAt), Fault{Kind: tc.how, Node: CurrentMaster, Forever: true}))
			down := b.at(500*ms, g.Endpoint(), set("lock", "b", resp.CondNX, 30*time.Second))
			second := b.at(1200*ms, g.Endpoint(), set("lock", "b", resp.CondNX, 30*time.Second))
			w.run(2 * time.Second)

			assert.Equal(t, resp.OK, a.reply(first))
			if tc.how == FaultCrash {
				assert.False(t, b.answered(down), "nobody serves while the master is down, and its host is silent")
			} else {
				assert.Equal(t, resp.NoReply, b.reply(down), "a killed master's host refuses the connection")
			}
			assert.Same(t, g.Node(1), g.Master())
			assert.Len(t, w.grep("r", "failover", "from=r.0", "to=r.1"), 1)
			if tc.lost {
				assert.Equal(t, resp.OK, b.reply(second), "the lock is granted twice")
				assert.EqualValues(t, 1, g.Stats().LostWrites)
			} else {
				assert.Equal(t, resp.Nil, b.reply(second))
				assert.Zero(t, g.Stats().LostWrites)
			}
		})
	}
}

func TestOldMasterRejoinsAsReplica(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: PersistAOFAlways}, {}},
		ReplicationDelay: 5 * ms, FailoverAfter: 100 * ms})
	c := w.client("c")
	c.at(0, g.Endpoint(), set("a", "1", 0, 0))
	require.NoError(t, g.At(sim.Time(50*ms), Fault{Kind: FaultCrash, Node: 0, For: 500 * ms}))
	c.at(300*ms, g.Endpoint(), set("b", "2", 0, 0))
	w.run(time.Second)
	assert.False(t, g.Node(0).IsMaster())
	assert.True(t, g.Node(1).IsMaster())
	for _, n := range []*Node{g.Node(0), g.Node(1)} {
		for _, k := range []string{"a", "b"} {
			_, _, ok := n.Peek(k)
			assert.True(t, ok, "%s has %s", n.Name(), k)
		}
	}
	assert.Len(t, w.grep("r.0", "sync", "from=r.1", "keys=2"), 1)
}

func TestMasterRestartWithoutPersistenceEmptiesItsReplicas(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}}, ReplicationDelay: ms, FailoverAfter: time.Second})
	c := w.client("c")
	c.at(0, g.Endpoint(), set("a", "1", 0, 0))
	require.NoError(t, g.At(sim.Time(10*ms), Fault{Kind: FaultCrash, Node: 0, For: 100 * ms}))
	w.run(50 * ms)
	_, _, ok := g.Node(1).Peek("a")
	require.True(t, ok, "replicated before the crash")
	w.run(time.Second)
	assert.True(t, g.Node(0).IsMaster(), "back before the failover timeout")
	_, _, ok = g.Node(1).Peek("a")
	assert.False(t, ok, "the replica resynchronised from an empty master")
}

func TestReplicationBacklogOverflowForcesFullSync(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}}, ReplicationDelay: ms, MaxBacklog: 4})
	c := w.client("c")
	require.NoError(t, g.At(0, Fault{Kind: FaultPause, Node: 1, For: 100 * ms}))
	for i := range 10 {
		c.at(10*ms, g.Endpoint(), set(fmt.Sprint("k", i), "v", 0, 0))
	}
	w.run(time.Second)
	assert.Len(t, w.grep("r.1", "repl-overflow"), 1)
	assert.Len(t, w.grep("r.1", "sync", "keys=10"), 1)
	assert.Equal(t, 10, g.Node(1).Engine().Len())
}

func TestFencedStorage(t *testing.T) {
	w := newWorld(t, 1, fast)
	st, err := model.NewStorage(w.s, w.net, model.StorageConfig{Acknowledge: true})
	require.NoError(t, err)
	obs := &writeLog{}
	st.SetObserver(obs)
	c := w.client("c")
	to := st.Endpoint()
	ids := []uint64{
		c.send(1*ms, to, model.StorageWrite(0, "file", "a", 1, true)),
		c.send(2*ms, to, model.StorageWrite(0, "file", "b", 3, true)),
		c.send(3*ms, to, model.StorageWrite(0, "file", "stale", 2, true)),
		c.send(4*ms, to, model.StorageWrite(0, "file", "c", 3, true)),
		c.send(5*ms, to, model.StorageWrite(0, "file", "unsafe", 0, false)),
		c.send(6*ms, to, model.StorageWrite(0, "other", "d", 1, true)),
	}
	w.run(time.Second)
	want := []bool{true, true, false, true, true, true}
	for i, id := range ids {
		assert.Equal(t, want[i], c.reply(id).IsOK(), "write %d", i)
	}
	assert.Equal(t, "ERR stale fencing token 2 (highest seen 3)", c.reply(ids[2]).Str)
	assert.Equal(t, model.StorageStats{Accepted: 4, Rejected: 1, Unfenced: 1}, st.Stats())
	require.Len(t, st.Writes(), 6)
	assert.Equal(t, model.StoredWrite{At: sim.Time(3 * ms), From: c.ep, ReqID: ids[2], Resource: "file", Data: "stale", Token: 2, Fenced: true}, st.Writes()[2])
	assert.Equal(t, ids, obs.ids, "the observer sees every write, with the writer's request id")
	assert.Equal(t, want, obs.accepted)
	hi, ok := st.Highest("file")
	assert.True(t, ok)
	assert.EqualValues(t, 3, hi)
	assert.Len(t, w.grep("storage", "write", "resource=file", "token=2", "accepted=false"), 1)
}

func TestStorageWithoutAcknowledgementsSendsNothingBack(t *testing.T) {
	w := newWorld(t, 1, fast)
	st, err := model.NewStorage(w.s, w.net, model.StorageConfig{})
	require.NoError(t, err)
	c := w.client("c")
	ok := c.send(ms, st.Endpoint(), model.StorageWrite(0, "file", "a", 2, true))
	stale := c.send(2*ms, st.Endpoint(), model.StorageWrite(0, "file", "b", 1, true))
	w.run(time.Second)
	assert.False(t, c.answered(ok))
	assert.False(t, c.answered(stale))
	assert.Equal(t, model.StorageStats{Accepted: 1, Rejected: 1}, st.Stats(), "both writes are still judged")
	assert.Equal(t, network.Stats{Sent: 2, Delivered: 2}, w.net.Stats(), "two writes, no replies")
}

func TestBadParameters(t *testing.T) {
	w := newWorld(t, 1, fast)
	for _, tc := range []struct {
		cfg   GroupConfig
		param string
	}{
		{GroupConfig{}, "name"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{ServiceTime: -1}}}, "service_time"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{ServiceTime: 2 * time.Second}}}, "service_time"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{MaxQueue: -1}}}, "max_queue"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{MaxKeys: MaxKeysLimit + 1}}}, "max_keys"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{Persistence: 9}}}, "persistence"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{Hz: 501}}}, "hz"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{EpochMs: -1}}}, "epoch_ms"},
		{GroupConfig{Name: "a", Nodes: []NodeConfig{{Clock: clock.Config{DriftPPM: 1e6}}}}, "drift_ppm"},
		{GroupConfig{Name: "a", Nodes: make([]NodeConfig, MaxGroupNodes+1)}, "nodes"},
		{GroupConfig{Name: "a", ReplicationDelay: -ms}, "replication_delay"},
		{GroupConfig{Name: "a", ReplicationJitter: 2 * time.Hour}, "replication_jitter"},
		{GroupConfig{Name: "a", FailoverAfter: -1}, "failover_after"},
		{GroupConfig{Name: "a", MaxBacklog: -1}, "max_backlog"},
	} {
		_, err := NewGroup(w.s, w.net, tc.cfg)
		var pe *sim.ParamError
		require.Truef(t, errors.As(err, &pe), "%+v: %v", tc.cfg, err)
		assert.Contains(t, pe.Param, tc.param, "%v", err)
	}
	_, err := ParsePersistence("aof")
	assert.ErrorContains(t, err, "persistence = aof: out of range, allowed {none, aof-everysec, aof-always}")
	p, err := ParsePersistence("aof-everysec")
	assert.NoError(t, err)
	assert.Equal(t, PersistAOFEverySec, p)
	_, err = NewEngine(EngineConfig{MaxKeys: -1})
	assert.ErrorContains(t, err, "max_keys")
	_, err = model.NewStorage(w.s, w.net, model.StorageConfig{MaxResources: -1})
	assert.ErrorContains(t, err, "max_resources")

	g := w.group(GroupConfig{Name: "ok"})
	for _, f := range []Fault{{Kind: 0}, {Kind: FaultCrash, Node: 1}, {Kind: FaultCrash, Node: -2}, {Kind: FaultPause, For: -1}} {
		var pe *sim.ParamError
		assert.Truef(t, errors.As(g.At(0, f), &pe), "%+v", f)
	}
}

func TestKeyLimitAnswersOOM(t *testing.T) {
	e, err := NewEngine(EngineConfig{MaxKeys: 2})
	require.NoError(t, err)
	assert.Equal(t, resp.OK, e.Exec(set("a", "1", 0, 0), 0))
	assert.Equal(t, resp.OK, e.Exec(set("b", "1", 0, 0), 0))
	assert.Equal(t, errOOM, e.Exec(set("c", "1", 0, 0), 0))
	assert.Equal(t, errOOM, e.Exec(resp.Command{Op: resp.OpIncr, Key: "c"}, 0))
	assert.Equal(t, resp.OK, e.Exec(set("a", "2", 0, 0), 0), "overwriting is fine")
	assert.Equal(t, resp.IntReply(3), e.Exec(resp.Command{Op: resp.OpIncr, Key: "a"}, 0))
}

// TestDeterminism runs a busy world twice per seed: two groups with replication jitter,
// random latency and loss, clients with random commands, crashes and pauses.
func TestDeterminism(t *testing.T) {
	hash := func(seed uint64) uint64 {
		w := newWorld(t, seed, network.Link{Latency: network.Latency{Fast: dist.Uniform(100*time.Microsecond, 3*ms)}, Loss: 0.01})
		w.s.SetSink(nil)
		g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: PersistAOFEverySec, ServiceTime: 50 * time.Microsecond}, {}},
			ReplicationDelay: ms, ReplicationJitter: 2 * ms, FailoverAfter: 300 * ms})
		c := w.client("c")
		r := w.s.Rand("test-workload")
		for i := range 2000 {
			key := fmt.Sprint("k", r.IntN(5))
			at := time.Duration(i) * ms
			switch r.IntN(4) {
			case 0:
				c.at(at, g.Endpoint(), set(key, "v", resp.CondNX, time.Duration(10+r.IntN(200))*ms))
			case 1:
				c.at(at, g.Endpoint(), resp.EvalSHA(resp.ScriptRelease, key, "v", 0))
			case 2:
				c.at(at, g.Endpoint(), resp.Command{Op: resp.OpEval, Script: resp.ScriptExtend, Key: key, Value: "v", TTL: 100 * ms})
			default:
				c.at(at, g.Endpoint(), resp.Command{Op: resp.OpIncr, Key: "counter"})
			}
		}
		require.NoError(t, g.At(sim.Time(700*ms), Fault{Kind: FaultCrash, Node: CurrentMaster, For: 400 * ms}))
		require.NoError(t, g.At(sim.Time(1500*ms), Fault{Kind: FaultPause, Node: CurrentMaster, For: 100 * ms}))
		w.run(3 * time.Second)
		return w.s.TraceHash()
	}
	a := hash(1)
	assert.Equal(t, a, hash(1))
	assert.NotEqual(t, a, hash(2))
}

func TestFailoverWaitsForAReachableReplica(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}}, ReplicationDelay: ms, FailoverAfter: 500 * ms})
	require.NoError(t, g.At(0, Fault{Kind: FaultPause, Node: 1, For: 2 * time.Second}))
	require.NoError(t, g.At(sim.Time(100*ms), Fault{Kind: FaultCrash, Node: 0, Forever: true}))
	w.run(1500 * ms)
	assert.Same(t, g.Node(0), g.Master(), "the only replica is stalled")
	w.run(3 * time.Second)
	assert.Same(t, g.Node(1), g.Master())
	f := w.grep("r", "failover")
	require.Len(t, f, 1)
	assert.Contains(t, f[0], " 2s ")
}

// A backward wall-clock step stalls everysec fsyncs until the wall clock passes the
// second of the last fsync again, as Redis compares wall-clock seconds: writes made
// meanwhile stay unsynced far longer than a second.
func TestBackwardStepDelaysEverysecFsync(t *testing.T) {
	for _, step := range []time.Duration{0, -3 * time.Second} {
		w := newWorld(t, 1, fast)
		g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: PersistAOFEverySec,
			Clock: clock.Config{Steps: []clock.Step{{At: sim.Time(500 * ms), By: step}}}}}})
		c := w.client("c")
		c.at(100*ms, g.Endpoint(), set("a", "v", 0, 0))
		c.at(600*ms, g.Endpoint(), set("b", "v", 0, 0))
		require.NoError(t, g.At(sim.Time(3500*ms), Fault{Kind: FaultCrash, Node: 0}))
		w.run(4 * time.Second)
		if step == 0 {
			assert.EqualValues(t, 2, g.Node(0).Engine().Len(), "fsynced at 1.1s")
		} else {
			assert.Zero(t, g.Node(0).Engine().Len(), "no fsync before true 4s")
			assert.EqualValues(t, 2, g.Node(0).Stats().LostWrites)
		}
	}
}

func TestPausedReplicaResynchronisesWhenItResumes(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{Persistence: PersistAOFAlways}, {}}, ReplicationDelay: ms})
	c := w.client("c")
	c.at(0, g.Endpoint(), set("a", "1", 0, 0))
	require.NoError(t, g.At(sim.Time(10*ms), Fault{Kind: FaultPause, Node: 1, For: time.Second}))
	require.NoError(t, g.At(sim.Time(20*ms), Fault{Kind: FaultCrash, Node: 0, For: 10 * ms}))
	c.at(100*ms, g.Endpoint(), set("b", "2", 0, 0))
	w.run(500 * ms)
	assert.Empty(t, w.grep("r.1", "sync"), "a frozen replica loads nothing")
	w.run(2 * time.Second)
	assert.Len(t, w.grep("r.1", "sync", "from=r.0", "keys=2"), 1)
	assert.Equal(t, 2, g.Node(1).Engine().Len())
}

// writeLog is a StorageObserver that remembers what it was told.
type writeLog struct {
	ids      []uint64
	accepted []bool
}

func (l *writeLog) StorageWrite(_ sim.Time, w *model.StoredWrite) {
	l.ids = append(l.ids, w.ReqID)
	l.accepted = append(l.accepted, w.Accepted)
}

// TestForcedFailoverWhileTheMasterRuns: SENTINEL FAILOVER 20ms after a write that takes
// 50ms to replicate promotes a replica that never saw it; the old master, still running,
// resynchronises from the new one and loses the key too, so the lock is granted again at
// once. After the write has replicated, the same failover loses nothing.
func TestForcedFailoverWhileTheMasterRuns(t *testing.T) {
	for _, tc := range []struct {
		at   time.Duration
		lost bool
	}{{30 * ms, true}, {100 * ms, false}} {
		t.Run(fmt.Sprint("failover at ", tc.at), func(t *testing.T) {
			w := newWorld(t, 1, fast)
			g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}}, ReplicationDelay: 50 * ms, FailoverAfter: time.Second})
			a, b := w.client("a"), w.client("b")
			first := a.at(10*ms, g.Endpoint(), set("lock", "a", resp.CondNX, 30*time.Second))
			require.NoError(t, g.At(sim.Time(tc.at), Fault{Kind: FaultFailover}))
			second := b.at(200*ms, g.Endpoint(), set("lock", "b", resp.CondNX, 30*time.Second))
			w.run(time.Second)
			assert.Equal(t, resp.OK, a.reply(first))
			assert.Same(t, g.Node(1), g.Master(), "the replica was promoted")
			assert.True(t, g.Node(0).Up(), "the old master still runs, as a replica")
			if tc.lost {
				assert.Equal(t, resp.OK, b.reply(second), "the lock is granted twice")
				assert.EqualValues(t, 1, g.Stats().LostWrites)
			} else {
				assert.Equal(t, resp.Nil, b.reply(second))
			}
		})
	}
	w := newWorld(t, 1, fast)
	single := w.group(GroupConfig{Name: "s"})
	assert.Error(t, single.At(0, Fault{Kind: FaultFailover}), "nothing to promote")
}

// TestWait holds WAIT to Redis's: answered at once when enough replicas already have
// every write the master made before it, else when they have (a replica acknowledges a
// write as it applies it, 50ms after it here), or at its timeout with how many did; and
// on a master without replicas WAIT 0 answers 0 at once, WAIT 1 at its timeout.
func TestWait(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{}, {}}, ReplicationDelay: 50 * ms, FailoverAfter: time.Second})
	solo := w.group(GroupConfig{Name: "s", Nodes: []NodeConfig{{}}})
	c := w.client("c")
	c.at(10*ms, g.Endpoint(), set("lock", "a", resp.CondNX, 30*time.Second))
	synced := c.at(10*ms, g.Endpoint(), resp.Wait(1, time.Second))
	already := c.at(200*ms, g.Endpoint(), resp.Wait(1, time.Second))
	require.NoError(t, g.At(sim.Time(300*ms), Fault{Kind: FaultPause, Node: 1, For: 5 * time.Second}))
	c.at(400*ms, g.Endpoint(), set("other", "b", 0, 0))
	timedOut := c.at(400*ms, g.Endpoint(), resp.Wait(1, time.Second))
	zero := c.at(10*ms, solo.Endpoint(), resp.Wait(0, 0))
	none := c.at(10*ms, solo.Endpoint(), resp.Wait(1, 500*ms))
	w.run(3 * time.Second)

	assert.Equal(t, resp.IntReply(1), c.reply(synced))
	assert.InDelta(t, float64(60*ms), float64(c.replies[synced].at), float64(2*ms), "when the replica applied the SET")
	assert.Equal(t, resp.IntReply(1), c.reply(already))
	assert.InDelta(t, float64(200*ms), float64(c.replies[already].at), float64(2*ms), "at once")
	assert.Equal(t, resp.IntReply(0), c.reply(timedOut), "the paused replica never applied the second SET")
	assert.InDelta(t, float64(1400*ms), float64(c.replies[timedOut].at), float64(2*ms), "at the timeout")
	assert.Equal(t, resp.IntReply(0), c.reply(zero))
	assert.InDelta(t, float64(10*ms), float64(c.replies[zero].at), float64(2*ms))
	assert.Equal(t, resp.IntReply(0), c.reply(none))
	assert.InDelta(t, float64(510*ms), float64(c.replies[none].at), float64(2*ms))
	assert.Equal(t, []string{"WAIT", "1", "1000"}, resp.Wait(1, time.Second).Args())
}

// TestQueuedWaitIsAnsweredByTheGroup: a WAIT that waits its turn in a busy master's queue
// (a service time, a command before it) is still answered by the group, as one that finds
// the master idle is, not run by the engine, which has no WAIT.
func TestQueuedWaitIsAnsweredByTheGroup(t *testing.T) {
	w := newWorld(t, 1, fast)
	g := w.group(GroupConfig{Name: "r", Nodes: []NodeConfig{{ServiceTime: ms}, {ServiceTime: ms}},
		ReplicationDelay: 50 * ms, FailoverAfter: time.Second})
	c := w.client("c")
	c.at(10*ms, g.Endpoint(), set("lock", "a", resp.CondNX, 30*time.Second))
	queued := c.at(10*ms, g.Endpoint(), resp.Wait(1, time.Second))
	info := c.at(10*ms, g.Endpoint(), resp.Command{Op: resp.OpInfo})
	w.run(3 * time.Second)

	assert.Equal(t, resp.IntReply(1), c.reply(queued), "the replica applied the SET before the timeout")
	assert.InDelta(t, float64(61*ms), float64(c.replies[queued].at), float64(3*ms), "when the replica applied it")
	assert.Equal(t, resp.ReplyBulk, c.reply(info).Kind, "INFO replication, from the group")
	assert.Contains(t, c.reply(info).Str, "connected_slaves:1")
}
