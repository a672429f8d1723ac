package zookeeper

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
)

// TestAWatchEventSentDuringAnIsolationArrivesAtTheRetransmissionAfterTheHeal: the
// waiter is cut off for a second while the holder releases; its server's kernel
// retransmits the NodeDeleted event (0.2s, then 0.6s after it was sent), the one after
// the heal crosses, the connection survives (its read timeout is 4s), and the waiter
// takes the lock.
func TestAWatchEventSentDuringAnIsolationArrivesAtTheRetransmissionAfterTheHeal(t *testing.T) {
	w := newZKWorldWith(t, 2, 6*time.Second, true, 2*time.Second, 10*time.Second, nil)
	w.run(2500 * time.Millisecond)
	require.Len(t, w.h.spans, 1)
	holder := w.h.spans[0].who
	waiter := w.clients[0]
	if waiter.Name() == holder {
		waiter = w.clients[1]
	}
	_, err := w.net.Apply(network.IsolateFault(waiter.Endpoint(), time.Second)) // 2.5s to 3.5s
	require.NoError(t, err)
	w.run(6 * time.Second)

	held := w.grep("hold", "to="+waiter.Name(), "WatchedEvent NodeDeleted /lock")
	require.Len(t, held, 1, "the event was held, not dropped:\n%s", strings.Join(w.lines, "\n"))
	assert.Contains(t, held[0], "reason=partition")
	delivered := w.grep("deliver", "to="+waiter.Name(), "WatchedEvent NodeDeleted /lock")
	require.Len(t, delivered, 1)
	assert.Contains(t, delivered[0], "latency=601ms", "sent at the release (about 3.0s): retransmitted at +0.2s (cut) and +0.6s (healed), plus the hop")
	at, err := time.ParseDuration(strings.Fields(delivered[0])[0])
	require.NoError(t, err)
	assert.Greater(t, at, 3500*time.Millisecond)
	assert.Empty(t, w.grep("drop", "to="+waiter.Name()), "nothing to the waiter was lost")

	require.Len(t, w.h.spans, 2, "the waiter acquired")
	assert.Equal(t, waiter.Name(), w.h.spans[1].who)
	took := w.h.spans[1].from.Duration() - at
	assert.Positive(t, took)
	assert.Less(t, took, 50*time.Millisecond, "its create's round trip through the ensemble, right after the event")
	for _, st := range w.states {
		assert.Equal(t, -1, indexOf(st, zk.StateDisconnected), "no connection was lost")
	}
}

// TestARequestOfAConnectionGivenUpIsNotExecutedAfterTheHeal: the client's create is held
// by its TCP link while the client is cut off; the client gives the server up (its read
// timeout) and closes the connection, which discards the create with it: after the heal
// it never reaches a server, and only the client's later create runs.
func TestARequestOfAConnectionGivenUpIsNotExecutedAfterTheHeal(t *testing.T) {
	w := newZKWorldWith(t, 1, 6*time.Second, true, 500*time.Millisecond, 3*time.Second, nil)
	w.run(4 * time.Second) // acquired at ~1s, released at ~1.5s; the next acquire at ~4.5s
	require.Len(t, w.h.spans, 1)
	c := w.clients[0]
	_, err := w.net.Apply(network.IsolateFault(c.Endpoint(), 10*time.Second)) // 4s to 14s
	require.NoError(t, err)
	w.run(30 * time.Second)

	held := w.grep("hold", "from=c1", "create -e /lock")
	require.NotEmpty(t, held, "the create was held:\n%s", strings.Join(w.lines, "\n"))
	id := field(held[0], "id")
	require.NotEmpty(t, id)
	reset := w.grep("drop", "from=c1", " id="+id+" ", "reason=reset")
	require.Len(t, reset, 1, "the client's close discarded it")
	at, err := time.ParseDuration(strings.Fields(reset[0])[0])
	require.NoError(t, err)
	assert.Less(t, at, 14*time.Second, "discarded before the heal")
	assert.Empty(t, w.grep("deliver", " id="+id+" "), "never delivered")
	assert.Contains(t, *w.codes[0], zk.ConnectionLoss, "the client counted it failed")
	assert.NotEmpty(t, w.grep("from=c1", "EOF"), "the client closed the connection with a FIN")
	require.Greater(t, len(w.h.spans), 1, "the client acquired again after the heal")
	assert.Greater(t, w.h.spans[1].from.Duration(), 14*time.Second)
}

// field returns the value of key=value in a trace line.
func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// TestAServerDiscardsWhatAClosedConnectionSends: a request and a connect of a connection
// older than the client's last are discarded (a TCP link held them after the client
// closed that connection); the FIN of the current one closes it at the server.
func TestAServerDiscardsWhatAClosedConnectionSends(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	c := w.client("c")
	var next uint64
	send := func(conn uint32, kind model.MsgKind, p lock.Payload) uint64 {
		next++
		w.net.Send(c.ep, w.e.eps[0], model.Message{Kind: kind, ReqID: next, Body: p, Conn: conn})
		w.runFor(20 * time.Millisecond)
		return next
	}
	connID := send(2, model.MsgCommand, zk.Connect(0, 6*time.Second, 0))
	r, ok := c.reply(connID)
	require.True(t, ok)
	require.Equal(t, zk.OK, r.Code)

	old := send(1, model.MsgCommand, zk.Read(zk.OpExists, "/", false))
	_, ok = c.reply(old)
	assert.False(t, ok, "a request of connection 1 is not served")
	late := send(1, model.MsgCommand, zk.Connect(0, 6*time.Second, 0))
	_, ok = c.reply(late)
	assert.False(t, ok, "nor a late connect of connection 1")
	assert.EqualValues(t, 2, w.e.Stats().Stale)
	cur := send(2, model.MsgCommand, zk.Read(zk.OpExists, "/", false))
	r, ok = c.reply(cur)
	require.True(t, ok, "connection 2 still serves")
	assert.Equal(t, zk.OK, r.Code)

	send(2, model.MsgPush, lock.Payload{Word: uint64(zk.OpEOF)})
	assert.Empty(t, w.e.Server(0).conns, "the FIN closed it")
	after := send(2, model.MsgCommand, zk.Read(zk.OpExists, "/", false))
	_, ok = c.reply(after)
	assert.False(t, ok)
	p := c.pushes()
	require.NotEmpty(t, p)
	assert.Equal(t, zk.OpEOF, p[len(p)-1].m.Op, "a request on the closed connection is reset")
}

// TestAQuorumPacketOfAnEarlierEpochIsDiscarded: a PROPOSAL a partition held on the link
// from an earlier epoch's leader is not taken for this epoch's (it would be out of order
// and send the follower looking).
func TestAQuorumPacketOfAnEarlierEpochIsDiscarded(t *testing.T) {
	w := newWorld(t, DefaultConfig())
	w.settle()
	ld := w.leader()
	f := w.e.Server((ld.idx + 1) % 3)
	require.Equal(t, "following", f.Role())
	epoch := ld.Epoch()
	w.net.Send(ld.ep, f.ep, model.Message{Kind: model.MsgCommand, Conn: epoch - 1,
		Body: lock.Payload{Word: uint64(zk.OpProposal), Int: zk.Zxid(epoch-1, 99)}})
	w.runFor(10 * time.Millisecond)
	assert.EqualValues(t, 1, w.e.Stats().StaleQuorum)
	assert.Equal(t, "following", f.Role())
	assert.True(t, f.Serving())
}
