package network

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// assertBalanced checks the conservation law of Stats.
func assertBalanced(t *testing.T, n *Net[int]) {
	t.Helper()
	st := n.Stats()
	assert.Equal(t, st.Sent+st.Duplicated, st.Delivered+st.Lost+st.Partitioned+st.Dropped+st.TimedOut+st.Reset+uint64(n.InFlight()), "%+v", st)
	assert.NoError(t, n.CheckConservation())
}

func TestLoss(t *testing.T) {
	for _, tc := range []struct {
		loss      float64
		want, tol float64
	}{{0, 1, 0}, {1, 0, 0}, {0.3, 0.7, 0.02}} {
		w := newWorld(t, 1, Config{Default: Link{Latency: Latency{Fast: dist.Uniform(ms, 5*ms)}, Loss: tc.loss}}, 2)
		for i := 0; i < 10000; i++ {
			w.n.Send(0, 1, i)
		}
		require.NoError(t, w.s.Run())
		got := float64(len(w.box[1].got)) / 10000
		assert.InDelta(t, tc.want, got, tc.tol, "loss %v", tc.loss)
		assert.EqualValues(t, 10000-len(w.box[1].got), w.n.Stats().Lost)
		assertBalanced(t, w.n)
		assert.Zero(t, w.n.InFlight())
	}
}

func TestDuplicationDeliversSomeMessagesTwiceWithTheirOwnLatency(t *testing.T) {
	w := newWorld(t, 1, Config{Default: Link{Latency: Latency{Fast: dist.Uniform(ms, 50*ms)}, Dup: 0.5}}, 2)
	for i := 0; i < 10000; i++ {
		w.n.Send(0, 1, i)
	}
	require.NoError(t, w.s.Run())
	st := w.n.Stats()
	assert.InDelta(t, 5000, float64(st.Duplicated), 200)
	assert.EqualValues(t, 10000+st.Duplicated, len(w.box[1].got))
	assertBalanced(t, w.n)

	at := map[int][]sim.Time{}
	for _, g := range w.box[1].got {
		at[g.msg] = append(at[g.msg], g.at)
	}
	twice, apart := 0, 0
	for _, times := range at {
		require.LessOrEqual(t, len(times), 2, "a message is duplicated at most once")
		if len(times) == 2 {
			twice++
			if times[0] != times[1] {
				apart++
			}
		}
	}
	assert.EqualValues(t, st.Duplicated, twice)
	assert.Greater(t, apart, twice*9/10, "a duplicate draws its own latency")
}

// inversions counts adjacent pairs received out of send order.
func inversions(msgs []int) int {
	k := 0
	for i := 1; i < len(msgs); i++ {
		if msgs[i] < msgs[i-1] {
			k++
		}
	}
	return k
}

func TestFIFOLinksNeverReorderOthersDo(t *testing.T) {
	cfg := Config{Default: Link{Latency: Latency{Fast: dist.Uniform(ms, 20*ms)}, Dup: 0.1}}
	w := newWorld(t, 1, cfg, 3)
	require.NoError(t, w.n.SetLink(0, 1, Link{Latency: Latency{Fast: dist.Uniform(ms, 20*ms)}, Dup: 0.1, FIFO: true}))
	for i := 0; i < 1000; i++ {
		w.until(t, time.Duration(i)*500*time.Microsecond)
		w.n.Send(0, 1, i)
		w.n.Send(0, 2, i)
	}
	require.NoError(t, w.s.Run())
	fifo, other := w.box[1].msgs(), w.box[2].msgs()
	assert.Zero(t, inversions(fifo), "FIFO link a→b")
	assert.True(t, slices.IsSorted(fifo))
	assert.Greater(t, inversions(other), 100, "random latency reorders a→c")
	assert.Greater(t, len(fifo), 1000, "duplicates also keep FIFO order")
}

func TestSetLinkOverridesOnlyThatLink(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 3)
	require.NoError(t, w.n.SetLink(0, 1, linkOf(dist.Constant(9*ms))))
	require.NoError(t, w.n.SetLink(0, 1, linkOf(dist.Constant(5*ms))), "a second override replaces the first")
	w.n.Send(0, 1, 1)
	w.n.Send(1, 0, 2)
	w.n.Send(0, 2, 3)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []got{{sim.Time(5 * ms), 0, 1, 1}}, w.box[1].got)
	assert.Equal(t, []got{{sim.Time(ms), 1, 0, 2}}, w.box[0].got)
	assert.Equal(t, []got{{sim.Time(ms), 0, 2, 3}}, w.box[2].got)
}

func TestEndpointsAddedLaterGetTheDefaultAndKeepOverrides(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms))}, 2)
	require.NoError(t, w.n.SetLink(1, 0, linkOf(dist.Constant(4*ms))))
	var boxes []*inbox
	for i := 0; i < 40; i++ { // forces the link matrix to grow several times
		b := &inbox{}
		_, err := w.n.AddEndpoint("late"+string(rune('A'+i)), b)
		require.NoError(t, err)
		boxes = append(boxes, b)
	}
	w.n.Send(1, 0, 1)
	w.n.Send(41, 40, 2)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []got{{sim.Time(4 * ms), 1, 0, 1}}, w.box[0].got)
	assert.Equal(t, []got{{sim.Time(ms), 41, 40, 2}}, boxes[38].got)
	assert.Equal(t, "lateB", w.n.Name(3))
	assert.Equal(t, "", w.n.Name(99))
	assert.Equal(t, 42, w.n.Endpoints())
}

// echo replies to every message, from within Receive.
type echo struct {
	n    *Net[int]
	seen int
}

func (e *echo) Receive(now sim.Time, from, to Endpoint, msg *int) {
	e.seen++
	if *msg > 0 {
		e.n.Send(to, from, *msg-1)
	}
}

func TestReceiversSendFromInsideDelivery(t *testing.T) {
	s, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	n, err := New[int](s, Config{Default: linkOf(dist.Uniform(ms, 2*ms))}, s.Source("net"))
	require.NoError(t, err)
	a, b := &echo{n: n}, &echo{n: n}
	_, err = n.AddEndpoint("a", a)
	require.NoError(t, err)
	_, err = n.AddEndpoint("b", b)
	require.NoError(t, err)
	n.Send(0, 1, 99)
	require.NoError(t, s.Run())
	assert.Equal(t, 100, a.seen+b.seen)
	assert.Equal(t, 2, len(n.slab), "a ping-pong needs two slots: the delivery's and the reply's")
}

// burst sends 64 messages from inside Receive, growing the slab under the message it is
// reading, and only then reads it.
type burst struct {
	n    *Net[int]
	read []int
}

func (b *burst) Receive(now sim.Time, from, to Endpoint, msg *int) {
	if *msg >= 1000 {
		return
	}
	for i := range 64 {
		b.n.Send(to, from, 1000+i)
	}
	b.read = append(b.read, *msg)
}

func TestMessageStaysValidWhileTheReceiverSends(t *testing.T) {
	s, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	n, err := New[int](s, Config{Default: linkOf(dist.Constant(ms))}, s.Source("net"))
	require.NoError(t, err)
	b := &burst{n: n}
	_, err = n.AddEndpoint("a", b)
	require.NoError(t, err)
	_, err = n.AddEndpoint("b", b)
	require.NoError(t, err)
	for i := range 3 {
		n.Send(0, 1, 7+i)
	}
	require.NoError(t, s.Run())
	assert.Equal(t, []int{7, 8, 9}, b.read)
	assert.Greater(t, cap(n.slab), 64, "the slab grew during the deliveries")
	assert.Zero(t, n.InFlight())
}

func TestInFlightLimitFailsTheRun(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(ms)), MaxInFlight: 3}, 2)
	for i := 0; i < 4; i++ {
		w.n.Send(0, 1, i)
	}
	err := w.s.Run()
	require.ErrorIs(t, err, ErrFull)
	assert.Contains(t, err.Error(), "max_in_flight 3")
}

func TestSendToAnUnknownEndpointFailsTheRun(t *testing.T) {
	w := newWorld(t, 1, Config{}, 2)
	w.n.Send(0, 7, 1)
	var pe *sim.ParamError
	require.ErrorAs(t, w.s.Run(), &pe)
	assert.Equal(t, "to", pe.Param)
	assert.Equal(t, 7, pe.Value)
	assert.Empty(t, w.box[1].got)
}

func TestTraceRecordsDeliveriesDropsAndDuplicates(t *testing.T) {
	w := newWorld(t, 1, Config{Default: linkOf(dist.Constant(2 * ms))}, 3)
	w.n.SetMessage(intParts, formatInt)
	require.NoError(t, w.n.SetLink(0, 1, Link{Latency: Latency{Fast: dist.Constant(2 * ms)}, Dup: 1}))
	require.NoError(t, w.n.SetLink(0, 2, Link{Loss: 1}))
	c := &collect{}
	w.s.SetSink(c)
	w.n.Send(0, 1, 7)
	w.n.Send(0, 2, 8)
	require.NoError(t, w.s.Run())
	assert.Equal(t, []string{
		"          0s net      dup from=a to=b id=1 msg=m7",
		"          0s net      drop from=a to=c id=2 msg=m8 reason=loss",
		"         2ms net      deliver from=a to=b id=1 msg=m7 latency=2ms",
		"         2ms net      deliver from=a to=b id=1 msg=m7 latency=2ms",
	}, c.lines)
	for _, r := range c.recs {
		assert.Equal(t, "net", r.Actor)
		assert.Equal(t, "a", field(r, "from"))
	}
}

func TestTraceHashDoesNotDependOnTheSink(t *testing.T) {
	run := func(sink sim.Sink) uint64 {
		w := newWorld(t, 3, Config{Default: Link{Latency: Latency{Fast: dist.Uniform(ms, 9*ms)}, Loss: 0.2, Dup: 0.2}}, 3)
		w.n.SetMessage(intParts, formatInt)
		w.s.SetSink(sink)
		w.sendEvery(t, 0, 1, 200, 0, ms)
		return w.s.TraceHash()
	}
	c := &collect{}
	assert.Equal(t, run(nil), run(c))
	assert.NotEmpty(t, c.lines)
}

func TestSendAndDeliverAllocateNothingWithoutASink(t *testing.T) {
	w := newWorld(t, 1, Config{Default: Link{Latency: Latency{Fast: dist.Uniform(ms, 3*ms)}, Loss: 0.1, Dup: 0.1}}, 2)
	w.n.SetMessage(intParts, formatInt)
	step := func() {
		w.n.Send(0, 1, 1)
		w.n.Send(1, 0, 2)
		for w.s.Pending() > 0 {
			w.s.Step()
		}
	}
	for i := 0; i < 100; i++ { // warm up: slab and heap at their final size
		step()
	}
	w.box[0].got, w.box[1].got = make([]got, 0, 1000), make([]got, 0, 1000)
	assert.Zero(t, testing.AllocsPerRun(200, step))
	assert.NotEmpty(t, w.box[0].got)
	assert.NotZero(t, w.s.TraceRecords())
}

// TestTwoNetworksShareASim checks the second network of a Sim, which finds the kernel's
// posted-event lane taken by the first and schedules its deliveries instead: both deliver
// every message, in the order their latencies give.
func TestTwoNetworksShareASim(t *testing.T) {
	s, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	var nets [2]*Net[int]
	var echoes [2][2]*echo
	for k := range nets {
		nets[k], err = New[int](s, Config{Default: linkOf(dist.Uniform(ms, 2*ms))}, s.Source("net"+string(rune('a'+k))))
		require.NoError(t, err)
		for e := range 2 {
			echoes[k][e] = &echo{n: nets[k]}
			_, err = nets[k].AddEndpoint(string(rune('a'+e)), echoes[k][e])
			require.NoError(t, err)
		}
	}
	assert.True(t, nets[0].posts)
	assert.False(t, nets[1].posts, "the Sim's poster is the first network")
	nets[0].Send(0, 1, 99)
	nets[1].Send(0, 1, 49)
	require.NoError(t, s.Run())
	assert.Equal(t, 100, echoes[0][0].seen+echoes[0][1].seen)
	assert.Equal(t, 50, echoes[1][0].seen+echoes[1][1].seen)
}
