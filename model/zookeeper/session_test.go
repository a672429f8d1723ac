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

// TestAnIdleSessionPingsEveryThirdOfItsTimeout: a client holding the lock sends nothing
// but pings, one per third of the negotiated timeout (readTimeout/2), and its session
// stays alive far past the timeout.
func TestAnIdleSessionPingsEveryThirdOfItsTimeout(t *testing.T) {
	w := newZKWorld(t, 1, 6*time.Second, time.Minute)
	w.run(30 * time.Second)
	var pings []string
	for _, l := range w.lines {
		if strings.Contains(l, "from=c1") && strings.HasSuffix(strings.Fields(l)[len(strings.Fields(l))-2], "ping") {
			pings = append(pings, l)
		}
	}
	// Acquired at about 1s; pings at 3s, 5s, … 29s.
	assert.Len(t, pings, 14, "one ping per 2s of idleness over 28s")
	assert.Contains(t, pings[0], " 3.0", "the first ping 2s after the create's reply")
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
	// The last word from the server was the reply to the ping just before the stall
	// (pings go every 2s from ~3s: the last at ≤ 5s).
	gap := st[1].at - (stalledAt - 2*time.Second)
	assert.GreaterOrEqual(t, st[1].at, stalledAt+2*time.Second, "not before readTimeout after the last word")
	assert.LessOrEqual(t, gap, 4*time.Second+10*time.Millisecond, "4s (two thirds of 6s) after the last word at the latest")
	assert.Equal(t, zk.StateSyncConnected, st[2].state)
	assert.Equal(t, first.session, st[2].session, "the same session, resumed on another server")
	assert.Less(t, st[2].at-st[1].at, 2*time.Second+10*time.Millisecond, "the next server within connectTimeout (6s/3) and the pause")
	srv.Thaw()
	_, ok := w.e.Server(w.e.Leader()).Tree().Get("/lock")
	assert.True(t, ok, "the holder's node survived the reconnect")
	require.Len(t, w.h.spans, 1)
	assert.Equal(t, sim.Never, w.h.spans[0].to, "the holder never heard it lost the lock")
}
