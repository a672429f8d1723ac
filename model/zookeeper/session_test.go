package zookeeper

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
)

// TestPingIntervalIsClientCnxns: the idle time before a ping, for timeouts on each side
// of ClientCnxn's one-second margin and its ten-second cap.
func TestPingIntervalIsClientCnxns(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		2400 * time.Millisecond: 800 * time.Millisecond, // readTimeout 1.6s: its half
		4 * time.Second:         time.Second,            // 1.33s: a second
		6 * time.Second:         time.Second,            // 2s: a second
		12 * time.Second:        3 * time.Second,        // 4s: 4s less a second
		40 * time.Second:        10 * time.Second,       // 13.3s less a second, capped
	} {
		assert.Equal(t, want, PingAfter(timeout*2/3), "timeout %v", timeout)
	}
}

// TestAnIdleSessionPings: a client holding the lock sends nothing but pings, one a
// second for a 6s session (readTimeout/2 = 2s is within ClientCnxn's margin), and its
// session stays alive far past the timeout.
func TestAnIdleSessionPings(t *testing.T) {
	w := newZKWorld(t, 1, 6*time.Second, time.Minute)
	w.run(30 * time.Second)
	var pings []string
	for _, l := range w.lines {
		if strings.Contains(l, "from=c1") && strings.HasSuffix(strings.Fields(l)[len(strings.Fields(l))-2], "ping") {
			pings = append(pings, l)
		}
	}
	// Acquired at about 1s; pings at 2s, 3s, … 29s.
	assert.Len(t, pings, 28, "one ping per second of idleness over 28s")
	assert.Contains(t, pings[0], " 2.0", "the first ping a second after the create")
	require.Len(t, w.h.spans, 1)
	assert.Equal(t, sim.Never, w.h.spans[0].to, "still held")
	assert.Zero(t, w.e.Stats().Expired, "pings keep the session")
}

// TestASilentServerIsGivenUpAfterTwoThirdsOfTheTimeout: when the client's server stalls,
// the client hears nothing for readTimeout (4s of a 6s session), says Disconnected, and
// reconnects to another server with the same session, which says SyncConnected; the
// lock's node survives.
func TestASilentServerIsGivenUpAfterTwoThirdsOfTheTimeout(t *testing.T) {
	w := newZKWorld(t, 1, 6*time.Second, time.Minute)
	w.run(5 * time.Second)
	require.Len(t, w.states[0], 1)
	first := w.states[0][0]
	require.Equal(t, zk.StateSyncConnected, first.state)
	var srv *Server
	for _, sv := range w.e.Servers() {
		if _, ok := sv.conns[w.clients[0].Endpoint()]; ok {
			srv = sv
		}
	}
	require.NotNil(t, srv)
	stalledAt := w.now()
	srv.Stall()
	w.run(20 * time.Second)
	st := w.states[0]
	require.GreaterOrEqual(t, len(st), 3, "%v", st)
	assert.Equal(t, zk.StateDisconnected, st[1].state)
	// The last word from the server: the last message it delivered to c1 before the stall.
	var lastWord time.Duration
	for _, l := range w.grep("from="+srv.Name(), "to=c1") {
		at, err := time.ParseDuration(strings.Fields(l)[0])
		require.NoError(t, err)
		if at <= stalledAt {
			lastWord = at
		}
	}
	require.Positive(t, lastWord)
	assert.Equal(t, lastWord+4*time.Second+CleanupSleep, st[1].at, "readTimeout (two thirds of 6s) after the last word, and the cleanup sleep")
	assert.Equal(t, zk.StateSyncConnected, st[2].state)
	assert.Equal(t, first.session, st[2].session, "the same session, resumed on another server")
	assert.Less(t, st[2].at-st[1].at, 2*time.Second+10*time.Millisecond, "the next server within connectTimeout (6s/3) and the pause")
	srv.Thaw()
	_, ok := w.e.Server(w.e.Leader()).Tree().Get("/lock")
	assert.True(t, ok, "the holder's node survived the reconnect")
	require.Len(t, w.h.spans, 1)
	assert.Equal(t, sim.Never, w.h.spans[0].to, "the holder never heard it lost the lock")
}

// TestARequestInFlightFailsWithConnectionLoss: a create that waits on a stalled leader
// when the client's own server dies fails with CONNECTIONLOSS once the connection closes
// and the client's cleanup sleep (CleanupSleep, ClientCnxnSocketNIO.cleanup's 100ms) is
// over, and the recipe hears Disconnected then, not before. (The seeded world's shuffle
// puts the client on a follower, which the test requires before it stalls the leader.)
func TestARequestInFlightFailsWithConnectionLoss(t *testing.T) {
	w := newZKWorldWith(t, 1, 6*time.Second, true, time.Second, time.Second, nil)
	w.run(2500 * time.Millisecond) // acquired at ~1s, released at ~2s, next acquire at ~3s
	require.Len(t, w.h.spans, 1)
	ld := w.leader()
	require.Equal(t, "zk3", ld.Name())
	ld.Stall()
	w.run(3500 * time.Millisecond)
	var srv *Server
	for _, sv := range w.e.Servers() {
		if _, ok := sv.conns[w.clients[0].Endpoint()]; ok {
			srv = sv
		}
	}
	require.NotNil(t, srv)
	require.NotEqual(t, ld, srv, "the client's server is a follower, its create forwarded to the stalled leader")
	srv.Kill()
	eof := 3500*time.Millisecond + lat // the EOF's one hop after the kill
	before, codes := len(w.states[0]), len(*w.codes[0])
	w.run(eof + CleanupSleep - time.Millisecond)
	assert.Len(t, w.states[0], before, "no Disconnected during the cleanup sleep")
	assert.Len(t, *w.codes[0], codes, "the create in flight has not failed yet")
	w.run(eof + CleanupSleep + time.Millisecond)
	st := w.states[0]
	require.GreaterOrEqual(t, len(st), 2)
	assert.Equal(t, zk.StateDisconnected, st[len(st)-1].state)
	assert.Equal(t, eof+CleanupSleep, st[len(st)-1].at, "the cleanup sleep after the EOF")
	require.NotEmpty(t, *w.codes[0])
	assert.Equal(t, zk.ConnectionLoss, (*w.codes[0])[len(*w.codes[0])-1], "the create in flight failed")
	assert.Len(t, w.h.spans, 1, "no second hold")
}

// TestARequestSentDuringTheCleanupSleepFailsWithConnectionLoss: a release whose delete
// is sent while the connection is in its cleanup sleep (its server closed it, nobody has
// been told yet) is not kept for the next server: ClientCnxn.queuePacket puts it in the
// outgoing queue while the state is still alive, and cleanup() fails that queue with
// CONNECTIONLOSS when the sleep ends (ClientCnxn.java 1385–1401, 1675–1683).
func TestARequestSentDuringTheCleanupSleepFailsWithConnectionLoss(t *testing.T) {
	w := newZKWorldWith(t, 1, 6*time.Second, true, time.Second, time.Second, nil)
	w.run(1500 * time.Millisecond)
	require.Len(t, w.h.spans, 1)
	release := w.h.spans[0].from.Duration() + time.Second // the hold is 1s
	var srv *Server
	for _, sv := range w.e.Servers() {
		if _, ok := sv.conns[w.clients[0].Endpoint()]; ok {
			srv = sv
		}
	}
	require.NotNil(t, srv)
	kill := release - 50*time.Millisecond - lat // the EOF arrives 50ms before the release
	w.run(kill)
	srv.Kill()
	codes := len(*w.codes[0])
	w.run(release + 49*time.Millisecond)
	assert.Len(t, *w.codes[0], codes, "the delete waits in the outgoing queue during the sleep")
	w.run(release + 51*time.Millisecond)
	require.Len(t, *w.codes[0], codes+1, "the sleep is over: the delete failed")
	assert.Equal(t, zk.ConnectionLoss, (*w.codes[0])[codes], "not kept for the next connection")
	st := w.states[0]
	assert.Equal(t, zk.StateDisconnected, st[len(st)-1].state)
}

// TestAnUnseededSessionConnHoldsNoState: one NewSessionConn without a Rand, shared by two
// worlds in turn (as a registration's is by a sweep's runs), gives both the same run.
func TestAnUnseededSessionConnHoldsNoState(t *testing.T) {
	conn := NewSessionConn(SessionConfig{Timeout: 6 * time.Second})
	var runs [2][]string
	for i := range runs {
		w := newZKWorldWith(t, 3, 6*time.Second, false, 100*time.Millisecond, 50*time.Millisecond, conn)
		w.run(3 * time.Second)
		runs[i] = w.lines
	}
	assert.Equal(t, runs[0], runs[1])
}
