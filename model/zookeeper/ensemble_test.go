package zookeeper

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

func follower(w *world, not ...int) int {
	for i, sv := range w.e.Servers() {
		if sv.Serving() && sv.Role() == "following" && !contains(not, i) {
			return i
		}
	}
	w.t.Fatal("no follower")
	return -1
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// TestFirstElectionTakesTheFinalizeWait: three servers that start together elect the one
// with the highest id (all logs empty) FinalizeWait after they start, and it serves once
// a quorum acknowledged NEWLEADER.
func TestFirstElectionTakesTheFinalizeWait(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	ld := w.leader()
	assert.Equal(t, "zk3", ld.Name(), "equal zxids: the highest id wins")
	assert.Equal(t, uint32(1), ld.Epoch())
	lines := w.grep("zk3", "established epoch=1")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "204ms", "200ms finalizeWait, then NEWLEADER (1ms), the follower's fsync (2ms) and its ACK (1ms)")
	w.settle()
	for _, sv := range w.e.Servers() {
		assert.True(t, sv.Serving(), sv.Name())
	}
}

// TestSessionTimeoutIsClampedToTwoAndTwentyTicks: a timeout asked below 2 ticks gets 2,
// above 20 gets 20 (ZooKeeperServer.processConnectRequest).
func TestSessionTimeoutIsClampedToTwoAndTwentyTicks(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c1")
	for asked, want := range map[time.Duration]time.Duration{
		time.Second: 4 * time.Second, 10 * time.Second: 10 * time.Second, 60 * time.Second: 40 * time.Second,
	} {
		r := c.call(0, zk.Connect(0, asked, 0))
		require.Equal(t, zk.OK, r.Code)
		assert.Equal(t, want, r.Timeout, "asked %v", asked)
	}
}

// TestACommittedWriteSurvivesAMinorityCrash: a create acknowledged to the client is on
// every server that serves after the leader (and then, separately, a follower) crashed.
func TestACommittedWriteSurvivesAMinorityCrash(t *testing.T) {
	for _, victim := range []string{"leader", "follower"} {
		t.Run(victim, func(t *testing.T) {
			w := newWorld(t, DefaultConfig())
			w.settle()
			ld := w.e.Leader()
			f := follower(w)
			c := w.client("c1")
			c.session(f, 10*time.Second)
			r := c.call(f, zk.Create("/a", "x", 0))
			require.Equal(t, zk.OK, r.Code)
			crashed := ld
			if victim == "follower" {
				crashed = f
			}
			w.e.Server(crashed).Crash()
			w.runFor(30 * time.Second)
			require.GreaterOrEqual(t, w.e.Leader(), 0, "the two left elect a leader")
			for i, sv := range w.e.Servers() {
				if i == crashed {
					continue
				}
				require.True(t, sv.Serving(), sv.Name())
				n, ok := sv.Tree().Get("/a")
				require.True(t, ok, "%s lost a committed write", sv.Name())
				assert.Equal(t, r.Int, n.Czxid)
			}
			w.e.Server(crashed).Restart()
			w.settle()
			_, ok := w.e.Server(crashed).Tree().Get("/a")
			assert.True(t, ok, "the restarted server syncs the write back")
		})
	}
}

// TestLeaderLossTakesAnElection: a leader that loses power is given up by its followers
// after syncLimit ticks of silence; a new one leads FinalizeWait later, in a higher
// epoch; meanwhile a client's request fails (its server closes the connection: EOF).
// A killed leader's followers see its connections reset and elect at once.
func TestLeaderLossTakesAnElection(t *testing.T) {
	for _, kill := range []bool{false, true} {
		w := newWorld(t, DefaultConfig())
		w.settle()
		old := w.leader()
		f := follower(w)
		c := w.client("c1")
		c.session(f, 10*time.Second)
		t0 := w.now()
		if kill {
			old.Kill()
		} else {
			old.Crash()
		}
		w.runFor(time.Millisecond)
		id := c.send(f, zk.Create("/b", "", 0))
		ld := w.leader()
		tEst := w.now()
		assert.NotEqual(t, old, ld)
		assert.Equal(t, uint32(2), ld.Epoch())
		silence := time.Duration(0)
		if !kill {
			silence = 5 * 2 * time.Second // syncLimit ticks
		}
		t.Logf("kill=%v election took %v", kill, tEst-t0)
		assert.GreaterOrEqual(t, tEst-t0, silence+200*time.Millisecond, "kill=%v", kill)
		assert.LessOrEqual(t, tEst-t0, silence+time.Second+200*time.Millisecond+50*time.Millisecond, "kill=%v", kill)
		_, replied := c.reply(id)
		if kill {
			assert.False(t, replied, "the follower was looking: no reply")
		}
		w.runFor(time.Second)
		if _, replied := c.reply(id); !replied {
			p := c.pushes()
			require.NotEmpty(t, p, "the request neither answered nor its connection closed")
			assert.Equal(t, zk.OpEOF, p[len(p)-1].m.Op)
		}
	}
}

// TestZxidsIncreaseAcrossLeaders: czxids of creates through several leader changes grow
// strictly, each epoch's in its epoch's high word, and every epoch had one leader.
func TestZxidsIncreaseAcrossLeaders(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c1")
	var czxids []int64
	for round := 0; round < 4; round++ {
		ld := w.leader()
		w.settle()
		f := follower(w)
		c.session(f, 10*time.Second)
		for k := 0; k < 3; k++ {
			r := c.call(f, zk.Create("/n", "", zk.FlagSequential))
			require.Equal(t, zk.OK, r.Code)
			czxids = append(czxids, r.Int)
			assert.Equal(t, ld.Epoch(), zk.Epoch(r.Int))
		}
		ld.Kill()
		w.runFor(time.Second)
		ld.Restart()
	}
	for i := 1; i < len(czxids); i++ {
		assert.Greater(t, czxids[i], czxids[i-1])
	}
	leaders := w.e.EpochLeaders()
	assert.Len(t, leaders, 5, "one leader for each of five epochs")
}

// TestSequentialNamesFromTheParentsCversion: sequential children are named from the
// parent's cversion as %010d, which a deletion also advances.
func TestSequentialNamesFromTheParentsCversion(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c1")
	c.session(0, 10*time.Second)
	require.Equal(t, zk.OK, c.call(0, zk.Create("/lock", "", 0)).Code)
	var names []string
	for k := 0; k < 3; k++ {
		r := c.call(0, zk.Create("/lock/_c_x-lock-", "", zk.FlagEphemeral|zk.FlagSequential))
		require.Equal(t, zk.OK, r.Code)
		names = append(names, r.Str)
	}
	assert.Equal(t, []string{"/lock/_c_x-lock-0000000000", "/lock/_c_x-lock-0000000001", "/lock/_c_x-lock-0000000002"}, names)
	require.Equal(t, zk.OK, c.call(0, zk.Delete(names[1], zk.AnyVersion)).Code)
	r := c.call(0, zk.Create("/lock/_c_y-lock-", "", zk.FlagEphemeral|zk.FlagSequential))
	assert.Equal(t, "/lock/_c_y-lock-0000000004", r.Str, "the delete advanced cversion to 4")
	ch := c.call(0, zk.Read(zk.OpGetChildren, "/lock", false))
	assert.Equal(t, []string{"_c_x-lock-0000000000", "_c_x-lock-0000000002", "_c_y-lock-0000000004"}, zk.ChildrenOf(nil, ch.Str2))
	assert.Equal(t, int64(5), ch.Int, "cversion")
	assert.Equal(t, zk.NodeExists, c.call(0, zk.Create("/lock", "", 0)).Code)
	assert.Equal(t, zk.NotEmpty, c.call(0, zk.Delete("/lock", zk.AnyVersion)).Code)
	assert.Equal(t, zk.NoChildrenForEphemerals, c.call(0, zk.Create(names[0]+"/x", "", 0)).Code)
	assert.Equal(t, zk.BadVersion, c.call(0, zk.Delete(names[0], 3)).Code)
}

// TestWatchesAreOneShotAndComeBeforeTheChangeIsVisible: a data watch fires once, on the
// first change only, and its event reaches the watcher before the reply to a read that
// shows the change.
func TestWatchesAreOneShotAndComeBeforeTheChangeIsVisible(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	f := follower(w)
	a, b := w.client("a"), w.client("b")
	a.session(f, 10*time.Second)
	b.session(f, 10*time.Second)
	require.Equal(t, zk.OK, b.call(f, zk.Create("/x", "", 0)).Code)
	r := a.call(f, zk.Read(zk.OpExists, "/x", true))
	require.Equal(t, zk.OK, r.Code)
	ch := a.call(f, zk.Read(zk.OpGetChildren, "/", true))
	require.Equal(t, zk.OK, ch.Code)

	// b deletes /x; a reads /x every millisecond meanwhile.
	del := b.send(f, zk.Delete("/x", zk.AnyVersion))
	var reads []uint64
	for k := 0; k < 20; k++ {
		reads = append(reads, a.send(f, zk.Read(zk.OpExists, "/x", false)))
		w.runFor(time.Millisecond)
	}
	w.runFor(10 * time.Millisecond)
	_, ok := b.reply(del)
	require.True(t, ok)
	firstGone, event := -1, -1
	for i, g := range a.got {
		if g.kind == 0 {
			continue
		}
		if g.m.Op == zk.OpWatch && g.m.Event == zk.EventNodeDeleted && event < 0 {
			event = i
		}
		if contains64(reads, g.id) && g.m.Code == zk.NoNode && firstGone < 0 {
			firstGone = i
		}
	}
	require.GreaterOrEqual(t, event, 0, "the watch fired")
	require.GreaterOrEqual(t, firstGone, 0)
	assert.Less(t, event, firstGone, "the event comes before the first read that sees the change")

	// One-shot: recreating and deleting /x fires nothing more on a's data watch, and the
	// root's child watch fired once (on the delete) of the three changes.
	require.Equal(t, zk.OK, b.call(f, zk.Create("/x", "", 0)).Code)
	require.Equal(t, zk.OK, b.call(f, zk.Delete("/x", zk.AnyVersion)).Code)
	var deleted, children int
	for _, p := range a.pushes() {
		switch p.m.Event {
		case zk.EventNodeDeleted:
			deleted++
		case zk.EventNodeChildrenChanged:
			children++
		}
	}
	assert.Equal(t, 1, deleted)
	assert.Equal(t, 1, children)
}

func contains64(xs []uint64, x uint64) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// TestAFollowerServesStaleReadsUntilSync: with the leader's link to a follower slow, a
// read there misses a write the leader already acknowledged; a sync first makes it see.
func TestAFollowerServesStaleReadsUntilSync(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	ld := w.e.Leader()
	f := follower(w)
	slow := network.Link{Latency: network.Latency{Fast: dist.Constant(50 * time.Millisecond)}, FIFO: true}
	require.NoError(t, w.net.SetLink(w.e.eps[ld], w.e.eps[f], slow))
	writer, reader := w.client("writer"), w.client("reader")
	writer.session(ld, 10*time.Second)
	reader.session(f, 10*time.Second)
	require.Equal(t, zk.OK, writer.call(ld, zk.Create("/y", "", 0)).Code)
	assert.Equal(t, zk.NoNode, reader.call(f, zk.Read(zk.OpExists, "/y", false)).Code, "stale: the commit is on its way")
	assert.Positive(t, w.e.Stats().StaleServed)
	require.Equal(t, zk.OK, writer.call(ld, zk.Create("/z", "", 0)).Code)
	s := reader.call(f, zk.Sync("/"))
	require.Equal(t, zk.OK, s.Code)
	assert.Equal(t, zk.OK, reader.call(f, zk.Read(zk.OpExists, "/z", false)).Code, "after sync the read sees the write")
}

// TestSessionExpiresAtItsBucket: the leader expires a silent session at
// roundToNextInterval(last touch + timeout) on its clock, and its ephemeral node goes in
// the closeSession transaction: it outlives the session by at most a tick.
func TestSessionExpiresAtItsBucket(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	ld := w.leader()
	c := w.client("c1")
	sid := c.session(w.e.Leader(), 6*time.Second)
	r := c.call(w.e.Leader(), zk.Create("/e", "", zk.FlagEphemeral))
	require.Equal(t, zk.OK, r.Code)
	last := w.s.Now() - sim.Time(lat) // the create's arrival touched it last
	want := roundToNextInterval(ld.Clock().Mono(last)+6*time.Second, 2*time.Second)
	got, ok := ld.SessionExpiry(sid)
	require.True(t, ok)
	assert.Equal(t, want, got)
	gone := time.Duration(0)
	for k := 0; k < 2000 && gone == 0; k++ {
		w.runFor(5 * time.Millisecond)
		if _, ok := ld.Tree().Get("/e"); !ok {
			gone = w.now()
		}
	}
	require.NotZero(t, gone)
	deadline := last.Duration() + 6*time.Second
	assert.GreaterOrEqual(t, gone, deadline, "never before the timeout")
	assert.LessOrEqual(t, gone, deadline+2*time.Second+10*time.Millisecond, "at most a tick bucket (and a commit) after")
	assert.Equal(t, uint64(1), w.e.Stats().Expired)
	assert.Equal(t, zk.SessionExpired, c.call(follower(w), zk.Connect(sid, 6*time.Second, 0)).Code)
}

// TestANewLeaderRetracksSessionsWithFreshTimeouts: a silent session's ephemeral node
// outlives its session by at most the election and a bucket: the new leader tracks every
// session anew from the moment it leads.
func TestANewLeaderRetracksSessionsWithFreshTimeouts(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	f := follower(w)
	c := w.client("c1")
	c.session(f, 4*time.Second)
	require.Equal(t, zk.OK, c.call(f, zk.Create("/e", "", zk.FlagEphemeral)).Code)
	last := w.now()
	w.leader().Kill()
	nl := w.leader()
	elected := w.now()
	gone := time.Duration(0)
	for k := 0; k < 4000 && gone == 0; k++ {
		w.runFor(5 * time.Millisecond)
		if _, ok := nl.Tree().Get("/e"); !ok {
			gone = w.now()
		}
	}
	require.NotZero(t, gone)
	assert.Greater(t, gone, last+4*time.Second+(elected-last), "fresh timeout from the new leader's start")
	assert.LessOrEqual(t, gone, elected+4*time.Second+2*time.Second+20*time.Millisecond)
}

// TestAReconnectWithinTheTimeoutKeepsTheSession: a client whose server died reconnects
// to another with its session id and keeps its ephemeral node.
func TestAReconnectWithinTheTimeoutKeepsTheSession(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	f := follower(w)
	c := w.client("c1")
	sid := c.session(f, 10*time.Second)
	r := c.call(f, zk.Create("/e", "", zk.FlagEphemeral))
	require.Equal(t, zk.OK, r.Code)
	w.e.Server(f).Kill()
	w.runFor(time.Second)
	other := w.e.Leader()
	re := c.call(other, zk.Connect(sid, 10*time.Second, r.Int))
	require.Equal(t, zk.OK, re.Code)
	assert.Equal(t, sid, re.Int)
	st := c.call(other, zk.Read(zk.OpExists, "/e", false))
	require.Equal(t, zk.OK, st.Code)
	assert.NotZero(t, st.Flags&zk.FlagMine, "still the session's own node")
}

// TestAServerBehindTheClientRefusesIt: a client that saw a zxid the server has not
// applied is refused (the connection closed) so that it tries another server.
func TestAServerBehindTheClientRefusesIt(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c1")
	sid := c.session(0, 10*time.Second)
	c.send(0, zk.Connect(sid, 10*time.Second, zk.Zxid(9, 1)))
	w.runFor(10 * time.Millisecond)
	p := c.pushes()
	require.NotEmpty(t, p)
	assert.Equal(t, zk.OpEOF, p[len(p)-1].m.Op)
	assert.Len(t, w.grep("refuse"), 1)
}

// TestAStalledLeaderLosesItsFollowers: a leader frozen past syncLimit ticks is given up;
// when it thaws it finds itself without a quorum and looks too.
func TestAStalledLeaderLosesItsFollowers(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	old := w.leader()
	old.Stall()
	w.runFor(12 * time.Second)
	nl := w.e.Leader()
	require.GreaterOrEqual(t, nl, 0)
	assert.NotEqual(t, old, w.e.Server(nl))
	old.Thaw()
	w.runFor(3 * time.Second)
	assert.Equal(t, "following", old.Role(), "the thawed leader rejoins as a follower")
	for e, l := range w.e.EpochLeaders() {
		assert.Contains(t, []int{0, 1, 2}, l, "epoch %d", e)
	}
}

func TestConfigRejectsBadValues(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Servers: 40}, "zk_servers"},
		{Config{TickTime: time.Microsecond}, "zk_tick"},
		{Config{MinSessionTimeout: 10 * time.Second, MaxSessionTimeout: 5 * time.Second}, "zk_max_session_timeout"},
		{Config{Fsync: -time.Second}, "zk_fsync"},
	} {
		_, err := c.cfg.withDefaults()
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestSessionExpiryRunsOnTheLeadersClock: with every server's clock drawn by ClockOf
// running 25% fast, the leader expires a silent 8 s session after about 6.4 s of true
// time (its buckets are ticks of its own clock), not 8 s.
func TestSessionExpiryRunsOnTheLeadersClock(t *testing.T) {
	cfg := DefaultConfig()
	var named []string
	cfg.ClockOf = func(name string) (clock.Config, error) {
		named = append(named, name)
		return clock.Config{DriftPPM: 250000}, nil
	}
	w := newWorld(t, cfg)
	assert.Equal(t, []string{"zk1", "zk2", "zk3"}, named, "every server's clock comes from ClockOf")
	w.settle()
	ld := w.leader()
	assert.InDelta(t, 250000, ld.Clock().Config().DriftPPM, 1)
	c := w.client("c1")
	c.session(w.e.Leader(), 8*time.Second)
	require.Equal(t, zk.OK, c.call(w.e.Leader(), zk.Create("/e", "", zk.FlagEphemeral)).Code)
	last := w.now()
	gone := time.Duration(0)
	for k := 0; k < 4000 && gone == 0; k++ {
		w.runFor(5 * time.Millisecond)
		if _, ok := ld.Tree().Get("/e"); !ok {
			gone = w.now()
		}
	}
	require.NotZero(t, gone)
	assert.Less(t, gone-last, 8*time.Second, "the fast leader's buckets come early in true time")
	assert.GreaterOrEqual(t, gone-last, 8*time.Second*4/5-10*time.Millisecond)
}

// TestSnapshotsBoundTheLogAndARestartReplaysThem: with a snapshot every 5 transactions,
// the ensemble forgets what every server has in a snapshot, and a restarted server
// rebuilds its tree from its snapshot and the log after it.
func TestSnapshotsBoundTheLogAndARestartReplaysThem(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SnapCount = 5
	w := newWorld(t, cfg)
	w.settle()
	c := w.client("c1")
	c.session(0, 10*time.Second)
	for k := 0; k < 30; k++ {
		require.Equal(t, zk.OK, c.call(0, zk.Create("/n", "", zk.FlagSequential)).Code)
	}
	w.runFor(100 * time.Millisecond)
	assert.Less(t, w.e.Transactions(), 12, "31 transactions, all but the last few forgotten")
	f := w.e.Server(follower(w))
	assert.Less(t, f.LogLen(), 5)
	before := f.Tree().Len()
	f.Crash()
	f.Restart()
	assert.Equal(t, before, f.Tree().Len(), "snapshot and log rebuild the tree")
	assert.Equal(t, 31, before, "the root and 30 nodes")
	w.settle()
	assert.Equal(t, before, f.Tree().Len())
}

// TestAWriteLeftOnAnOldConnectionIsRefused: once a session reconnected through another
// server, a write that reaches the leader through the old one is refused (SESSIONMOVED),
// and one through the new one goes through.
func TestAWriteLeftOnAnOldConnectionIsRefused(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	a := follower(w)
	b := follower(w, a)
	c := w.client("c1")
	sid := c.session(a, 10*time.Second)
	re := c.call(b, zk.Connect(sid, 10*time.Second, 0))
	require.Equal(t, zk.OK, re.Code)
	assert.Equal(t, zk.SessionMoved, c.call(a, zk.Create("/x", "", zk.FlagEphemeral)).Code)
	assert.Equal(t, zk.OK, c.call(b, zk.Create("/x", "", zk.FlagEphemeral)).Code)
}

// TestAPartitionedLeaderStepsDown: a leader cut off from both followers keeps its
// clients' reads (stale) but commits nothing; the followers elect a new leader after
// syncLimit ticks, and the old one gives up leading when its own check finds no quorum.
func TestAPartitionedLeaderStepsDown(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	old := w.leader()
	oi := w.e.Leader()
	c := w.client("c1")
	c.session(oi, 10*time.Second)
	var others []network.Endpoint
	for i, ep := range w.e.eps {
		if i != oi {
			others = append(others, ep)
		}
	}
	_, err := w.net.Split([]network.Endpoint{w.e.eps[oi], c.ep}, others)
	require.NoError(t, err)
	id := c.send(oi, zk.Create("/lost", "", 0))
	w.runFor(12 * time.Second)
	nl := w.e.Leader()
	require.GreaterOrEqual(t, nl, 0)
	assert.NotEqual(t, oi, nl, "the majority elected another leader")
	assert.Equal(t, "looking", old.Role(), "the cut-off leader gave up")
	_, replied := c.reply(id)
	assert.False(t, replied, "the write never committed")
	p := c.pushes()
	require.NotEmpty(t, p)
	assert.Equal(t, zk.OpEOF, p[len(p)-1].m.Op, "the old leader closed its clients' connections")
	_, ok := w.e.Server(nl).Tree().Get("/lost")
	assert.False(t, ok)
}

// TestAShutdownLosesNothingAndClosesConnections: a leader shut down while a write is
// being logged first writes it, then closes its connections, so its followers elect at
// once and the write, acknowledged by the other two, survives.
func TestAShutdownLosesNothingAndClosesConnections(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	ld := w.leader()
	f := follower(w)
	c := w.client("c1")
	c.session(f, 10*time.Second)
	id := c.send(f, zk.Create("/s", "", 0))
	w.runFor(2*lat + time.Millisecond) // forwarded, proposed, under the leader's fsync
	ld.Shutdown()
	lines := w.grep(ld.Name(), "stop how=shutdown")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "lost=0")
	nl := w.leader()
	assert.Less(t, w.now(), 3*time.Second, "no syncLimit wait: the connections were closed")
	w.runFor(time.Second)
	_, replied := c.reply(id)
	assert.False(t, replied, "the client's server went looking: its connection closed before the commit")
	p := c.pushes()
	require.NotEmpty(t, p)
	assert.Equal(t, zk.OpEOF, p[len(p)-1].m.Op)
	_, ok := nl.Tree().Get("/s")
	assert.True(t, ok, "yet the write the servers logged survives: a create can succeed after a connection loss")
}

// TestANewLeaderAckOutlivedByItsLeaderIsNotSent: a follower whose NEWLEADER
// acknowledgement is still under its fsync when it goes looking (its leader fell silent,
// or the sync was cut) has no leader to acknowledge to when the fsync ends: it sends
// nothing, and the run goes on (found by a partition sweep, where it indexed server −1).
func TestANewLeaderAckOutlivedByItsLeaderIsNotSent(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	f := w.e.Server(follower(w))
	now := w.s.Now()
	f.enqueueFsync(now, fsyncItem{zxid: zk.Zxid(f.acceptedEpoch, 0), newLeader: true})
	require.NoError(t, f.look(now, "test: the sync was cut"))
	sent := w.net.Stats().Sent
	w.runFor(DefaultConfig().Fsync + time.Millisecond)
	assert.Empty(t, f.fsyncing, "the fsync ended")
	assert.Equal(t, roleLooking, f.role)
	assert.Equal(t, sent, w.net.Stats().Sent, "no acknowledgement to anyone")
}
