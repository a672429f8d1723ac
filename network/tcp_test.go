package network

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

func TestRetransmissionDoublesFromTheMinimumUpToTheMaximum(t *testing.T) {
	at := func(k int) time.Duration { return time.Duration(Retransmission(0, k)) }
	assert.Equal(t, 200*ms, at(1))
	assert.Equal(t, 600*ms, at(2))
	assert.Equal(t, 1400*ms, at(3))
	assert.Equal(t, 102200*ms, at(9), "0.2·(2^9 − 1)")
	assert.Equal(t, 204600*ms, at(10), "0.2·(2^10 − 1): the last step under TCP_RTO_MAX")
	assert.Equal(t, 324600*ms, at(11), "then 120s each")
	assert.Equal(t, 924600*ms, at(TCPRetries2+1), "Linux's 924.6s timeout with tcp_retries2 = 15")
	assert.Equal(t, sim.Time(5*time.Second).Add(200*ms), Retransmission(sim.Time(5*time.Second), 1))
}

// tcpWorld is a world of three endpoints whose links a → b and b → a are TCP, with a 1ms
// latency and FIFO order.
func tcpWorld(t *testing.T, l Link) (*world, *collect) {
	t.Helper()
	w := newWorld(t, 1, Config{Default: l}, 3)
	require.NoError(t, w.n.SetTCP(0, 1))
	require.NoError(t, w.n.SetTCP(1, 0))
	w.n.SetMessage(intParts, formatInt)
	c := &collect{}
	w.s.SetSink(c)
	return w, c
}

func fifo(d time.Duration) Link { return Link{Latency: Latency{Fast: dist.Constant(d)}, FIFO: true} }

func TestATCPLinkHoldsWhatACutWouldDropAndDeliversItAtTheFirstRetransmissionAfterTheHeal(t *testing.T) {
	w, c := tcpWorld(t, fifo(ms))
	_, err := w.n.Apply(IsolateFault(1, time.Second))
	require.NoError(t, err)
	w.until(t, 100*ms)
	w.n.Send(0, 1, 7) // cut at send: retransmitted at 0.3s, 0.7s, 1.5s
	w.n.Send(2, 1, 8) // a datagram link: dropped
	require.NoError(t, w.s.Run())
	at := Retransmission(sim.Time(100*ms), 3).Add(ms)
	assert.Equal(t, []got{{at, 0, 1, 7}}, w.box[1].got, "delivered at 100ms + 0.2·(2^3 − 1)s + 1ms")
	assert.Equal(t, sim.Time(1501*ms), at)
	assert.Empty(t, w.box[2].got)
	st := w.n.Stats()
	assert.EqualValues(t, 1, st.Retransmitted)
	assert.EqualValues(t, 1, st.Partitioned, "the datagram link's")
	assert.EqualValues(t, 1, st.Delivered)
	assertBalanced(t, w.n)
	assert.Equal(t, []string{"partition", "hold", "drop", "heal", "deliver"}, c.kinds())
	assert.Equal(t, "partition", field(c.recs[1], "reason"))
	assert.Equal(t, "m7", field(c.recs[1], "msg"))
	assert.Equal(t, "1.401s", field(c.recs[4], "latency"), "the delivery shows the whole wait")
	x, err := DecodeMsgRecord(&c.recs[1])
	require.NoError(t, err)
	assert.Equal(t, MsgRecord{Kind: RecHold, From: "a", To: "b", ID: 1, Msg: x.Msg, Reason: "partition"}, x)
}

func TestATCPLinkHoldsAMessageCutAtArrivalAndRetransmitsItFromItsSendTime(t *testing.T) {
	w, _ := tcpWorld(t, fifo(10*ms))
	w.n.Send(0, 1, 1)
	w.until(t, 5*ms)
	id, err := w.n.Isolate(1)
	require.NoError(t, err)
	w.until(t, 1005*ms)
	w.n.Heal(id)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []got{{sim.Time(1410 * ms), 0, 1, 1}}, w.box[1].got, "retransmissions at 0.2s, 0.6s, 1.4s after the send; the third crosses")
	assertBalanced(t, w.n)
}

func TestATCPLinkKeepsSendOrderBehindAHeldMessage(t *testing.T) {
	w, c := tcpWorld(t, fifo(ms))
	_, err := w.n.Apply(IsolateFault(1, time.Second))
	require.NoError(t, err)
	w.until(t, 100*ms)
	w.n.Send(0, 1, 0) // held: goes again at 1.5s
	w.until(t, 900*ms)
	w.n.Send(0, 1, 1) // held: its own first retransmission (1.1s) would overtake
	w.until(t, 1100*ms)
	w.n.Send(0, 1, 2) // the link is up, but the backlog is not empty: queued
	w.n.Send(1, 0, 3) // the other direction flows
	w.until(t, 1200*ms)
	assert.Equal(t, []int{3}, w.box[0].msgs())
	assert.Empty(t, w.box[1].got)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []got{{sim.Time(1501 * ms), 0, 1, 0}, {sim.Time(1501 * ms), 0, 1, 1}, {sim.Time(1501 * ms), 0, 1, 2}}, w.box[1].got,
		"all at the head's retransmission, in send order")
	var reasons []string
	for _, r := range c.recs {
		if r.Kind == RecHold {
			reasons = append(reasons, field(r, "reason"))
		}
	}
	assert.Equal(t, []string{"partition", "partition", "queued"}, reasons)
	w.n.Send(0, 1, 4)
	require.NoError(t, w.s.Run())
	assert.Equal(t, sim.Time(1502*ms), w.box[1].got[3].at, "once the backlog went, the link is a plain one again")
	assertBalanced(t, w.n)
}

func TestAMessageArrivingAfterTheHealWaitsForAnEarlierOneHeldAtArrival(t *testing.T) {
	w, _ := tcpWorld(t, fifo(10*ms))
	w.n.Send(0, 1, 0) // arrives at 10ms: cut, held (retransmitted at 200ms)
	w.until(t, 4*ms)
	w.n.Send(0, 1, 9) // arrives at 14ms, after the heal: behind 0
	w.until(t, 5*ms)
	id, err := w.n.Isolate(1)
	require.NoError(t, err)
	w.n.Send(0, 1, 1) // held at send
	w.until(t, 12*ms)
	w.n.Heal(id)
	w.n.Send(0, 1, 2) // sent after the heal, behind the backlog
	require.NoError(t, w.s.Run())
	assert.Equal(t, []int{0, 9, 1, 2}, w.box[1].msgs())
	for _, g := range w.box[1].got {
		assert.Equal(t, sim.Time(210*ms), g.at)
	}
	assertBalanced(t, w.n)
}

func TestATCPLinkGivesUpAfterTheLastRetransmission(t *testing.T) {
	w, c := tcpWorld(t, fifo(ms))
	_, err := w.n.Isolate(1)
	require.NoError(t, err)
	w.n.Send(0, 1, 0)
	w.n.Send(0, 1, 1)
	w.until(t, 924*time.Second)
	assert.EqualValues(t, 2, w.n.InFlight(), "still held at the 15th retransmission")
	require.NoError(t, w.s.Run())
	assert.Empty(t, w.box[1].got)
	st := w.n.Stats()
	assert.EqualValues(t, 2, st.TimedOut)
	assert.Zero(t, w.n.InFlight())
	assertBalanced(t, w.n)
	last := c.recs[len(c.recs)-1]
	assert.Equal(t, RecDrop, last.Kind)
	assert.Equal(t, "retries", field(last, "reason"))
	assert.Equal(t, Retransmission(0, TCPRetries2+1), last.At)
	assert.False(t, w.n.Connected(0, 1))
	w.n.HealAll()
	w.n.Send(0, 1, 2)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []int{2}, w.box[1].msgs(), "the link forgot the dropped backlog")
}

func TestATCPLinkRetransmitsWhatLossLoses(t *testing.T) {
	l := fifo(ms)
	l.Loss = 0.5
	w, _ := tcpWorld(t, l)
	for i := range 50 {
		w.until(t, time.Duration(i)*10*ms)
		w.n.Send(0, 1, i)
		w.n.Send(0, 2, i)
	}
	require.NoError(t, w.s.Run())
	st := w.n.Stats()
	assert.Positive(t, st.Retransmitted)
	assert.Less(t, len(w.box[2].got), 40, "the datagram link loses about half")
	want := make([]int, 50)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, w.box[1].msgs(), "the TCP link delivers everything, in order")
	assertBalanced(t, w.n)
}

func TestResetDiscardsWhatATCPLinkHolds(t *testing.T) {
	w, _ := tcpWorld(t, fifo(ms))
	id, err := w.n.Isolate(1)
	require.NoError(t, err)
	w.n.Send(0, 1, 0)
	w.n.Send(0, 1, 1)
	assert.Equal(t, 2, w.n.Reset(0, 1))
	assert.Zero(t, w.n.Reset(0, 1))
	w.n.Heal(id)
	w.n.Send(0, 1, 2)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []got{{sim.Time(ms), 0, 1, 2}}, w.box[1].got, "the discarded messages never arrive, and the link flows")
	assert.EqualValues(t, 2, w.n.Stats().Reset)
	assertBalanced(t, w.n)
}

func TestSetTCPEndpointReachesEndpointsAddedLater(t *testing.T) {
	w := newWorld(t, 1, Config{Default: fifo(ms)}, 2)
	require.NoError(t, w.n.SetTCPEndpoint(0))
	box := &inbox{}
	c, err := w.n.AddEndpoint("c", box)
	require.NoError(t, err)
	_, err = w.n.Isolate(0)
	require.NoError(t, err)
	w.n.Send(c, 0, 1)
	w.n.Send(0, 1, 2)
	_, err = w.n.Block(1, c)
	require.NoError(t, err)
	w.n.Send(1, c, 3) // neither end is TCP: dropped
	w.n.HealAll()
	require.NoError(t, w.s.Run())
	assert.Equal(t, []int{1}, w.box[0].msgs())
	assert.Equal(t, []int{2}, w.box[1].msgs())
	assert.Empty(t, box.got)
	assert.EqualValues(t, 2, w.n.Stats().Retransmitted)
	assert.Error(t, w.n.SetTCPEndpoint(9))
	assert.Error(t, w.n.SetTCP(0, 9))
}

func TestSetLinkKeepsALinkTCPAndItsBacklog(t *testing.T) {
	w, _ := tcpWorld(t, fifo(ms))
	id, err := w.n.Isolate(1)
	require.NoError(t, err)
	w.n.Send(0, 1, 0)
	require.NoError(t, w.n.SetLink(0, 1, fifo(2*ms)))
	w.n.Heal(id)
	w.n.Send(0, 1, 1)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []got{{sim.Time(202 * ms), 0, 1, 0}, {sim.Time(202 * ms), 0, 1, 1}}, w.box[1].got)
}
